"""OpInfo sweep: every sample input of torch's OpInfo database, for the ops this project
converts, compiled with the torchair_ge backend and compared with eager.

    python tests/opinfo_sweep.py            # full sweep, writes docs/supported_ops.md
    python tests/opinfo_sweep.py --quick    # a fixed subset of samples per op (what make test runs)
"""
import argparse
import collections
import os
import sys
import time
import traceback
import warnings

import torch
import torch._dynamo
from torch.utils import _pytree as pytree

import torchair_ge
from torch._functorch.aot_autograd import aot_function
from torchair_ge.decompositions import default_decompositions

# OpInfo names whose ATen ops this project converts natively (docs/ops.md).
CONVERTED_OPS = [
    "add", "sub", "rsub", "mul", "div", "neg", "maximum", "minimum", "pow", "square",
    "nn.functional.relu", "nn.functional.gelu", "nn.functional.silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
    "mm", "addmm", "bmm", "nn.functional.linear",
    "nn.functional.conv2d", "nn.functional.max_pool2d", "nn.functional.avg_pool2d", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.batch_norm", "softmax", "nn.functional.layer_norm", "nn.functional.scaled_dot_product_attention",
    "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand", "cat", "stack",
    "select", "narrow", "index_select", "nn.functional.embedding", "clone", "contiguous", "to",
    "mean", "sum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "bitwise_not",
    "masked_fill", "where",
    "abs", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "expm1", "log1p", "sin", "cos", "tan", "atan",
    "erf", "nn.functional.hardsigmoid", "nn.functional.hardswish", "nn.functional.mish", "nn.functional.leaky_relu",
    "nn.functional.elu", "nn.functional.softplus", "nn.functional.hardtanh", "nn.functional.relu6", "clamp",
    "clamp_min", "clamp_max", "floor_divide", "remainder", "amax", "amin", "prod", "argmax", "argmin", "max", "min",
    "log_softmax", "cumsum",
    "zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full", "split", "split_with_sizes",
    "chunk", "unbind", "nn.functional.glu", "triu", "tril", "flip", "roll", "repeat", "nn.functional.pad",
    "logical_xor", "isnan", "isinf", "lerp", "addcmul", "addcdiv", "baddbmm", "exp2", "nn.functional.max_pool1d",
    "nn.functional.avg_pool1d",
    "gather", "scatter", "scatter_add", "index_copy", "topk", "sort", "bitwise_and", "bitwise_or", "bitwise_xor", "any", "all",
    "logsumexp", "var", "std", "nn.functional.group_norm",
    "nn.functional.conv1d", "nn.functional.conv_transpose2d", "log2", "nan_to_num", "linalg.vector_norm",
    "__getitem__", "index_put", "histc", "slice_scatter", "select_scatter",
]
DTYPES = [torch.float32, torch.int64]
QUICK_SAMPLES = 6
TOLERANCE = dict(rtol=1e-4, atol=1e-5, equal_nan=True)  # accumulation order may differ from eager's kernels


def _opinfos():
    from torch.testing._internal.common_methods_invocations import op_db
    by_name = collections.defaultdict(list)
    for info in op_db:
        by_name[info.name].append(info)
    return [(name, info) for name in CONVERTED_OPS for info in by_name.get(name, [])]


def _as_function(info, sample):
    """(fn of the sample's tensors, those tensors)."""
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    tensor_slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def fn(*tensors):
        filled = list(leaves)
        for slot, t in zip(tensor_slots, tensors):
            filled[slot] = t
        inp, args, kwargs = pytree.tree_unflatten(filled, spec)
        return info.op(inp, *args, **kwargs)

    inputs = [leaves[i] for i in tensor_slots]
    return fn, inputs


def _eager(fn, inputs):
    """fn's result, or None when eager rejects the inputs or does not agree with itself (random ops)."""
    try:
        expected = fn(*inputs)
        torch.testing.assert_close(fn(*inputs), expected, **TOLERANCE)
    except Exception:  # noqa: BLE001 - a sample eager rejects or cannot repeat is not ours to judge
        return None
    return expected


def _compare(compiled, inputs, expected):
    try:
        got = compiled(*inputs)
    except Exception as e:  # noqa: BLE001 - recorded as the failure reason
        inner = getattr(e, "inner_exception", e)
        where = "" if _reached_backend(e) else BEFORE_BACKEND + ": "
        return f"{where}{type(inner).__name__}: {str(inner).strip().splitlines()[0][:160]}"
    try:
        torch.testing.assert_close(got, expected, **TOLERANCE)
    except AssertionError as e:
        return "mismatch: " + " ".join(str(e).split())[:160]
    return None


# The reason's prefix for a failure raised before torchair_ge saw a graph (_reached_backend).
BEFORE_BACKEND = "torch's trace, before the backend"


def _reached_backend(error):
    """Whether the failure was raised in (or under) torchair_ge, rather than by AOT autograd's
    own tracing before the backend saw a graph."""
    backend_dir = os.path.dirname(torchair_ge.__file__)
    while error is not None:  # the error and what it was raised from
        if any(frame.filename.startswith(backend_dir) for frame in traceback.extract_tb(error.__traceback__)):
            return True
        error = error.__cause__ or error.__context__
    return False


def _compile(fn, dynamic=False):
    # AOT autograd (functionalization + our decompositions) straight into the engine: the
    # same graphs the backend compiles, without Dynamo (which refuses to trace torch.testing).
    config = torchair_ge.CompilerConfig()
    config.inference_config.new_shape_policy = "compile"  # the grown sizes run on the engine, not eagerly
    compiler = torchair_ge.get_compiler(config)
    return aot_function(fn, fw_compiler=compiler, inference_compiler=compiler,
                        decompositions=default_decompositions(), dynamic=dynamic)


def _run_sample(info, sample):
    """None when compiled matches eager, else the reason; 'skip' when eager rejects the sample
    or does not agree with itself (random ops such as dropout)."""
    if sample.kwargs.get("dropout_p", 0):
        return "skip"  # random: a compiled graph draws its numbers differently from eager
    fn, inputs = _as_function(info, sample)
    with torch.no_grad():
        expected = _eager(fn, inputs)
        if expected is None:
            return "skip"
        return _compare(_compile(fn), inputs, expected)


def _grown(t, sizes):
    """`t` with every dim resized by `sizes` (old -> new), values repeated cyclically along each
    grown dim, so value domains (indices) stay valid and equal dims stay equal."""
    for dim, n in enumerate(t.shape):
        if sizes.get(n, n) != n:
            t = t.index_select(dim, torch.arange(sizes[n]) % n)
    return t.clone()


def _run_dynamic(info, sample):
    """The dynamic variant: traced with symbolic sizes (aot dynamic=True), called with the
    sample's tensors and then with every dim of size >= 2 one larger; None when both match eager.
    'skip' when eager rejects either, when nothing grew, or when the trace specialized the sizes
    that grew (the graph then refuses them with a DynamicShapeError, where Dynamo would recompile)."""
    if sample.kwargs.get("dropout_p", 0):
        return "skip"
    fn, inputs = _as_function(info, sample)
    sizes = {n: n + 1 for t in inputs for n in t.shape if n >= 2}
    if not sizes:
        return "skip"
    grown = [_grown(t, sizes) for t in inputs]
    with torch.no_grad():
        expected = [_eager(fn, inputs), _eager(fn, grown)]
        if any(e is None for e in expected):
            return "skip"
        compiled = _compile(fn, dynamic=True)
        reason = _compare(compiled, inputs, expected[0])
        if reason is None:
            reason = _compare(compiled, grown, expected[1])
            if reason and reason.startswith("DynamicShapeError"):
                return "skip"
    return reason


def sweep(quick=False, log=None):
    """Rows of (op, dtype, samples, passed, failures[(sample description, reason)])."""
    return _sweep(_run_sample, DTYPES, QUICK_SAMPLES if quick else None, "", log)


def sweep_dynamic(quick=False, log=None):
    """Rows like sweep()'s for the dynamic variant: QUICK_SAMPLES samples per op and dtype (the
    quick sweep: the first float32 sample of each op)."""
    return _sweep(_run_dynamic, DTYPES[:1] if quick else DTYPES, 1 if quick else QUICK_SAMPLES, "dynamic ", log)


def _sweep(run_sample, dtypes, samples_per_op, tag, log):
    """`run_sample(info, sample)` over the first `samples_per_op` samples (all: None) of every
    converted op and dtype; 'skip' results are not counted."""
    rows = []
    warnings.filterwarnings("ignore")
    for name, info in _opinfos():
        for dtype in dtypes:
            if dtype not in info.supported_dtypes("cpu"):
                continue
            passed, failures, run = 0, [], 0
            for sample in list(info.sample_inputs("cpu", dtype))[:samples_per_op]:
                reason = run_sample(info, sample)
                if reason == "skip":
                    continue
                run += 1
                if reason is None:
                    passed += 1
                else:
                    failures.append((_describe(sample), reason))
            label = name + (f".{info.variant_test_name}" if info.variant_test_name else "")
            rows.append((label, str(dtype).replace("torch.", ""), run, passed, failures))
            if log:
                log(f"{label:<40} {str(dtype):<14} {tag}{passed}/{run}")
    return rows


def _describe(sample):
    def shape(x):
        return f"{list(x.shape)}" if isinstance(x, torch.Tensor) else repr(x)
    parts = [shape(sample.input)] + [shape(a) for a in sample.args]
    parts += [f"{k}={shape(v)}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)[:100]


def _cell(text):
    return text.replace("|", "\\|")


def write_markdown(rows, path, quick, seconds, dynamic_rows=()):
    total = sum(r[2] for r in rows)
    passed = sum(r[3] for r in rows)
    lines = ["# Supported ops: OpInfo sweep", "",
             "Written by `python tests/opinfo_sweep.py` (`make test-full` runs the full sweep; `make test` "
             f"a fixed subset of {QUICK_SAMPLES} samples per op). Every sample input that PyTorch's OpInfo "
             "database has for an op this project converts is traced by AOT autograd (as `get_npu_backend()` "
             "does), compiled by the engine and compared with eager (rtol 1e-4, atol 1e-5). Samples eager rejects, "
             "and samples of random ops "
             "(dropout), are not counted. A reason that starts with \"torch's trace, before the backend\" was "
             "raised by AOT autograd's own tracing (this sweep calls it without Dynamo, which would break the graph "
             "at a data-dependent op), before torchair_ge saw a graph.", "",
             f"**{passed} of {total} samples pass ({100.0 * passed / max(total, 1):.1f}%)** over {len(rows)} "
             f"op/dtype pairs, {'quick' if quick else 'full'} sweep, {seconds:.0f} s.", "",
             "| op | dtype | samples | passed | failed | reasons |", "|---|---|---|---|---|---|"]
    for name, dtype, run, ok, failures in rows:
        reasons = sorted({reason for _, reason in failures})
        reason_text = "<br>".join(_cell(r) for r in reasons[:3]) + (" …" if len(reasons) > 3 else "")
        lines.append(f"| {name} | {dtype} | {run} | {ok} | {run - ok} | {reason_text} |")
    failed = [(name, dtype, sample, reason) for name, dtype, _, _, failures in rows for sample, reason in failures]
    if failed:
        lines += ["", "## Failing samples", "", "| op | dtype | sample | reason |", "|---|---|---|---|"]
        for name, dtype, sample, reason in failed:
            lines.append(f"| {name} | {dtype} | `{sample}` | {_cell(reason)} |")
    if dynamic_rows:
        lines += _dynamic_section(dynamic_rows, quick)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _dynamic_section(rows, quick):
    total = sum(r[2] for r in rows)
    passed = sum(r[3] for r in rows)
    which = "the first float32 sample per op" if quick else f"{QUICK_SAMPLES} samples per op and dtype"
    lines = ["", "## Dynamic shapes", "",
             f"The same ops traced with symbolic sizes (AOT autograd with `dynamic=True`, as `torch.compile(..., "
             f"dynamic=True)` gives the backend), each sample run at its own sizes and again with every dim of size "
             f">= 2 one larger ({which}). "
             "Samples whose trace specialized the grown sizes (the graph refuses them, as Dynamo would recompile) "
             "are not counted.", "",
             f"**{passed} of {total} samples pass ({100.0 * passed / max(total, 1):.1f}%).**"]
    failed = [(name, dtype, sample, reason) for name, dtype, _, _, failures in rows for sample, reason in failures]
    if failed:
        lines += ["", "| op | dtype | sample | reason |", "|---|---|---|---|"]
        lines += [f"| {name} | {dtype} | `{sample}` | {_cell(reason)} |" for name, dtype, sample, reason in failed]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                      "docs", "supported_ops.md"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = sweep(args.quick, log=print)
    dynamic_rows = sweep_dynamic(args.quick, log=print)
    write_markdown(rows, args.out, args.quick, time.perf_counter() - start, dynamic_rows)
    ok = True
    for label, r in (("static", rows), ("dynamic", dynamic_rows)):
        total, passed = sum(x[2] for x in r), sum(x[3] for x in r)
        print(f"{label}: {passed}/{total} samples pass")
        ok = ok and total and passed >= 0.95 * total
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
