"""torch.distributed inside compiled graphs, on 2 gloo ranks over loopback.

Until collectives are engine ops of their own, a graph holding one must be refused with an
error naming the op -- never run with the collective's output copied before its work is done
(which returned wrong numbers silently). The workaround the error names (a graph break around
the collective) must then give eager's numbers."""
import socket
import traceback

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp

WORLD = 2
TIMEOUT_S = 120


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _functional(x):
    y = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
    g = funcol.all_gather_tensor(y + 1, 0, dist.group.WORLD)
    return funcol.reduce_scatter_tensor(g * 3, "sum", 0, dist.group.WORLD)


def _inplace(x):
    y = x * 2
    dist.all_reduce(y)
    return y + 1


@torch.compiler.disable
def _all_reduce_outside(y):
    dist.all_reduce(y)
    return y


def _broken_around(x):
    y = _all_reduce_outside(x * 2)
    return torch.relu(y) + 1


def _expect_refused(fn, x, op_name):
    import torchair_ge
    compiled = torch.compile(fn, backend=torchair_ge.get_npu_backend(), dynamic=False)
    try:
        compiled(x)
    except Exception as e:  # Dynamo wraps the backend's error
        text = str(e)
        assert "collective" in text and op_name in text and "torch.compiler.disable" in text, text
        return
    raise AssertionError(f"{fn.__name__}: a collective in the graph was not refused")


def _rank_main(rank, port, errors):
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
        import torchair_ge
        torch.manual_seed(rank)
        x = torch.randn(4, 8)
        _expect_refused(_functional, x, "_c10d_functional.all_reduce")
        torch._dynamo.reset()
        _expect_refused(_inplace, x, "_c10d_functional")
        torch._dynamo.reset()
        compiled = torch.compile(_broken_around, backend=torchair_ge.get_npu_backend(), dynamic=False)
        torch.testing.assert_close(compiled(x), _broken_around(x))
        dist.barrier()
    except BaseException:
        errors.put(f"rank {rank}:\n{traceback.format_exc()}")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_collectives_in_a_graph_are_refused_and_a_graph_break_around_them_matches_eager():
    ctx = mp.get_context("spawn")
    errors = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank_main, args=(rank, port, errors)) for rank in range(WORLD)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(TIMEOUT_S)
    for p in procs:
        if p.is_alive():
            p.kill()
    found = [errors.get() for _ in range(errors.qsize())] if not errors.empty() else []
    assert not found, "\n".join(found)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
