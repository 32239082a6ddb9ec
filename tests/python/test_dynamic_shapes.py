"""Symbolic sizes: default torch.compile (automatic dynamic), dynamic=True, mark_dynamic, SymInt
arithmetic in converters' arguments, a growing KV cache, call-time input checks, and size
templates (one conversion for every set of sizes)."""
import json
import threading

import pytest
import torch
import torch._dynamo
from torch.fx.experimental.proxy_tensor import make_fx

import torchair_ge
import torchair_ge.backend as backend_module
from torchair_ge import ge, register_fx_node_ge_converter
from torchair_ge.debug import profile_report
from torchair_ge.fx2ge import registry
from torchair_ge.fx2ge.errors import DynamicShapeError

from bench.models import ZOO, bert, llama, mlp, recsys, resnet, tiny_chain


def _compile(fn, dynamic=None, config=None):
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    return torch.compile(fn, backend=backend, dynamic=dynamic, fullgraph=True), backend.compiler.reports


def _policy(name):
    config = torchair_ge.CompilerConfig()
    config.inference_config.new_shape_policy = name
    return config


def _native(reports):
    fallbacks = {op: n for r in reports for op, n in r["fallback_ops"].items()}
    assert not fallbacks, f"ops ran on the host-fallback engine: {fallbacks}"


def test_default_compile_runs_a_second_batch_size():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
    compiled, reports = _compile(m)
    with torch.no_grad():
        for batch in (2, 3, 7, 64, 3, 5):
            x = torch.randn(batch, 16)
            torch.testing.assert_close(compiled(x), m(x))
    assert len(reports) == 2  # static for the first size, then one symbolic graph for the rest
    assert "symbolic" not in reports[0]
    assert list(reports[1]["symbolic"].values()) == ["arg3_1.size(0) in [2, int_oo]"]
    assert [i["sizes"].split("=")[1] for i in reports[1]["shape_instances"]] == ["3", "7", "64", "5"]
    _native(reports)


def _size_arithmetic(x, y):
    b, n = x.shape
    h = x.view(b * 2, n // 2).relu()  # view with SymInt arithmetic
    z = torch.zeros(b, n // 2 + 1).narrow(1, 0, n // 2)  # new sizes from symbols; narrow to a symbol
    pos = torch.arange(n, dtype=torch.float32).expand(b, n)  # arange over a symbol, expand to symbols
    tail = x[:, n // 4:]  # slice from a symbolic start
    padded = torch.nn.functional.pad(y, (0, n - y.shape[1]))  # pad by a difference of symbols
    scale = torch.full((b, 1), float(n))  # full with a symbolic size and a SymFloat value
    return (h.view(b, n) + pos * scale + padded, z, tail.sum(-1, keepdim=True) * max(b, 2), x.new_ones(b, n // 2))


def test_size_arithmetic_in_converter_arguments():
    compiled, reports = _compile(_size_arithmetic, dynamic=True)
    with torch.no_grad():
        for b, n in ((2, 8), (3, 12), (5, 20), (4, 16)):
            x, y = torch.randn(b, n), torch.randn(b, n - 3)
            for got, want in zip(compiled(x, y), _size_arithmetic(x, y)):
                torch.testing.assert_close(got, want)
    assert len(reports) == 1 and len(reports[0]["shape_instances"]) == 4
    _native(reports)


def test_a_symint_output_is_returned():
    compiled, reports = _compile(lambda x: (x * 2, x.shape[0] * 3), dynamic=True)
    for n in (2, 5):
        out, size = compiled(torch.ones(n))
        assert size == 3 * n and torch.equal(out, torch.full((n,), 2.0))
    assert len(reports) == 1


def test_mark_dynamic_maybe_mark_dynamic_and_mark_static():
    def f(x):
        return (x.softmax(-1) * x.shape[1]).sum(0)

    compiled, reports = _compile(f)
    x = torch.randn(3, 6)
    torch._dynamo.mark_dynamic(x, 0)
    torch._dynamo.maybe_mark_dynamic(x, 1)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), f(x))
        for shape in ((4, 6), (5, 9), (2, 3)):
            y = torch.randn(*shape)
            torch.testing.assert_close(compiled(y), f(y))
    assert len(reports) <= 2 and "symbolic" in reports[0]

    static, static_reports = _compile(f, dynamic=True)
    z = torch.randn(3, 6)
    torch._dynamo.mark_static(z, 1)
    with torch.no_grad():
        torch.testing.assert_close(static(z), f(z))
    assert list(static_reports[0]["symbolic"]) and all(".size(0)" in v for v in static_reports[0]["symbolic"].values())


class _GrowingCacheAttention(torch.nn.Module):
    """One decode step with a cache that grows by concatenation, as transformers' DynamicCache."""

    def __init__(self, hidden=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)

    def forward(self, x, k_cache, v_cache):
        b, t, h = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        k = torch.cat([k_cache, k], dim=2)
        v = torch.cat([v_cache, v], dim=2)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, t, h)), k, v


def test_decode_loop_with_a_growing_kv_cache():
    torch.manual_seed(0)
    model = _GrowingCacheAttention().eval()
    compiled, reports = _compile(model)
    k = v = torch.randn(1, 4, 5, 8)
    ek, ev = k, v
    with torch.no_grad():
        for _ in range(32):
            x = torch.randn(1, 1, 32)
            out, k, v = compiled(x, k, v)
            want, ek, ev = model(x, ek, ev)
            torch.testing.assert_close(out, want)
            torch.testing.assert_close(k, ek)
    assert k.shape[2] == 37
    assert len(reports) <= 3
    assert reports[-1]["size_template"]["sites"] > 0  # each step's instance is instantiated, not converted
    assert len(reports[-1]["shape_instances"]) >= 29
    _native(reports)


def _zoo_shapes():
    return {
        "mlp": lambda n: mlp.build(batch=n, width=64),
        "resnet": lambda n: resnet.build(batch=n, size=32),
        "bert": lambda n: bert.build(batch=n, seq=8 * n),
        "llama_block": lambda n: llama.build(seq=4 * n, hidden=64),
        "widedeep": lambda n: recsys.build_widedeep(batch=4 * n),
        "mmoe": lambda n: recsys.build_mmoe(batch=4 * n),
        "tiny_chain": lambda n: tiny_chain.build(ops=20, size=4 * n),
    }


@pytest.mark.parametrize("name", list(_zoo_shapes()))
def test_zoo_model_under_default_compile_with_four_sizes(name):
    build = _zoo_shapes()[name]
    model, _ = build(2)
    compiled, reports = _compile(model)
    with torch.no_grad():
        for n in (2, 3, 5, 4):
            _, inputs = build(n)
            torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=2e-4, atol=2e-4)
    assert len(reports) <= 2, [r.get("symbolic") for r in reports]
    assert "symbolic" in reports[-1]
    # Converted once: every later set of sizes is instantiated from the size template.
    assert "sites" in reports[-1]["size_template"], reports[-1]["size_template"]
    assert all(i["from_template"] for i in reports[-1]["shape_instances"][1:])
    # Optimized once: every later instance is compiled from the optimized template's graph.
    assert "sites" in reports[-1]["size_template"]["optimized"], reports[-1]["size_template"]
    assert all(i["optimized_once"] for i in reports[-1]["shape_instances"][1:])


def test_gpt_decode_zoo_entry_has_no_symbolic_size():
    """Its cache is static (updated in place at a position tensor): no size changes between steps."""
    assert "static KV cache" in ZOO["gpt_decode"].description


def _make_symbolic(fn, *inputs):
    return make_fx(fn, tracing_mode="symbolic")(*inputs)


def test_call_time_checks_name_the_input_and_dim():
    gm = _make_symbolic(lambda x, y: x + y, torch.randn(3, 4), torch.randn(3, 4))
    compiled = torchair_ge.get_compiler()(gm, [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"])
    torch.testing.assert_close(compiled([torch.ones(5, 4), torch.ones(5, 4)])[0], torch.full((5, 4), 2.0))
    with pytest.raises(DynamicShapeError, match=r"input y_1 has shape \[6, 4\], the graph expects"):
        compiled([torch.ones(5, 4), torch.ones(6, 4)])
    with pytest.raises(DynamicShapeError, match=r"input x_1 is int, expected a tensor"):
        compiled([3, torch.ones(6, 4)])


def test_data_dependent_sizes_run():
    """nonzero's row count and .item()'s value are known only from tensor values: each call
    computes them on the host first, then runs the engine instance for them."""
    def f(x, start):
        return x.narrow(1, start.item(), 2) * 2, torch.nonzero(x > 0) + 1

    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    torch._dynamo.config.capture_scalar_outputs = True
    try:
        compiled, reports = _compile(f)
        with torch.no_grad():
            for seed, start in ((0, 1), (1, 3), (2, 1), (0, 1)):
                x = torch.randn(4, 6, generator=torch.Generator().manual_seed(seed))
                for got, want in zip(compiled(x, torch.tensor(start)), f(x, torch.tensor(start))):
                    torch.testing.assert_close(got, want)
    finally:
        torch._dynamo.config.capture_dynamic_output_shape_ops = False
        torch._dynamo.config.capture_scalar_outputs = False
    (report,) = reports
    assert any("data-dependent" in v for v in report["symbolic"].values())
    assert len(report["shape_instances"]) == 3  # the last call repeats the first one's sizes
    assert report["tasks"] > 0 and "aten.nonzero.default" in report["fallback_ops"]


def test_instances_beyond_the_limit_are_dropped_least_recently_used_first():
    config = torchair_ge.CompilerConfig()
    config.inference_config.max_shape_instances = 2
    compiled, reports = _compile(lambda x: x.exp() + 1, dynamic=True, config=config)
    for n in (2, 3, 4, 2, 3):
        torch.testing.assert_close(compiled(torch.ones(n)), torch.full((n,), 1.0).exp() + 1)
    # 2 (compiled), 3, 4 (drops 2), 2 again (drops 3), 3 again
    sizes = [int(i["sizes"].split("=")[1]) for i in reports[0]["shape_instances"]]
    assert sizes == [2, 3, 4, 2, 3]


def _geared(policy):
    config = torchair_ge.CompilerConfig()
    config.inference_config.dynamic_gears_merge_policy = policy
    fn = lambda x: (x.softmax(-1) * x.shape[0]).sum(1)  # noqa: E731
    compiled, reports = _compile(fn, config=config)
    x = torch.randn(2, 16)
    torchair_ge.inference.set_dim_gears(x, {0: [2, 4, 8], 1: [16, 32, 64]})
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), fn(x))
    return fn, compiled, reports


def test_dim_gears_zip_compile_every_combination_up_front():
    fn, compiled, reports = _geared("zip")
    (report,) = reports
    assert len(report["shape_instances"]) == 3 and len(report["gears"]) == 3
    with torch.no_grad():
        for shape in ((8, 64), (4, 32), (2, 16)):
            y = torch.randn(*shape)
            torch.testing.assert_close(compiled(y), fn(y))
        assert len(report["shape_instances"]) == 3  # nothing compiled at call time
        with pytest.raises(Exception, match=r"not one of the gears set with set_dim_gears"):
            compiled(torch.randn(4, 16))  # in range, but zip pairs 4 with 32
        z = torch.randn(16, 64)  # outside [2, 8]: Dynamo's guard fails, a new graph
        torch.testing.assert_close(compiled(z), fn(z))
    assert len(reports) == 2


def test_dim_gears_product_and_limits():
    fn, compiled, reports = _geared("product")
    assert len(reports[0]["shape_instances"]) == 9
    y = torch.randn(4, 16)
    with torch.no_grad():
        torch.testing.assert_close(compiled(y), fn(y))
    x = torch.randn(4, 16)
    with pytest.raises(ValueError, match="at least 2 sizes"):
        torchair_ge.inference.set_dim_gears(x, {0: [4]})
    with pytest.raises(ValueError, match="int >= 2"):
        torchair_ge.inference.set_dim_gears(x, {0: [1, 4]})
    with pytest.raises(ValueError, match="not one of its gears"):
        torchair_ge.inference.set_dim_gears(x, {0: [2, 8]})
    config = torchair_ge.CompilerConfig()
    config.inference_config.dynamic_gears_merge_policy = "product"
    many, _ = _compile(lambda t: t + 1, config=config)
    torchair_ge.inference.set_dim_gears(x, {0: list(range(2, 13)), 1: list(range(16, 26))})
    with pytest.raises(Exception, match="110 gear combinations"):
        many(x)


def test_dumps_and_compile_statistics_show_the_symbols(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.path = str(tmp_path)
    config.debug.graph_dump.level = "final"
    config.ge_config.export_compile_stat = "2"
    config.ge_config.compile_stat_path = str(tmp_path)
    compiled, reports = _compile(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU()), dynamic=True,
                                 config=config)
    with torch.no_grad():
        compiled(torch.randn(3, 16))
    (symbol,) = reports[0]["symbolic"]
    dump = next(tmp_path.glob("*_final.txt")).read_text()
    assert f's: "[{symbol}, 16]"' in dump  # (the Linear's output node was fused away)
    stat = json.loads(next(tmp_path.glob("compile_stat_*.json")).read_text())
    assert list(stat["symbolic"]) == [symbol] and stat["shape_instances"][0]["sizes"] == f"{symbol}=3"


@pytest.mark.parametrize("policy", ["compile", "amortize"])
def test_concurrent_calls_with_different_sizes_stay_correct(policy):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32)).eval()
    compiled, reports = _compile(m, dynamic=True, config=_policy(policy))
    with torch.no_grad():
        compiled(torch.randn(2, 16))
    errors = []

    def worker(seed):
        rng = torch.Generator().manual_seed(seed)
        try:
            with torch.no_grad():
                for _ in range(15):
                    x = torch.randn(int(torch.randint(2, 9, (1,), generator=rng)), 16, generator=rng)
                    torch.testing.assert_close(compiled(x), m(x))
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    (report,) = reports
    if policy == "compile":
        assert 2 <= len(report["shape_instances"]) <= 8 and "eager_runs" not in report
    else:  # a 30 us model against a compile of milliseconds: new sizes ran eagerly
        assert 1 <= len(report["shape_instances"]) <= 8 and report["eager_runs"] >= 1


def test_profiling_and_data_dumps_in_dynamic_mode(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.profiling.enable = True
    config.profiling.path = str(tmp_path)
    config.debug.data_dump.type = "npy"
    config.debug.data_dump.path = str(tmp_path / "dump")
    config.inference_config.new_shape_policy = "amortize"  # a data dump compiles every size all the same
    m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh())
    compiled, reports = _compile(m, dynamic=True, config=config)
    with torch.no_grad():
        profile_report()  # drop what earlier tests left
        for n in (2, 3, 2):
            compiled(torch.randn(n, 8))
    report = profile_report()
    assert report.runs == 3 and report.task_us > 0  # both instances' runs are collected
    # one dump directory per instance (graph_<id>_pid<pid>), one step per run of it
    steps = {p.name: len(list(p.iterdir())) for p in (tmp_path / "dump").iterdir()}
    ids = [i["graph_id"] for i in reports[0]["shape_instances"]]
    assert sorted(steps.values()) == [1, 2] and all(any(f"graph_{i}_" in d for d in steps) for i in ids), steps


def test_a_graph_built_differently_per_size_keeps_one_conversion_per_size():
    """A converter that bakes a size into a constant's shape: no size template (the report says
    why), and every size still runs correctly, converted for its own sizes."""
    op = torch.ops.aten.hypot.default

    @register_fx_node_ge_converter(op)
    def hypot_with_a_size_shaped_constant(self, other, *, meta_outputs=None):
        zeros = ge.Const(torch.zeros(list(meta_outputs.shape)), meta_outputs.dtype)
        return ge.Add(ge.Sqrt(ge.Add(ge.Mul(self, self), ge.Mul(other, other))), zeros)

    try:
        compiled, reports = _compile(lambda a, b: torch.hypot(a, b) * 2, dynamic=True)
        with torch.no_grad():
            for n in (3, 5, 9):
                a, b = torch.randn(n, 4), torch.randn(n, 4)
                torch.testing.assert_close(compiled(a, b), torch.hypot(a, b) * 2)
        assert "built differently" in reports[-1]["size_template"]["none"], reports[-1]["size_template"]
        assert not any(i.get("from_template") for i in reports[-1]["shape_instances"])
    finally:
        registry._CONVERTERS.pop(op)
        registry._UNPRODUCED.pop(op)


def test_size_template_names_sizes_with_expressions_of_the_graph():
    """Reshapes to 2*s0 and slices at s0-1: the template's sites carry those expressions and an
    instance at a new size matches eager."""
    def fn(x):
        y = x.reshape(x.shape[0] * 2, -1)[: x.shape[0] - 1]
        return torch.cat([y, torch.arange(y.shape[0], dtype=torch.float32)[:, None]], dim=1)

    compiled, reports = _compile(fn, dynamic=True)
    with torch.no_grad():
        for n in (4, 6, 11):
            x = torch.randn(n, 8)
            torch.testing.assert_close(compiled(x), fn(x))
    template = reports[-1]["size_template"]
    assert template["sites"] >= 3, template
    assert [i["from_template"] for i in reports[-1]["shape_instances"][1:]] == [True, True]


def test_instances_from_the_optimized_template_skip_the_optimizer_and_keep_sized_values():
    """arange(s0), causal masks over s0 (from aranges, from ones().tril()) and full((s0, 1)):
    folded, they would be constants of one size, so the converters build them from ranges and
    broadcast scalars and the optimized template keeps them as nodes; instances at new sizes
    match eager and their engine compile has no optimizer stage."""
    def fn(x):
        n = x.shape[0]
        positions = torch.arange(n)
        mask = positions[None, :] > positions[:, None]
        scores = (x @ x.t()).masked_fill(mask, -1e4).softmax(-1)
        lower = torch.ones(n, n).tril(-1) * torch.full((n, 1), 0.5)
        return scores @ x + lower @ x + torch.arange(n, dtype=torch.float32)[:, None]

    backend = torchair_ge.get_npu_backend()
    compiled, reports = torch.compile(fn, backend=backend, dynamic=True), backend.compiler.reports
    with torch.no_grad():
        for n in (5, 7, 12, 9):
            x = torch.randn(n, 8)
            torch.testing.assert_close(compiled(x), fn(x))
    assert "sites" in reports[-1]["size_template"]["optimized"], reports[-1]["size_template"]
    instances = reports[-1]["shape_instances"][1:]
    assert len(instances) == 3 and all(i["optimized_once"] for i in instances)
    latest = next(reversed(backend.compiler.graphs[-1]._instances.values()))  # n = 9
    stages = [s["name"] for s in latest.summary["stages"]]
    assert not any(s.startswith("optimize") for s in stages) and "autofuse" in stages, stages


@pytest.mark.parametrize("strategy", ["MemoryAware", "BFS"])
def test_later_instances_schedule_in_the_order_the_first_one_chose(strategy):
    """MemoryAware plans the arena of each of the four plain orders and keeps the smallest; a size
    template's instances differ only in sizes, so the later ones schedule in the order the first
    one chose and plan that one only. A strategy the user names is used by every instance."""
    torch.manual_seed(0)
    model, _ = bert.build(batch=2, seq=8)
    config = _policy("compile")
    config.experimental_config.topology_sorting_strategy = strategy
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    compiled = torch.compile(model, backend=backend, dynamic=True)
    with torch.no_grad():
        for seq in (9, 14, 11):
            args = bert.build(batch=2, seq=seq)[1]
            torch.testing.assert_close(compiled(*args), model(*args), rtol=1e-4, atol=1e-4)
    first, *later = [g.summary for g in backend.compiler.graphs[-1]._instances.values()]
    assert later and all(s["schedule"] == first["schedule"] and s["orders_planned"] == 1 for s in later), later
    if strategy == "MemoryAware":
        assert first["orders_planned"] == 4 and first["schedule"] != "MemoryAware", first["schedule"]
    else:
        assert first["orders_planned"] == 1 and first["schedule"] == strategy


def test_instances_carry_symbolic_shapes_and_kernels_keep_static_dims_literal():
    """The optimized template names every value's shape with size expressions (TensorDesc::symbolic
    of each instance, checked when it is instantiated, shown in dumps); generated kernels read only
    the batch at run time and keep the static width as a literal; every instance, the first one
    included, comes from the template and shares one kernel library."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 48), torch.nn.LayerNorm(48), torch.nn.GELU(),
                            torch.nn.Linear(48, 24), torch.nn.Softmax(-1)).eval()
    backend = torchair_ge.get_npu_backend(compiler_config=_policy("compile"))
    compiled = torch.compile(m, backend=backend)
    with torch.no_grad():
        for batch in (2, 3, 9, 5):
            x = torch.randn(batch, 16)
            torch.testing.assert_close(compiled(x), m(x), rtol=2e-5, atol=2e-5)
    report = backend.compiler.reports[-1]
    assert len(report["symbolic"]) == 1, report["symbolic"]  # the batch
    optimized = report["size_template"]["optimized"]
    assert optimized["symbolic_shapes"] > 0, optimized
    assert all(i["from_template"] and i["optimized_once"] for i in report["shape_instances"]), report["shape_instances"]
    instances = list(backend.compiler.graphs[-1]._instances.values())
    libraries = {g.summary["autofuse"]["library"] for g in instances}
    assert len(instances) == 3 and len(libraries) == 1, libraries
    assert not any(i["built_kernels"] for i in report["shape_instances"][1:]), report["shape_instances"]
    with open(instances[0].summary["autofuse"]["source"]) as f:
        source = f.read()
    assert "int64_t{48}" in source and "int64_t{24}" in source, source  # the rows' lengths
    assert "S[0]" in source  # the row count
    # symbolic shapes annotate the instance's values in dumps: "[s0, 48]"
    symbol = next(iter(report["symbolic"]))
    text = instances[-1].graph_text()
    assert f"[{symbol}, 48]" in text, text


def test_a_template_that_cannot_be_optimized_once_is_optimized_per_instance(monkeypatch):
    """Without a fourth set of sizes to check the optimized template at (Dynamo's guards can leave
    too few), the report says so and every instance runs the whole pipeline, still correct."""
    real = backend_module.optimize_template

    def without_a_fourth_key(template, options):
        template.builds = template.builds[:2] + (None,) + template.builds[3:]
        return real(template, options)

    monkeypatch.setattr(backend_module, "optimize_template", without_a_fourth_key)
    compiled, reports = _compile(lambda x: (x * 2).softmax(-1), dynamic=True)
    with torch.no_grad():
        for n in (3, 5, 6):
            x = torch.randn(n, 4)
            torch.testing.assert_close(compiled(x), (x * 2).softmax(-1))
    assert "no fourth set of sizes" in reports[-1]["size_template"]["optimized"]["none"], reports[-1]["size_template"]
    assert not any(i.get("optimized_once") for i in reports[-1]["shape_instances"])


def test_amortize_runs_a_new_size_eagerly_until_its_time_pays_for_an_instance():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
    compiled, reports = _compile(m, dynamic=True, config=_policy("amortize"))
    with torch.no_grad():
        x = torch.randn(3, 16)
        torch.testing.assert_close(compiled(x), m(x))  # Dynamo's example sizes: compiled with the graph
        report = reports[0]
        assert len(report["shape_instances"]) == 1 and "eager_runs" not in report
        y = torch.randn(5, 16)
        torch.testing.assert_close(compiled(y), m(y))  # a new size: eager, no instance
        assert len(report["shape_instances"]) == 1 and report["eager_runs"] == 1
        torch.testing.assert_close(compiled(x), m(x))  # the compiled size stays compiled
        assert report["eager_runs"] == 1
        calls = 1
        while len(report["shape_instances"]) == 1 and calls < 200_000:  # rent until the compile is paid for
            torch.testing.assert_close(compiled(y), m(y))
            calls += 1
    assert len(report["shape_instances"]) == 2, f"no instance after {calls} calls"
    assert report["shape_instances"][1]["sizes"].endswith("=5")
    eager_runs = report["eager_runs"]
    with torch.no_grad():
        torch.testing.assert_close(compiled(y), m(y))  # from now on the instance
    assert report["eager_runs"] == eager_runs
    _native(reports)


def test_the_next_sizes_price_leaves_out_what_only_the_first_instance_did(monkeypatch, tmp_path):
    """Under amortize a new size gets its instance once its eager runs cost what an instance does.
    An instance from the size template neither converts the graph, nor builds generated kernels
    (the kernel cache has them), nor times its kernels' candidates (the first instance's decisions
    are reused): a LLaMA decode graph's first instance took 957 ms, 817 of them timing candidates,
    each next length ~6 ms -- priced at 833 ms, generate() ran every decode step eagerly."""
    import gc

    from torchair_ge.dynamic_graph import DynamicGraph
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))  # nothing decided or built before
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(48, 200), torch.nn.Tanh(), torch.nn.Linear(200, 24), torch.nn.GELU()).eval()
    compiled, reports = _compile(m, dynamic=True, config=_policy("amortize"))
    with torch.no_grad():
        x = torch.randn(3, 48)
        torch.testing.assert_close(compiled(x), m(x))
    report = reports[0]
    graph = next(o for o in gc.get_objects() if type(o) is DynamicGraph and o.report is report)
    assert graph.template is not None, report.get("size_template")
    first_ms = report["shape_instances"][0]["compile_ms"]
    timing_ms = sum(c["measure_us"] for c in report["kernel_choices"]) / 1e3
    once_ms = report["convert_ms"] + report["autofuse"]["build_ms"] + timing_ms
    assert once_ms > report["convert_ms"]  # the first instance built kernels or timed candidates
    assert graph._compile_ms() == pytest.approx(max(first_ms - once_ms, 0.0))


def test_rented_sizes_run_the_models_own_ops_as_eager_does():
    """A size run eagerly under amortize runs Dynamo's graph -- the model's layer norm and GELU as
    eager calls them, eager's bits -- not the AOT graph's decomposition of them."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU(approximate="tanh"),
                            torch.nn.Linear(32, 4)).eval()
    compiled, reports = _compile(m, dynamic=True, config=_policy("amortize"))
    with torch.no_grad():
        compiled(torch.randn(3, 16))
        compiled(torch.randn(4, 16))  # the first call of a graph goes through AOT autograd's wrapper
        y = torch.randn(5, 16)
        with torch.profiler.profile() as prof:
            out = compiled(y)
        assert reports[0]["eager_runs"] == 2
        assert torch.equal(out, m(y))
    ops = {e.name for e in prof.events()}
    assert {"aten::layer_norm", "aten::gelu"} <= ops, sorted(ops)


def test_compile_policy_compiles_every_new_size_at_its_first_call(monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_NEW_SHAPE_POLICY", "amortize")  # the option overrides the environment
    m = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU()).eval()
    compiled, reports = _compile(m, dynamic=True, config=_policy("compile"))
    with torch.no_grad():
        for batch in (3, 5, 9):
            x = torch.randn(batch, 16)
            torch.testing.assert_close(compiled(x), m(x))
    assert len(reports[0]["shape_instances"]) == 3 and "eager_runs" not in reports[0]


def test_rent_or_buy_buys_when_one_more_rent_reaches_the_price_and_forgets_old_keys():
    from torchair_ge.dynamic_graph import RentOrBuy
    cold = RentOrBuy(capacity=2)
    cold.spent("first", 0.050)  # the graph's first eager run: one-time costs
    assert not cold.buy("new", compile_ms=10.0)  # it prices its own key only
    assert cold.buy("first", compile_ms=60.0)
    cold.spent("second", 0.002)
    assert not cold.buy("new", compile_ms=3.0) and cold.buy("new", compile_ms=2.0)  # priced like the second run
    rent = RentOrBuy(capacity=2)
    assert not rent.buy("a", compile_ms=10.0)  # nothing known of eager runs yet
    rent.spent("a", 0.003)
    assert not rent.buy("a", compile_ms=10.0)  # 3 + 3 ms < 10 ms
    rent.spent("a", 0.003)
    assert not rent.buy("a", compile_ms=10.0)  # 6 + 3 ms
    assert rent.buy("a", compile_ms=9.0)  # one more run would bring the rent to the price
    assert not rent.buy("a", compile_ms=9.0) and not rent.buy("new", compile_ms=9.0)  # bought keys leave the tally
    rent.spent("b", 0.012)
    assert rent.buy("new", compile_ms=10.0)  # a new key whose run (like the latest, 12 ms) costs a compile: at once
    rent.spent("c", 0.001)
    rent.spent("d", 0.001)  # beyond the capacity: "b", least recently rented, is forgotten
    assert not rent.buy("b", compile_ms=1.5) and rent.buy("b", compile_ms=1.0)  # like the latest run, not its 12 ms
    assert not rent.buy("c", compile_ms=2.5) and rent.buy("c", compile_ms=2.0)
