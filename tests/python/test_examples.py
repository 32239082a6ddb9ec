"""The README's first command runs examples/quickstart.py (`make demo`): it must run to its end on
this build, every compiled model matching eager (it checks that itself and says OK)."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parents[2]


def test_the_quickstart_runs_to_its_end(tmp_path):
    env = {**os.environ, "TORCHAIR_GE_DEMO_DUMP": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "OK: compiled outputs match eager." in done.stdout
    assert "The first FusedConv2D of the final graph" in done.stdout  # the ResNet's norms folded in
