"""torch.distributed inside compiled graphs, on 2 gloo ranks over loopback.

Every functional collective (and an in-graph in-place dist.all_reduce) converts to the engine's
Hcom ops and gives eager's numbers on every rank; none runs on the host-fallback engine (whose
copy of a collective's output before its work was done once returned wrong numbers silently).
A graph break around a collective also matches eager."""
import copy
import os
import socket
import traceback

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

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


def _rank_main(rank):
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


def _spawn(rank_fn):
    """Runs rank_fn(rank) on WORLD gloo ranks over loopback; asserts none raised or hung."""
    ctx = mp.get_context("spawn")
    errors = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank_entry, args=(rank_fn, rank, port, errors)) for rank in range(WORLD)]
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


def _rank_entry(rank_fn, rank, port, errors):
    passed = False
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
        torch.set_num_threads(1)  # two ranks on two cores
        rank_fn(rank)
        dist.barrier()
        passed = True
    except BaseException:
        errors.put(f"rank {rank}:\n{traceback.format_exc()}")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    if passed:
        # Skip the interpreter's teardown: in one CI run, ranks whose whole body had passed (no
        # error queued, the group destroyed) aborted while exiting ("terminate called without an
        # active exception", exit -6), in a test that had started no engine stream thread. What
        # this test checks is the body; the abort at exit is noted on issue 20, not understood.
        os._exit(0)


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_collectives_in_a_graph_run_natively_and_match_eager_on_every_rank():
    _spawn(_rank_main)


def _waits_across_graphs(rank):
    import torchair_ge
    group = dist.group.WORLD.group_name
    backend = torchair_ge.get_npu_backend()
    consume = torch.compile(lambda y: c10d_wait(y) * 2, backend=backend, dynamic=False)
    issue = torch.compile(lambda x: torch.ops._c10d_functional.all_reduce(x * 2, "sum", group), backend=backend,
                          dynamic=False)
    for trial in range(4):
        # Issued in eager (gloo works on it in the background, c10d registers the work), waited for
        # inside a compiled graph: the graph must not read it before the work is done. 4M floats
        # take long enough that reading early would see the unreduced values.
        x = torch.full((1 << 22,), float(rank + 1))
        y = torch.ops._c10d_functional.all_reduce(x, "sum", group)
        torch.testing.assert_close(consume(y), torch.full_like(x, 6.0), rtol=0, atol=0, msg=f"trial {trial}")
    # Issued in one compiled graph, waited for in another (and in eager).
    x = torch.full((8,), float(rank + 1))
    torch.testing.assert_close(consume(issue(x)), torch.full_like(x, 12.0), rtol=0, atol=0)
    torch.testing.assert_close(c10d_wait(issue(x)), torch.full_like(x, 6.0), rtol=0, atol=0)


def c10d_wait(t):
    return torch.ops._c10d_functional.wait_tensor(t)


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_a_wait_in_a_graph_for_a_collective_issued_outside_it_waits_through_c10d():
    _spawn(_waits_across_graphs)


class _Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(16, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                    nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 4))

    def forward(self, x):
        return self.layers(x)


def _ddp_training(rank):
    import torchair_ge
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    base = _Mlp()
    # 1 MB buckets (DDP's first bucket is 1 MB; none may be smaller): the 2 MB of gradients are
    # all-reduced in several buckets, and Dynamo's DDP optimizer splits the compiled graph there.
    eager = DDP(copy.deepcopy(base), bucket_cap_mb=1)
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(DDP(copy.deepcopy(base), bucket_cap_mb=1), backend=backend, dynamic=False)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in (eager, compiled)]
    data = torch.Generator().manual_seed(100 + rank)  # each rank trains on its own batches
    for step in range(20):
        x, y = torch.randn(8, 16, generator=data), torch.randn(8, 4, generator=data)
        losses = []
        for model, opt in zip((eager, compiled), optimizers):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-6, msg=f"step {step}")
    for (name, p_eager), p_compiled in zip(eager.module.named_parameters(), compiled.module.parameters()):
        torch.testing.assert_close(p_compiled, p_eager, rtol=1e-4, atol=1e-5, msg=name)
        gathered = [torch.empty_like(p_compiled) for _ in range(WORLD)]
        dist.all_gather(gathered, p_compiled.detach())
        torch.testing.assert_close(gathered[0], gathered[1], rtol=0, atol=0, msg=f"{name} differs between ranks")
    # A forward and a backward graph per piece: at least two pieces.
    assert len(backend.compiler.reports) >= 4, "the DDP optimizer did not split the graph at bucket boundaries"
    assert all(not r["fallback_ops"] for r in backend.compiler.reports)


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_ddp_around_a_compiled_model_trains_20_steps_like_eager_ddp():
    _spawn(_ddp_training)


class _Block(nn.Module):
    """A pre-norm transformer block: causal self-attention and a GELU MLP."""

    def __init__(self, dim=32, heads=4, hidden=64):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in self.qkv(self.ln1(x)).chunk(3, dim=-1))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        h = x + self.proj(o)
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


class _TensorParallelBlock(nn.Module):
    """`full`'s rank-th share, Megatron style: the attention heads and the MLP's hidden units are
    split between the ranks (column-parallel qkv and fc1, row-parallel proj and fc2), and each
    row-parallel product is summed over the ranks with a functional all-reduce."""

    def __init__(self, full, rank):
        super().__init__()
        dim, hidden = full.proj.in_features, full.fc1.out_features
        self.heads = full.heads // WORLD
        heads = slice(rank * dim // WORLD, (rank + 1) * dim // WORLD)
        units = slice(rank * hidden // WORLD, (rank + 1) * hidden // WORLD)
        p = lambda t: nn.Parameter(t.detach().clone())  # noqa: E731
        self.ln1, self.ln2 = copy.deepcopy(full.ln1), copy.deepcopy(full.ln2)
        self.w_qkv = nn.ParameterList([p(w[heads]) for w in full.qkv.weight.chunk(3)])
        self.b_qkv = nn.ParameterList([p(b[heads]) for b in full.qkv.bias.chunk(3)])
        self.w_proj, self.b_proj = p(full.proj.weight[:, heads]), p(full.proj.bias)
        self.w_fc1, self.b_fc1 = p(full.fc1.weight[units]), p(full.fc1.bias[units])
        self.w_fc2, self.b_fc2 = p(full.fc2.weight[:, units]), p(full.fc2.bias)

    def forward(self, x):
        b, t, _ = x.shape
        a = self.ln1(x)
        q, k, v = (F.linear(a, w, bias).view(b, t, self.heads, -1).transpose(1, 2)
                   for w, bias in zip(self.w_qkv, self.b_qkv))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, -1)
        h = x + funcol.all_reduce(F.linear(o, self.w_proj), "sum", dist.group.WORLD) + self.b_proj
        m = F.linear(F.gelu(F.linear(self.ln2(h), self.w_fc1, self.b_fc1)), self.w_fc2)
        return h + funcol.all_reduce(m, "sum", dist.group.WORLD) + self.b_fc2


def _tensor_parallel(rank):
    import torchair_ge
    torch.manual_seed(0)  # the same model and input on every rank
    full = _Block().eval()
    x = torch.randn(2, 8, 32)
    backend = torchair_ge.get_npu_backend()
    with torch.no_grad():
        got = torch.compile(_TensorParallelBlock(full, rank).eval(), backend=backend, dynamic=False)(x)
        torch.testing.assert_close(got, full(x), rtol=1e-4, atol=1e-5)
    (report,) = backend.compiler.reports
    assert not report["fallback_ops"], report["fallback_ops"]
    assert report["ir_ops"].get("HcomAllReduce") == 2, report["ir_ops"]


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_a_tensor_parallel_attention_and_mlp_block_equals_the_whole_block():
    _spawn(_tensor_parallel)


@pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")
def test_the_distributed_example_runs_under_torchrun():
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
                             f"--master_port={_free_port()}", os.path.join(root, "examples", "distributed.py")],
                            capture_output=True, text=True, timeout=TIMEOUT_S, cwd=root)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "equal to the whole block" in result.stdout
