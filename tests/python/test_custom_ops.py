"""Custom operators (docs/custom_ops.md): the zero-artifact path (an IR op derived from the
schema, run through the dispatcher), functionalized in-place ops, an op from a C++ extension,
the explicit converter override, ge.custom_op, and the errors."""
import os

import pytest
import torch
from torch import Tensor

import torchair_ge
from torchair_ge import ge, register_fx_node_ge_converter
from torchair_ge.fx2ge import registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@torch.library.custom_op("gtest::scaled_add", mutates_args=())
def scaled_add(x: Tensor, y: Tensor, alpha: float) -> Tensor:
    return x + alpha * y


@scaled_add.register_fake
def _(x, y, alpha):
    return torch.empty_like(x)


@torch.library.custom_op("gtest::add_rows_", mutates_args=("buf",))
def add_rows_(buf: Tensor, rows: Tensor, index: int) -> None:
    buf[index:index + rows.shape[0]] += rows


@add_rows_.register_fake
def _(buf, rows, index):
    return None


@torch.library.custom_op("gtest::min_max", mutates_args=())
def min_max(x: Tensor, dims: list[int], keepdim: bool) -> tuple[Tensor, Tensor]:
    return x.amin(dims, keepdim), x.amax(dims, keepdim)


@min_max.register_fake
def _(x, dims, keepdim):
    out = torch.amin(torch.empty_like(x), dims, keepdim)
    return out, torch.empty_like(out)


@torch.library.custom_op("gtest::affine", mutates_args=())
def affine(x: Tensor, weights: list[float], mode: str, dtype: torch.dtype, bias: Tensor | None = None,
           clamp: float | None = None) -> Tensor:
    y = x * weights[0] + weights[1]
    if mode == "square":
        y = y * y
    if bias is not None:
        y = y + bias
    if clamp is not None:
        y = y.clamp(max=clamp)
    return y.to(dtype)


@affine.register_fake
def _(x, weights, mode, dtype, bias=None, clamp=None):
    return torch.empty_like(x, dtype=dtype)


# define + impl + register_fake (the lower-level torch.library route)
torch.library.define("gtest::cube", "(Tensor x) -> Tensor")
torch.library.impl("gtest::cube", "cpu", lambda x: x * x * x)
torch.library.register_fake("gtest::cube", lambda x: torch.empty_like(x))


def compile_and_run(fn, *inputs):
    backend = torchair_ge.get_npu_backend()
    compiled = torch.compile(fn, backend=backend, dynamic=False, fullgraph=True)
    with torch.no_grad():
        out = compiled(*inputs)
    (report,) = backend.compiler.reports
    return out, report


def test_out_of_place_custom_op_is_a_derived_ir_op():
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    fn = lambda a, b: scaled_add(a, b, 0.25).relu() * 2  # noqa: E731
    out, report = compile_and_run(fn, x, y)
    torch.testing.assert_close(out, fn(x, y))
    assert report["ir_ops"]["gtest::scaled_add"] == 1
    assert report["fallback_ops"] == {}
    proto = torchair_ge._C.op_proto("gtest::scaled_add")
    assert [i["name"] for i in proto["inputs"]] == ["x", "y"]
    assert {a["name"]: a["type"] for a in proto["attrs"]}["alpha"] == "float"


def test_define_and_impl_route():
    x = torch.randn(3, 7)
    out, report = compile_and_run(lambda a: torch.ops.gtest.cube(a) + 1, x)
    torch.testing.assert_close(out, x * x * x + 1)
    assert report["ir_ops"]["gtest::cube"] == 1


def check_cache_update(fn, cache, rows):
    """fn(cache, rows) compiled vs eager on a copy: same outputs, same updated cache, the in-place
    custom op in the graph. Returns the compile report."""
    expected_cache = cache.clone()
    expected = fn(expected_cache, rows)
    out, report = compile_and_run(fn, cache, rows)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(cache, expected_cache)
    assert report["ir_ops"]["gtest::add_rows_"] == 1
    return report


def test_in_place_custom_op_updates_the_callers_tensor_without_a_copy():
    def fn(cache, rows):
        add_rows_(cache, rows, 2)
        return cache.sum(0) * 1.0

    report = check_cache_update(fn, torch.randn(6, 3), torch.randn(2, 3))
    assert "Assign" not in report["ir_ops"]  # no copy back: the op wrote the input's memory
    assert report["mutated_inputs"] == [0]


def test_readers_of_a_graph_inputs_old_value_run_before_the_in_place_update():
    def fn(cache, rows):
        before = cache.sum(0) * 1.0
        add_rows_(cache, rows, 2)
        return before, cache * 2

    check_cache_update(fn, torch.randn(5, 3), torch.randn(2, 3))


def test_in_place_custom_op_on_an_intermediate_keeps_the_old_value_for_other_readers():
    def fn(x, rows):
        buf = x * 2
        before = buf.sum()
        add_rows_(buf, rows, 0)
        return buf + 1, before + buf.sum() * 0  # reads both versions

    x, rows = torch.randn(4, 3), torch.randn(1, 3)
    out, report = compile_and_run(fn, x, rows)
    expected = fn(x.clone(), rows)
    torch.testing.assert_close(out, expected)
    assert report["ir_ops"]["gtest::add_rows_.functional"] == 1


def test_multiple_outputs_and_list_attrs():
    x = torch.randn(3, 4, 5)
    out, report = compile_and_run(lambda a: min_max(a, [0, 2], True), x)
    torch.testing.assert_close(out[0], x.amin([0, 2], True))
    torch.testing.assert_close(out[1], x.amax([0, 2], True))
    attrs = {a["name"]: a["type"] for a in torchair_ge._C.op_proto("gtest::min_max")["attrs"]}
    assert attrs["dims"] == "list_int" and attrs["keepdim"] == "bool"


@pytest.mark.parametrize("with_optional", [False, True])
def test_scalar_string_dtype_and_optional_arguments(with_optional):
    x, b = torch.randn(5, 2), torch.randn(2)

    def fn(a, bias):
        if with_optional:
            return affine(a, [0.5, -1.0], "square", torch.float64, bias, 0.75)
        return affine(a, [0.5, -1.0], "plain", torch.float64)

    out, report = compile_and_run(fn, x, b)
    torch.testing.assert_close(out, fn(x, b))
    assert out.dtype == torch.float64 and report["ir_ops"]["gtest::affine"] == 1


@pytest.fixture(scope="module")
def cpp_extension_op(tmp_path_factory):
    from torch.utils.cpp_extension import load
    build = tmp_path_factory.mktemp("myext_build")
    load(name="myext_ops", sources=[os.path.join(ROOT, "examples", "custom_op_ext", "rms_scale.cc")],
         build_directory=str(build), is_python_module=False, verbose=False)
    return torch.ops.myext.rms_scale


def test_op_registered_from_cpp_with_torch_library(cpp_extension_op):
    x = torch.randn(4, 8)
    out, report = compile_and_run(lambda a: [t * 2 for t in cpp_extension_op(a, 1e-6, 3.0)], x)
    y, rms = cpp_extension_op(x, 1e-6, 3.0)
    torch.testing.assert_close(out[0], y * 2)
    torch.testing.assert_close(out[1], rms * 2)
    assert report["ir_ops"]["myext::rms_scale"] == 1


def test_explicit_converter_overrides_the_derived_op():
    op = torch.ops.gtest.scaled_add.default
    calls = []

    @register_fx_node_ge_converter(op)
    def convert(x, y, alpha, *, meta_outputs=None):
        calls.append(alpha)
        scaled = ge.custom_op("Mul", inputs={"x1": y, "x2": ge.Const(alpha, meta_outputs.dtype)}, outputs=["y"])
        return ge.custom_op("Add", inputs={"x1": x, "x2": scaled}, outputs=[ge.TensorSpec.of(meta_outputs)])

    try:
        x, y = torch.randn(4, 5), torch.randn(4, 5)
        out, report = compile_and_run(lambda a, b: scaled_add(a, b, 3.0), x, y)
        torch.testing.assert_close(out, x + 3.0 * y)
        assert calls == [3.0] and "gtest::scaled_add" not in report["ir_ops"]
    finally:
        registry._CONVERTERS.pop(op)
        registry._UNPRODUCED.pop(op)


def test_ge_custom_op_errors_name_the_problem():
    builder = torchair_ge._C.GraphBuilder("g")
    with ge.graph_context(builder):
        x = builder.create_input(0, ge.DataType.DT_FLOAT, [2, 3], "x")
        with pytest.raises(ValueError, match="no op type 'NoSuchOp'"):
            ge.custom_op("NoSuchOp", inputs={"x": x}, outputs=["y"])
        with pytest.raises(ValueError, match=r"has no input\(s\) \['z'\]"):
            ge.custom_op("Relu", inputs={"z": x}, outputs=["y"])
        with pytest.raises(ValueError, match="expected TensorSpec"):
            ge.custom_op("Relu", inputs={"x": x}, outputs=[ge.TensorSpec(torch.float16, [2, 3])])
        y = ge.custom_op("Relu", inputs={"x": x}, outputs=[ge.TensorSpec(torch.float32, [2, 3])])
        assert list(y.shape) == [2, 3]


def test_custom_op_without_a_fake_impl_says_what_to_register():
    @torch.library.custom_op("gtest::no_fake", mutates_args=())
    def no_fake(x: Tensor) -> Tensor:
        return x * 2

    compiled = torch.compile(lambda a: no_fake(a) + 1, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with pytest.raises(Exception, match="no_fake.register_fake"):
        compiled(torch.randn(3))


def test_fake_impl_disagreeing_with_the_kernel_is_an_error_naming_the_op():
    @torch.library.custom_op("gtest::bad_fake", mutates_args=())
    def bad_fake(x: Tensor) -> Tensor:
        return x.sum(0)

    @bad_fake.register_fake
    def _(x):
        return torch.empty_like(x)

    compiled = torch.compile(lambda a: bad_fake(a) + 1, backend=torchair_ge.get_npu_backend(), dynamic=False)
    with pytest.raises(Exception, match=r"gtest::bad_fake output 0 is Float\[4\] but the graph planned Float\[3,4\]"):
        compiled(torch.randn(3, 4))


def test_dumped_graph_with_custom_ops_reads_back(tmp_path):
    config = torchair_ge.CompilerConfig()
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.path = str(tmp_path)
    compiled = torch.compile(lambda a: scaled_add(a, a, 2.0) * 2, dynamic=False,
                             backend=torchair_ge.get_npu_backend(compiler_config=config))
    with torch.no_grad():
        compiled(torch.randn(3))
    (final,) = tmp_path.glob("*_final.txt")
    graph = torchair_ge._C.graph_from_text(final.read_text())
    assert graph is not None and "gtest::scaled_add" in final.read_text()


def test_the_custom_op_example_runs(capsys):
    import runpy
    runpy.run_path(os.path.join(ROOT, "examples", "custom_op.py"), run_name="__main__")
    assert "matches eager" in capsys.readouterr().out


@pytest.fixture(scope="module")
def soft_shrink_plugin(tmp_path_factory):
    """The example plugin, built the way a user builds one: the C compiler and get_include()."""
    import shutil
    import subprocess
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    library = tmp_path_factory.mktemp("plugin") / "libsoft_shrink.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-I", torchair_ge.get_include(),
                    os.path.join(ROOT, "examples", "op_plugin", "soft_shrink.c"), "-o", str(library)], check=True)
    return torchair_ge.load_op_plugin(library)


@torch.library.custom_op("gtest::shrink", mutates_args=())
def shrink(x: Tensor, lambd: float, scale: float) -> Tensor:
    return torch.nn.functional.softshrink(x, lambd) * scale


@shrink.register_fake
def _(x, lambd, scale):
    return torch.empty_like(x)


def test_op_plugin_from_a_users_shared_library(soft_shrink_plugin):
    assert soft_shrink_plugin == ["ScaledSoftShrink"]
    assert os.path.exists(os.path.join(torchair_ge.get_include(), "torchair_ge", "op_plugin.h"))
    op = torch.ops.gtest.shrink.default

    @register_fx_node_ge_converter(op)
    def convert(x, lambd, scale, *, meta_outputs=None):
        return ge.ScaledSoftShrink(x, lambd=lambd, scale=scale)

    try:
        x = torch.randn(6, 9)
        out, report = compile_and_run(lambda a: shrink(a * 2, 0.7, 3.0) + 1, x)
        torch.testing.assert_close(out, torch.nn.functional.softshrink(x * 2, 0.7) * 3.0 + 1)
        assert report["ir_ops"]["ScaledSoftShrink"] == 1 and report["fallback_ops"] == {}
    finally:
        registry._CONVERTERS.pop(op)
        registry._UNPRODUCED.pop(op)
