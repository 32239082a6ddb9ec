"""torch.distributed inside compiled graphs, on 2 gloo ranks over loopback.

Every functional collective (and an in-graph in-place dist.all_reduce) converts to the engine's
Hcom ops and gives eager's numbers on every rank; none runs on the host-fallback engine (whose
copy of a collective's output before its work was done once returned wrong numbers silently).
A graph break around a collective also matches eager."""
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


def _functional(x, rank):
    y = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
    g = funcol.all_gather_tensor(y + 1, 0, dist.group.WORLD)
    r = funcol.reduce_scatter_tensor(g * 3, "sum", 0, dist.group.WORLD)
    b = funcol.broadcast(r - 1, 1, dist.group.WORLD)
    splits = [2, 6] if rank == 0 else [6, 2]  # rows to rank 0, rank 1 (and received from them)
    a = funcol.all_to_all_single(torch.cat([b, b]), splits, splits, dist.group.WORLD)
    stats = [funcol.all_reduce(x, op, dist.group.WORLD) for op in ("max", "min", "avg", "product")]
    scattered = funcol.reduce_scatter_tensor(x, "sum", 0, dist.group.WORLD)  # of the graph input itself
    return y, g, r, b, a, *stats, scattered


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


def _expect_native(fn, x, *args, ops):
    import torchair_ge
    backend = torchair_ge.get_npu_backend()
    before = x.clone()
    got = torch.compile(fn, backend=backend, dynamic=False)(x, *args)
    torch.testing.assert_close(x, before, rtol=0, atol=0)  # no collective wrote its input
    torch.testing.assert_close(got, fn(x, *args))
    (report,) = backend.compiler.reports
    assert not report["fallback_ops"], report["fallback_ops"]
    assert all(report["ir_ops"].get(op) for op in ops), report["ir_ops"]


def _rank_main(rank, port, errors):
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
        import torchair_ge
        torch.manual_seed(rank)
        x = torch.randn(4, 8)
        _expect_native(_functional, x, rank, ops=("HcomAllReduce", "HcomAllGather", "HcomReduceScatter",
                                                  "HcomBroadcast", "HcomAllToAllV"))
        torch._dynamo.reset()
        _expect_native(_inplace, x, ops=("HcomAllReduce",))
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
def test_collectives_in_a_graph_run_natively_and_match_eager_on_every_rank():
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


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_the_distributed_example_runs_under_torchrun():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
                             f"--master_port={_free_port()}", os.path.join(root, "examples", "distributed.py")],
                            capture_output=True, text=True, timeout=TIMEOUT_S, cwd=root)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "equal to the whole block" in result.stdout
