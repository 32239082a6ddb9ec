"""The OpInfo sweep (tests/opinfo_sweep.py) over the ops this project converts: a fixed
subset of samples per op here; `make test-full` runs every sample and rewrites
docs/supported_ops.md."""
import os

from tests import opinfo_sweep

FULL = os.environ.get("TORCHAIR_GE_FULL_SWEEP") == "1"


def test_opinfo_samples_match_eager():
    rows = opinfo_sweep.sweep(quick=not FULL)
    total = sum(run for _, _, run, _, _ in rows)
    passed = sum(ok for _, _, _, ok, _ in rows)
    failures = [f"{name} {dtype} {sample}: {reason}" for name, dtype, _, _, fails in rows for sample, reason in fails]
    assert total > 300, f"only {total} samples ran"
    assert all(reason for *_, reason in (f.rpartition(": ") for f in failures)), "every failure has a reason"
    assert passed >= 0.95 * total, f"{passed}/{total} pass; failures:\n" + "\n".join(failures)
    _assert_every_failure_is_before_the_backend(failures)
    names = {name for name, *_ in rows}
    missing = [op for op in opinfo_sweep.CONVERTED_OPS if not any(n == op or n.startswith(op + ".") for n in names)]
    assert not missing, f"no OpInfo entry ran for {missing}"


def test_opinfo_samples_match_eager_with_symbolic_sizes():
    """The dynamic variant: each sample traced with symbolic sizes, run at its own sizes and with
    every dim of size >= 2 one larger."""
    rows = opinfo_sweep.sweep_dynamic(quick=not FULL)
    total = sum(run for _, _, run, _, _ in rows)
    passed = sum(ok for _, _, _, ok, _ in rows)
    failures = [f"{name} {dtype} {sample}: {reason}" for name, dtype, _, _, fails in rows for sample, reason in fails]
    assert total > 80, f"only {total} samples ran"
    assert passed >= 0.95 * total, f"{passed}/{total} pass; failures:\n" + "\n".join(failures)
    _assert_every_failure_is_before_the_backend(failures)


def _assert_every_failure_is_before_the_backend(failures):
    """Samples that fail only where AOT autograd traces them without Dynamo (data-dependent ops)
    are torch's; every sample the engine got a graph for matches eager."""
    ours = [f for f in failures if opinfo_sweep.BEFORE_BACKEND not in f]
    assert not ours, "samples the engine got wrong or refused:\n" + "\n".join(ours)
