"""The bad-input catalogue (docs/reliability.md): what a careless user, a broken machine or an
attacker hands the backend -- at call time, in the config, in environment variables, as paths,
through the kernel cache and the C++ compiler, as op plugins and as model/graph files -- and
what comes back: the exact clear error, or eager's result. One case per function; the table in
docs/reliability.md lists every case (test_every_case_is_in_the_reliability_table)."""
import functools
import hashlib
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import torchair_ge
from torchair_ge import _C, ge
from torchair_ge.engine import default_session, next_graph_id

ROOT = pathlib.Path(__file__).resolve().parents[2]
GE_RUN = pathlib.Path(os.environ.get("TORCHAIR_GE_BUILD", ROOT / "build")) / "ge_run"
CASES = {}  # name -> (area, what)


def case(area, what):
    def register(fn):
        CASES[fn.__name__] = (area, what, fn)
        return fn
    return register


@functools.cache
def _graph():
    """relu(x) + y for x [2, 3], y [3], called directly (no Dynamo guards in between)."""
    example = (torch.randn(2, 3), torch.randn(3))
    gm = make_fx(lambda x, y: torch.relu(x) + y, tracing_mode="fake")(*example)
    return torchair_ge.get_compiler()(gm, list(example))


def _call(*inputs):
    return _graph()(list(inputs))


def _like_eager(fn, *inputs, dynamic=False):
    compiled = torch.compile(fn, backend=torchair_ge.get_npu_backend(), dynamic=dynamic)
    want = fn(*[i.clone() if isinstance(i, torch.Tensor) else i for i in inputs])
    torch.testing.assert_close(compiled(*inputs), want, equal_nan=True)


def _fresh_process(code, env=None, config=""):
    """Runs a tiny compile in a new interpreter (environment variables are read at start):
    returns (exit code, the backend's error line or the last stderr line)."""
    script = f"""
import torch, torchair_ge
cfg = torchair_ge.CompilerConfig()
{config}
f = torch.compile(lambda x: torch.relu(x) * 2 + 1, backend=torchair_ge.get_npu_backend(compiler_config=cfg),
                  dynamic=False)
x = torch.randn(4, 5)
torch.testing.assert_close(f(x), torch.relu(x) * 2 + 1)
{code}
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **(env or {})))
    lines = out.stderr.strip().splitlines()
    raised = [line for before, line in zip(lines, lines[1:]) if "raised:" in before]
    return out.returncode, (raised[0] if raised else "\n".join(lines))


# ---- call time -------------------------------------------------------------------------------

@case("call", "too few inputs")
def too_few_inputs(tmp_path):
    with pytest.raises(RuntimeError, match=r"takes 2 inputs, 1 given"):
        _call(torch.randn(2, 3))


@case("call", "too many inputs")
def too_many_inputs(tmp_path):
    with pytest.raises(RuntimeError, match=r"takes 2 inputs, 3 given"):
        _call(torch.randn(2, 3), torch.randn(3), torch.randn(3))


@case("call", "wrong shape")
def wrong_shape(tmp_path):
    with pytest.raises(RuntimeError, match=r"input 0: expected shape \[2,3\], got \[3,2\]"):
        _call(torch.randn(3, 2), torch.randn(3))


@case("call", "wrong dtype")
def wrong_dtype(tmp_path):
    with pytest.raises(RuntimeError, match=r"input 1: expected dtype DT_FLOAT, got DT_INT64"):
        _call(torch.randn(2, 3), torch.ones(3, dtype=torch.int64))


@case("call", "unsupported dtype (complex)")
def complex_dtype(tmp_path):
    with pytest.raises(RuntimeError, match=r"input 0: torch dtype ComplexFloat is not supported"):
        _call(torch.randn(2, 3, dtype=torch.complex64), torch.randn(3))


@case("call", "meta tensor")
def meta_tensor(tmp_path):
    with pytest.raises(RuntimeError, match=r"input 0 is on meta, the CPU device needs CPU tensors"):
        _call(torch.empty(2, 3, device="meta"), torch.randn(3))


@case("call", "sparse tensor")
def sparse_tensor(tmp_path):
    with pytest.raises(RuntimeError, match=r"input 0 is a Sparse tensor; the engine takes dense \(strided\) tensors"):
        _call(torch.randn(2, 3).to_sparse(), torch.randn(3))


@case("call", "nested tensor")
def nested_tensor(tmp_path):
    nested = torch.nested.nested_tensor([torch.randn(3), torch.randn(3)])
    with pytest.raises(RuntimeError, match=r"input 0 is a nested tensor; the engine takes dense"):
        _call(nested, torch.randn(3))


@case("call", "a Python number where a tensor goes")
def number_for_tensor(tmp_path):
    with pytest.raises(TypeError, match=r"input 1 is int, expected a tensor"):
        _call(torch.randn(2, 3), 3)


@case("call", "None where a tensor goes")
def none_for_tensor(tmp_path):
    with pytest.raises(TypeError, match=r"input 0 is NoneType, expected a tensor"):
        _call(None, torch.randn(3))


@case("call", "transposed (non-contiguous) input")
def transposed_input(tmp_path):
    base = torch.randn(3, 2)
    torch.testing.assert_close(_call(base.t(), torch.ones(3))[0], torch.relu(base.t()) + 1)


@case("call", "a view with a storage offset")
def storage_offset(tmp_path):
    base = torch.randn(5, 3)
    torch.testing.assert_close(_call(base[3:], torch.ones(3))[0], torch.relu(base[3:]) + 1)


@case("call", "channels-last image")
def channels_last(tmp_path):
    conv = torch.nn.Conv2d(3, 4, 3).eval()
    with torch.no_grad():
        _like_eager(conv, torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last))


@case("call", "NaN and Inf values")
def nan_and_inf(tmp_path):
    _like_eager(lambda x: torch.softmax(x * 2, dim=-1) + x, torch.tensor([[float("nan"), 1.0], [float("inf"), 0.0]]))


@case("call", "zero-size batch")
def zero_size_batch(tmp_path):
    _like_eager(lambda x: torch.relu(x) @ torch.ones(3, 2), torch.randn(0, 3))


@case("call", "integer overflow in the values (wraps like eager)")
def int_overflow_values(tmp_path):
    _like_eager(lambda x: x * 3 + 7, torch.tensor([2**62, -2**62, 5], dtype=torch.int64))


@case("call", "the same tensor passed twice")
def aliased_inputs(tmp_path):
    x = torch.randn(4, 4)
    _like_eager(lambda a, b: a * 2 - b.t(), x, x)


@case("call", "an in-place op on partially overlapping inputs")
def overlapping_inplace_inputs(tmp_path):
    def fn(x, y):
        x.add_(y)
        return x * 1

    def compiled(x, y):  # compiled afresh: AOT autograd's graph depends on how the first call's inputs alias
        torch._dynamo.reset()
        return torch.compile(fn, backend=torchair_ge.get_npu_backend(), dynamic=False)(x, y)

    base = torch.arange(10.0)
    with pytest.raises(RuntimeError, match=r"^unsupported operation: some elements of the input tensor and the "
                                           r"written-to tensor refer to a single memory location"):
        compiled(base[0:8], base[2:10])
    assert base.equal(torch.arange(10.0)), "refused, yet written"
    # The same view twice and disjoint views are fine, as in eager.
    same, eager_same = torch.arange(8.0), torch.arange(8.0)
    torch.testing.assert_close(compiled(same[0:8], same[0:8]), fn(eager_same[0:8], eager_same[0:8]))
    apart, eager_apart = torch.arange(16.0), torch.arange(16.0)
    torch.testing.assert_close(compiled(apart[0:8], apart[8:16]), fn(eager_apart[0:8], eager_apart[8:16]))
    assert apart.equal(eager_apart)


@case("call", "in-place update of a slice of an input")
def inplace_slice_update(tmp_path):
    def fn(x):
        x[:, 1:].add_(1)
        return x.sum(0)
    x, y = torch.randn(3, 4), None
    y = x.clone()
    compiled = torch.compile(fn, backend=torchair_ge.get_npu_backend(), dynamic=False)
    torch.testing.assert_close(compiled(x), fn(y))
    torch.testing.assert_close(x, y)  # the caller's tensor is updated, as in eager


@case("call", "inputs that disagree on a symbolic size (model file with symbolic sizes)")
def symbols_disagree(tmp_path):
    model = torch.nn.Linear(8, 4).eval()
    result = torchair_ge.dynamo_export(torch.randn(3, 8), torch.randn(3, 4), model=lambda x, y: model(x) + y,
                                       export_path=str(tmp_path), dynamic=True)
    loaded = torchair_ge.load_model(result.model_path)
    with pytest.raises(RuntimeError, match=r"input 1 .* has shape \[6,4\], the graph expects \[5,4\] for s"):
        loaded.run([torch.randn(5, 8), torch.randn(6, 4)])


# ---- configuration ---------------------------------------------------------------------------

@case("config", "unknown option name")
def unknown_option(tmp_path):
    with pytest.raises(ValueError, match=r"unknown option 'ge_config.nonexistent'; allowed: compile_stat_path"):
        torchair_ge.CompilerConfig().ge_config.nonexistent = 1


@case("config", "option value outside its choices")
def bad_option_value(tmp_path):
    with pytest.raises(ValueError, match=r"invalid value 'zipper' for option "
                                         r"'inference_config.dynamic_gears_merge_policy'; allowed: 'zip', 'product'"):
        torchair_ge.CompilerConfig().inference_config.dynamic_gears_merge_policy = "zipper"


@case("config", "integer option out of range")
def option_out_of_range(tmp_path):
    with pytest.raises(ValueError, match=r"'inference_config.max_shape_instances' takes an integer from 1 to 4096, "
                                         r"got 0"):
        torchair_ge.CompilerConfig().inference_config.max_shape_instances = 0


@case("config", "a backend given something other than a CompilerConfig")
def backend_without_config(tmp_path):
    with pytest.raises(TypeError, match=r"compiler_config must be a torchair_ge.CompilerConfig, got int"):
        torchair_ge.get_npu_backend(compiler_config=3)


@case("config", "optimization_switch naming no pass")
def unknown_pass_switch(tmp_path):
    config = torchair_ge.CompilerConfig()
    with pytest.raises(ValueError, match=r"option 'ge_config.optimization_switch': unknown pass 'Foo' "
                                         r"\(passes and rewrite rules: DeadCodeElimination"):
        config.ge_config.optimization_switch = "Foo:off"


@case("config", "set_dim_gears with one gear")
def one_gear(tmp_path):
    with pytest.raises(ValueError, match=r"dim 0 needs a list of at least 2 sizes, got \[2\]"):
        torchair_ge.inference.set_dim_gears(torch.randn(2, 3), {0: [2]})


@case("config", "set_dim_gears with a gear of 1")
def gear_of_one(tmp_path):
    with pytest.raises(ValueError, match=r"every gear must be an int >= 2 \(Dynamo specializes 0 and 1\)"):
        torchair_ge.inference.set_dim_gears(torch.randn(2, 3), {0: [1, 2]})


@case("config", "set_dim_gears without the tensor's own size")
def gear_not_current(tmp_path):
    with pytest.raises(ValueError, match=r"dim 0 of this tensor is 2, not one of its gears \[4, 8\]"):
        torchair_ge.inference.set_dim_gears(torch.randn(2, 3), {0: [4, 8]})


@case("config", "set_dim_gears on a dim the tensor lacks")
def gear_bad_dim(tmp_path):
    with pytest.raises(ValueError, match=r"dim 5 is not a dim of a 2-d tensor"):
        torchair_ge.inference.set_dim_gears(torch.randn(2, 3), {5: [2, 4]})


# ---- environment -----------------------------------------------------------------------------

@case("environment", "TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT not a number")
def timeout_not_a_number(tmp_path):
    code, error = _fresh_process("", env={"TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT": "abc"})
    assert code == 1 and "option ge.kernelCompileTimeout='abc' must be a positive integer" in error, error


@case("environment", "AUTOFUSE_FLAGS with a value that is not a boolean")
def autofuse_flags_banana(tmp_path):
    code, error = _fresh_process("", env={"AUTOFUSE_FLAGS": "--enable_autofuse=banana"})
    assert code == 1 and "AUTOFUSE_FLAGS: --enable_autofuse takes true or false, got 'banana'" in error, error


@case("environment", "TNG_LOG_LEVEL that is not a level")
def log_level_unknown(tmp_path):
    code, output = _fresh_process("", env={"TNG_LOG_LEVEL": "abc"})
    assert code == 0 and "TNG_LOG_LEVEL='abc' is not a log level" in output, output


# ---- paths -----------------------------------------------------------------------------------

@case("paths", "kernel cache directory is a file")
def cache_dir_is_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "file")})
    assert code == 0, output
    _warned_cache(output, tmp_path / "file", f"{tmp_path / 'file'} is not a directory")


@case("paths", "graph dump directory is a file")
def dump_dir_is_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    code, error = _fresh_process("", config=f"cfg.debug.graph_dump.type = 'txt'\n"
                                            f"cfg.debug.graph_dump.path = {str(tmp_path / 'file')!r}")
    assert code == 1 and f"cannot create directory '{tmp_path / 'file'}': Not a directory" in error, error


@case("paths", "compile statistics under a file")
def stat_path_under_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    code, error = _fresh_process("", config=f"cfg.ge_config.export_compile_stat = '2'\n"
                                            f"cfg.ge_config.compile_stat_path = {str(tmp_path / 'file' / 'sub')!r}")
    assert code == 1 and "Not a directory" in error and str(tmp_path / "file") in error, error


# ---- kernel cache and the C++ compiler -------------------------------------------------------

def _fake_compiler(path, body):
    path.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake-c++ 1.0; exit 0; fi\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@case("compiler", "the C++ compiler fails")
def compiler_fails(tmp_path):
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache"),
                                           "CXX": _fake_compiler(tmp_path / "cc", "echo 'error: broken' >&2; exit 1")})
    assert code == 0 and "running library kernels instead" in output and "failed (exit 1)" in output, output


@case("compiler", "the C++ compiler hangs (and has started a child)")
def compiler_hangs(tmp_path):
    pid_file = tmp_path / "child.pid"
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache"),
                                           "TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT": "1",
                                           "CXX": _fake_compiler(tmp_path / "cc", f"sleep 300 & echo $! > {pid_file}\n"
                                                                                  "sleep 300")})
    assert code == 0 and "did not finish within 1 s" in output, output
    _assert_gone(int(pid_file.read_text()))


def _assert_gone(pid):
    """The process no longer runs (gone, or a zombie waiting for a parent that never reaps it)."""
    for _ in range(100):
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.05)
    raise AssertionError(f"the compiler's child {pid} outlived the timeout (state {state})")


@case("compiler", "the C++ compiler's --version probe hangs")
def compiler_version_hangs(tmp_path):
    path = tmp_path / "cc"
    path.write_text("#!/bin/sh\nsleep 300\n")
    path.chmod(0o755)
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache"),
                                           "TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT": "1", "CXX": str(path)})
    assert code == 0 and "--version did not finish within 1 s" in output, output


@case("compiler", "the C++ compiler writes garbage and exits 0")
def compiler_writes_garbage(tmp_path):
    body = 'while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done; echo garbage > "$out"'
    env = {"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache"), "CXX": _fake_compiler(tmp_path / "cc", body)}
    code, output = _fresh_process("", env=env)
    assert code == 0 and "wrote a library that does not load" in output, output
    assert not list((tmp_path / "cache" / "kernels").glob("*.so")), "the garbage stayed in the cache"


@case("compiler", "no C++ compiler on the machine")
def no_compiler(tmp_path):
    env = {"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache"), "PATH": str(tmp_path), "CXX": ""}
    code, output = _fresh_process("", env=env)
    assert code == 0 and "no C++ compiler found" in output, output


@case("kernel cache", "a cached kernel library corrupted on disk")
def corrupted_kernel_library(tmp_path):
    script = """
import glob, os
libs = glob.glob(os.path.join(os.environ["TORCHAIR_GE_CACHE_DIR"], "kernels", "**", "*.so"), recursive=True)
assert libs, "no cached library"
"""
    env = {"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache")}
    code, output = _fresh_process(script, env=env)
    assert code == 0, output
    for library in (tmp_path / "cache" / "kernels").rglob("*.so"):
        with open(library, "r+b") as f:  # a torn write or a bit flip
            f.seek(100)
            f.write(b"\0garbage\0")
    code, output = _fresh_process("", env=env)  # rebuilt, not loaded
    assert code == 0 and "Traceback" not in output, output


@case("kernel cache", "a planted kernel library with a recomputed unkeyed hash")
def forged_kernel_library(tmp_path):
    env = {"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "cache")}
    code, output = _fresh_process("", env=env)
    assert code == 0, output
    marker = tmp_path / "planted-code-ran"
    (tmp_path / "forged.c").write_text(
        '#include <stdio.h>\n__attribute__((constructor)) static void plant(void) '
        f'{{ FILE* f = fopen("{marker}", "w"); if (f) fclose(f); }}\n')
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "forged.so"), str(tmp_path / "forged.c")],
                   check=True)
    forged = (tmp_path / "forged.so").read_bytes()
    libraries = list((tmp_path / "cache" / "kernels").glob("*.so"))
    assert libraries, "no cached library"
    for library in libraries:  # the attacker can write the cache but not read its key
        library.write_bytes(forged)
        library.with_suffix(".mac").write_text(hashlib.sha256(forged).hexdigest())
        library.with_suffix(".sum").write_text(hashlib.md5(forged).hexdigest())
    code, output = _fresh_process("", env=env)
    assert code == 0 and "its tag does not verify); rebuilding it" in output, output
    assert not marker.exists(), "the planted library was loaded"
    assert all(library.read_bytes() != forged for library in libraries)


def _warned_cache(output, cache, reason):
    assert f"kernel cache {cache} not used: " in output and reason in output, output
    assert "private directory of this process" in output, output


@case("kernel cache", "a kernel cache others can write")
def cache_world_writable(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(cache)})
    assert code == 0, output
    _warned_cache(output, cache, f"{cache} is writable by its group or others (mode 777)")
    assert not (cache / "kernels").exists() and not (cache / "key").exists()


@case("kernel cache", "a kernel cache another user owns")
def cache_foreign_owner(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to give the cache to another user")
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chown(cache, 65534, 65534)
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(cache)})
    assert code == 0, output
    _warned_cache(output, cache, f"{cache} belongs to user 65534")


@case("kernel cache", "a kernel cache reached through a symbolic link")
def cache_symlink(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "link")})
    assert code == 0, output
    _warned_cache(output, tmp_path / "link", "is a symbolic link (set TORCHAIR_GE_CACHE_ALLOW_SYMLINKS=1")
    code, output = _fresh_process("", env={"TORCHAIR_GE_CACHE_DIR": str(tmp_path / "link"),
                                           "TORCHAIR_GE_CACHE_ALLOW_SYMLINKS": "1"})
    assert code == 0 and "not used" not in output, output
    assert list((tmp_path / "real" / "kernels").glob("*.so")), "the allowed link's target holds no kernels"


# ---- op plugins ------------------------------------------------------------------------------

@case("op plugin", "a plugin path that does not exist")
def plugin_missing(tmp_path):
    with pytest.raises(RuntimeError, match=r"NotFound: op plugin '.*nope.so': no such file"):
        torchair_ge.load_op_plugin(str(tmp_path / "nope.so"))


@case("op plugin", "a plugin that is not a shared library")
def plugin_not_elf(tmp_path):
    (tmp_path / "plugin.so").write_text("not an ELF file")
    with pytest.raises(RuntimeError, match=r"op plugin '.*plugin.so': .*(file too short|invalid ELF header)"):
        torchair_ge.load_op_plugin(str(tmp_path / "plugin.so"))


@case("op plugin", "a shared library without the plugin entry point")
def plugin_without_init(tmp_path):
    libm = next(p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6")
                if os.path.exists(p))
    with pytest.raises(RuntimeError, match=r"does not export torchair_ge_op_plugin_init"):
        torchair_ge.load_op_plugin(libm)


# ---- model and graph files -------------------------------------------------------------------

@functools.cache
def _small_model_file(directory):
    model = torch.nn.Linear(8, 4).eval()
    return torchair_ge.dynamo_export(torch.randn(2, 8), model=model, export_path=directory)


@case("files", "a model file beyond the element limit of the machine loading it")
def model_file_over_limit(tmp_path):
    result = _small_model_file(str(tmp_path / "export"))
    np.save(tmp_path / "x.npy", np.zeros((2, 8), dtype=np.float32))
    out = subprocess.run([str(GE_RUN), result.model_path, "--inputs", str(tmp_path / "x.npy")],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, TORCHAIR_GE_MAX_TENSOR_ELEMENTS="16"))
    assert out.returncode == 1 and "more than ge.maxTensorElements=16 allows" in out.stderr, out.stderr


@case("files", "a truncated model file")
def truncated_model_file(tmp_path):
    result = _small_model_file(str(tmp_path / "export"))
    data = pathlib.Path(result.model_path).read_bytes()
    (tmp_path / "bad.tgm").write_bytes(data[:-3])
    with pytest.raises(RuntimeError, match=r"truncated"):
        torchair_ge.load_model(str(tmp_path / "bad.tgm"))


@case("files", "a model file with a flipped bit")
def flipped_model_file(tmp_path):
    result = _small_model_file(str(tmp_path / "export"))
    data = bytearray(pathlib.Path(result.model_path).read_bytes())
    data[len(data) // 2] ^= 0x10
    (tmp_path / "bad.tgm").write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match=r"checksum does not match"):
        torchair_ge.load_model(str(tmp_path / "bad.tgm"))


_DATA = ('op { name: "x" type: "Data" attr { key: "index" value { i: 0 } } '
         'output_desc { dtype: "DT_FLOAT" shape: 2 shape: 3 } }\n')
_OUT = 'op { name: "NetOutput" type: "NetOutput" input: "r:0" }\n'


def _run_text(text, inputs):
    session, graph_id = default_session(), next_graph_id()
    session.add_graph(graph_id, _C.graph_from_text(text))
    try:
        session.compile_graph(graph_id)
        return session.run_graph(graph_id, inputs)
    finally:
        session.remove_graph(graph_id)


@case("files", "graph text with an in-place node that lacks its input")
def inplace_node_without_input(tmp_path):
    text = 'name: "g"\n' + _DATA + 'op { name: "r" type: "InplaceIndexCopy" output_desc { dtype: "DT_FLOAT" } }\n' + _OUT
    with pytest.raises(_C.GeError, match=r"stage prepare\): InplaceIndexCopy 'r': needs 3 inputs, has 0"):
        _run_text(text, [torch.randn(2, 3)])


@case("files", "graph text whose output descs leave out the origin shape")
def out_desc_without_origin(tmp_path):
    text = 'name: "g"\n' + _DATA + 'op { name: "r" type: "Relu" input: "x:0" output_desc { dtype: "DT_FLOAT" ' \
           'shape: 2 shape: 3 } }\n' + _OUT
    x = torch.randn(2, 3)
    assert _run_text(text, [x])[0].equal(torch.relu(x))


@case("files", "graph text whose output desc differs only in its origin shape")
def out_desc_origin_differs(tmp_path):
    text = 'name: "g"\n' + _DATA + 'op { name: "r" type: "Relu" input: "x:0" output_desc { dtype: "DT_FLOAT" ' \
           'shape: 2 shape: 3 origin_shape: 3 origin_shape: 2 origin_format: "ND" } }\n' + _OUT
    with pytest.raises(_C.GeError, match=re.escape(
            "Relu 'r' output 0: InferShape gives DT_FLOAT[2,3] (format ND, origin shape [2,3], origin format ND) "
            "but the graph says DT_FLOAT[2,3] (format ND, origin shape [3,2], origin format ND)")):
        _run_text(text, [torch.randn(2, 3)])


@case("files", "graph text that broadcasts to 2^41 elements and reduces")
def graph_too_large(tmp_path):
    builder = ge.GraphBuilder("huge")
    with ge.graph_context(builder):
        x = builder.create_input(0, ge.DataType.DT_FLOAT, [1, 1])
        wide = ge.op("BroadcastTo", x, ge.Const(torch.tensor([2**20, 2**21])))
        builder.set_outputs([ge.op("ReduceSum", wide, ge.Const(torch.tensor([0, 1])))])
    with pytest.raises(_C.GeError, match=re.escape(
            "BroadcastTo 'BroadcastTo' output 0 DT_FLOAT[1048576,2097152] has 2199023255552 elements, more than "
            "ge.maxTensorElements=17179869184 allows ($TORCHAIR_GE_MAX_TENSOR_ELEMENTS raises it)")):
        _run_text(builder.build().to_text(), [torch.randn(1, 1)])


@case("environment", "TORCHAIR_GE_MAX_WORK_PER_RUN below what a graph needs")
def work_limit_exceeded(tmp_path):
    code, error = _fresh_process("", env={"TORCHAIR_GE_MAX_WORK_PER_RUN": "10"})
    assert code == 1 and "elements per run, more than ge.maxWorkPerRun=10 allows" in error, error


@case("environment", "TORCHAIR_GE_MAX_TENSOR_ELEMENTS not a number")
def tensor_limit_not_a_number(tmp_path):
    code, error = _fresh_process("", env={"TORCHAIR_GE_MAX_TENSOR_ELEMENTS": "lots"})
    assert code == 1 and ("$TORCHAIR_GE_MAX_TENSOR_ELEMENTS: option ge.maxTensorElements='lots' must be a positive "
                          "integer up to 2^50 (1125899906842624)") in error, error


@case("boundary", "a C++ exception that escapes the engine (a bug)")
def escaped_cpp_exception(tmp_path):
    with pytest.raises(_C.GeError, match=r"^internal error \(a bug in torchair_ge; please report it with the graph "
                                         r"or model\): vector::_M_range_check"):
        _C._raise_cpp_exception_for_testing()


@case("files", "graph text that is not a graph")
def graph_text_garbage(tmp_path):
    with pytest.raises(RuntimeError, match=r"graph text does not parse as ge.proto.GraphDef"):
        _C.graph_from_text('name: "g"\nnode { name: "d" type: "InplaceIndexCopy" }\n')


@case("files", "a .npy input that is not numpy")
def npy_junk(tmp_path):
    result = _small_model_file(str(tmp_path / "export"))
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    out = subprocess.run([str(GE_RUN), result.model_path, "--inputs", str(tmp_path / "junk.npy")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "not a .npy file" in out.stderr, out.stderr


@case("files", "a .npy input of the wrong shape for ge_run")
def npy_wrong_shape(tmp_path):
    result = _small_model_file(str(tmp_path / "export"))
    np.save(tmp_path / "wrong.npy", np.zeros((3, 7), dtype=np.float32))
    out = subprocess.run([str(GE_RUN), result.model_path, "--inputs", str(tmp_path / "wrong.npy")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "[3,7]" in out.stderr, out.stderr


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name, tmp_path):
    CASES[name][2](tmp_path)


def test_every_case_is_in_the_reliability_table():
    assert len(CASES) >= 40
    table = (ROOT / "docs" / "reliability.md").read_text()
    rows = set(re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M))
    assert rows == set(CASES), f"missing from docs/reliability.md: {sorted(set(CASES) - rows)}; " \
                               f"not a case: {sorted(rows - set(CASES))}"
