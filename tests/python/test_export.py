"""dynamo_export -> model file -> ge_run (no Python) and load_model: outputs equal eager, also
for models with symbolic sizes at sizes other than the export's; bad model files are clear errors."""
import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

import torchair_ge
from bench.models import ZOO, bert, resnet
from torchair_ge import _C

ROOT = pathlib.Path(__file__).resolve().parents[2]
GE_RUN = pathlib.Path(os.environ.get("TORCHAIR_GE_BUILD", ROOT / "build")) / "ge_run"


def test_engine_version_is_the_package_version():
    assert _C.engine_version() == torchair_ge.__version__


def test_ge_run_links_no_libpython():
    assert GE_RUN.exists(), f"{GE_RUN} was not built"
    libraries = subprocess.run(["ldd", str(GE_RUN)], capture_output=True, text=True, check=True).stdout
    assert "libtorch_cpu" in libraries  # the CPU device's kernels
    assert "libpython" not in libraries and "libtorch_python" not in libraries, libraries


def _eager(name):
    model, inputs = ZOO[name].build()
    with torch.no_grad():
        return model(*inputs)


@pytest.mark.parametrize("name", ["bert", "resnet_b1", "gpt_decode"])
def test_exported_model_runs_in_ge_run_like_eager(name, tmp_path):
    model, inputs = ZOO[name].build()
    result = torchair_ge.dynamo_export(*inputs, model=model, export_path=str(tmp_path), export_name=name)
    assert pathlib.Path(result.pbtxt_path).read_text().startswith("name:")
    assert result.report["tasks"] > 0
    want = _eager(name)
    out = subprocess.run([str(GE_RUN), result.model_path, "--inputs", *result.input_paths, "--outputs",
                          str(tmp_path / "out"), "--repeat", "3"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "plan checked" in out.stdout and "median" in out.stdout, out.stdout
    got = torch.from_numpy(np.load(tmp_path / "out" / "output_0.npy"))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    # The same file from Python.
    loaded = torchair_ge.load_model(result.model_path)
    assert loaded.plan_checked and loaded.input_names == result.input_names
    got = loaded.run([torch.from_numpy(np.load(p)) for p in result.input_paths])
    torch.testing.assert_close(got[0], want, rtol=1e-4, atol=1e-4)


def test_gpt_decode_updates_its_cache_inputs_in_place(tmp_path):
    model, inputs = ZOO["gpt_decode"].build()
    result = torchair_ge.dynamo_export(*inputs, model=model, export_path=str(tmp_path))
    caches = [i for i, n in enumerate(result.input_names) if "k_cache" in n]
    assert len(caches) == 8
    loaded = torchair_ge.load_model(result.model_path)
    args = [torch.from_numpy(np.load(p)) for p in result.input_paths]
    before = args[caches[0]].clone()
    loaded.run(args)
    changed = (args[caches[0]] != before).any(dim=-1)  # [1, heads, positions]
    assert changed[0, :, 100].all() and not changed[0, :, :100].any() and not changed[0, :, 101:].any()


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.GELU(), torch.nn.Linear(512, 8)).eval()
    x = torch.randn(4, 64)
    directory = tmp_path_factory.mktemp("small")
    result = torchair_ge.dynamo_export(x, model=model, export_path=str(directory))
    with torch.no_grad():
        return result, x, model(x)


def _load_error(path):
    with pytest.raises(_C.GeError) as error:
        torchair_ge.load_model(str(path))
    return str(error.value)


def test_bad_model_files_are_clear_errors(small_model, tmp_path):
    result, x, want = small_model
    good = pathlib.Path(result.model_path).read_bytes()
    weights = pathlib.Path(result.model_path + ".weights")
    assert weights.exists()  # the 512x64 weight is above the 64 KiB inline limit
    bad = tmp_path / "export.tgm"
    (tmp_path / "export.tgm.weights").write_bytes(weights.read_bytes())
    cases = {
        "checksum does not match": good[:200] + bytes([good[200] ^ 1]) + good[201:],
        "truncated": good[:-1],
        "trailing bytes": good + b"\0" * 16,
        "shorter than the 64-byte header": good[:10],
        "magic": b"\x7fELF" + good[4:],
        "format version 7 is not supported": good[:8] + b"\x07" + good[9:],
        "the header says 1099511627776 payload bytes": good[:16] + (2**40).to_bytes(8, "little") + good[24:],
    }
    for message, data in cases.items():
        bad.write_bytes(data)
        assert message in _load_error(bad), message
    bad.write_bytes(good)
    (tmp_path / "export.tgm.weights").write_bytes(weights.read_bytes()[:-64])
    assert "the model file says" in _load_error(bad)
    (tmp_path / "export.tgm.weights").write_bytes(weights.read_bytes())
    got = torchair_ge.load_model(str(bad)).run([x])
    torch.testing.assert_close(got[0], want, rtol=1e-5, atol=1e-5)


def test_ge_run_reports_bad_inputs(small_model, tmp_path):
    result, x, _ = small_model
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros((3, 64), dtype=np.float32))
    out = subprocess.run([str(GE_RUN), result.model_path, "--inputs", str(wrong)], capture_output=True, text=True)
    assert out.returncode == 1 and "ge_run:" in out.stderr and "[3,64]" in out.stderr, out.stderr
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    out = subprocess.run([str(GE_RUN), result.model_path, "--inputs", str(tmp_path / "junk.npy")],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "not a .npy file" in out.stderr, out.stderr
    out = subprocess.run([str(GE_RUN), result.model_path], capture_output=True, text=True)
    assert out.returncode == 0 and "l_args_0_ DT_FLOAT[4,64]" in out.stdout, out.stdout


def _ge_run(model_path, inputs, out_dir, repeat=0):
    """ge_run on .npy files (paths) or tensors (written to out_dir first); returns (stdout, first output)."""
    paths = []
    for k, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            path = out_dir / f"given_{k}.npy"
            out_dir.mkdir(parents=True, exist_ok=True)
            np.save(path, x.numpy())
            x = path
        paths.append(str(x))
    out = subprocess.run([str(GE_RUN), model_path, "--inputs", *paths, "--outputs", str(out_dir / "out"),
                          "--repeat", str(repeat)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout, torch.from_numpy(np.load(out_dir / "out" / "output_0.npy"))


# Sizes other than the export's, inside what Dynamo's guards allow (resnet's trace guards its
# image size to 97..128: a decomposition chose its path by the element count).
_OTHER_SIZES = {"bert": lambda: bert.build(batch=3, seq=40)[1], "resnet_b1": lambda: resnet.build(size=104)[1]}


@pytest.mark.parametrize("name", ["bert", "resnet_b1", "gpt_decode"])
def test_dynamic_export_runs_other_sizes_in_ge_run(name, tmp_path):
    model, inputs = ZOO[name].build()
    result = torchair_ge.dynamo_export(*inputs, model=model, export_path=str(tmp_path), export_name=name,
                                       dynamic=True)
    stdout, got = _ge_run(result.model_path, result.input_paths, tmp_path / "same")
    torch.testing.assert_close(got, _eager(name), rtol=1e-4, atol=1e-4)
    if name == "gpt_decode":  # token [1, 1] and position [1]: Dynamo specializes sizes of 1, nothing varies
        assert "symbolic" not in result.report and "plan checked" in stdout
        return
    assert result.report["size_sites"] > 0 and "symbolic sizes" in stdout, stdout
    other = _OTHER_SIZES[name]()
    _, got = _ge_run(result.model_path, other, tmp_path / "other")
    with torch.no_grad():
        torch.testing.assert_close(got, model(*other), rtol=1e-4, atol=1e-4)
    loaded = torchair_ge.load_model(result.model_path)  # the same file from Python: an instance per size
    assert loaded.dynamic and not loaded.plan_checked and -1 in loaded.inputs[0][1]
    with torch.no_grad():
        for args in (other, inputs, other):
            torch.testing.assert_close(loaded.run(list(args))[0], model(*args), rtol=1e-4, atol=1e-4)
    assert loaded.num_instances == 2


def test_dynamic_model_files_check_every_call(tmp_path):
    """Inputs that disagree on a symbol, or sizes outside Dynamo's guards, are clear errors."""
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).eval()
    result = torchair_ge.dynamo_export(torch.randn(3, 8), torch.randn(3, 4), export_path=str(tmp_path),
                                       model=lambda x, y: model(x) + y, dynamic=True)
    loaded = torchair_ge.load_model(result.model_path)
    x, y = torch.randn(5, 8), torch.randn(5, 4)
    torch.testing.assert_close(loaded.run([x, y])[0], model(x) + y)
    with pytest.raises(_C.GeError, match=r"input 1 .* has shape \[6,4\], the graph expects \[5,4\]"):
        loaded.run([x, torch.randn(6, 4)])
    with pytest.raises(_C.GeError, match="outside the range"):
        loaded.run([torch.randn(1, 8), torch.randn(1, 4)])  # Dynamo specializes 1: the range starts at 2
    out = subprocess.run([str(GE_RUN), result.model_path], capture_output=True, text=True)
    assert out.returncode == 0 and "DT_FLOAT[-1,8]" in out.stdout and "in [2, inf]" in out.stdout, out.stdout
