"""cache_compile: a second process loads the compiled function (no Dynamo trace, no AOT, no
optimizer) and gets eager's numbers; a changed input, attribute or source recompiles with a
warning instead of running a stale graph. Each process is a fresh interpreter (subprocess)."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

NET = """
import torch

class Net(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        torch.manual_seed(0)
        self.fc1, self.fc2 = torch.nn.Linear(32, 64), torch.nn.Linear(64, 8)
        self.scale = scale

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) * self.scale
"""

SCRIPT = """
import json, sys, torch, torchair_ge
sys.path.insert(0, sys.argv[1])
from net import Net
scale, batch = float(sys.argv[3]), int(sys.argv[4])
model = Net(scale).eval()
forward = torchair_ge.inference.cache_compile(model.forward, cache_dir=sys.argv[2])
x = torch.randn(batch, 32, generator=torch.Generator().manual_seed(1))
with torch.no_grad():
    got = forward(x)
    torch.testing.assert_close(got, model(x))
    torch.testing.assert_close(forward(x), got)  # the second call runs without a guard failure
print(json.dumps({"event": forward.last_event}))
"""


def _run(tmp_path, scale=2.0, batch=4, net=NET):
    (tmp_path / "net.py").write_text(textwrap.dedent(net))
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(tmp_path), str(tmp_path / "cache"), str(scale), str(batch)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])["event"], out.stderr


def test_second_process_loads_the_compiled_function(tmp_path):
    assert _run(tmp_path)[0] == "compiled"
    event, log = _run(tmp_path)
    assert event == "loaded", log[-2000:]
    entries = list((tmp_path / "cache").glob("Net.forward_*/rank_0/compiled_fn.bin"))
    assert len(entries) == 1
    assert oct(entries[0].parent.stat().st_mode & 0o777) == "0o700"


def test_a_failed_guard_recompiles_with_a_warning(tmp_path):
    assert _run(tmp_path)[0] == "compiled"
    event, log = _run(tmp_path, batch=6)  # another input shape
    assert event == "recompiled" and "does not fit this call" in log
    event, log = _run(tmp_path, scale=3.0, batch=6)  # an attribute Dynamo specialized on
    assert event == "recompiled" and "does not fit this call" in log
    assert _run(tmp_path, scale=3.0, batch=6)[0] == "loaded"


def test_an_edited_script_recompiles_instead_of_running_stale_code(tmp_path):
    assert _run(tmp_path)[0] == "compiled"
    edited = NET.replace("torch.relu(self.fc1(x))", "torch.sigmoid(self.fc1(x))")
    event, log = _run(tmp_path, net=edited)  # the script compares with eager: stale code would fail
    assert event == "compiled" and "changed since it was cached" in log, log[-2000:]


def test_a_corrupted_entry_is_rebuilt(tmp_path):
    assert _run(tmp_path)[0] == "compiled"
    entry = next((tmp_path / "cache").glob("Net.forward_*/rank_0/compiled_fn.bin"))
    entry.write_bytes(entry.read_bytes()[:100])
    event, log = _run(tmp_path)
    assert event == "compiled" and "cannot load" in log


def test_cache_compile_refuses_training_calls(tmp_path):
    import torch

    import torchair_ge

    model = torch.nn.Linear(4, 4)
    forward = torchair_ge.inference.cache_compile(model.forward, cache_dir=str(tmp_path))
    with pytest.raises(Exception, match="under torch.no_grad"):
        forward(torch.randn(2, 4))
