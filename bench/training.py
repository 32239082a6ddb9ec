"""Training steps: forward + loss + backward + AdamW step, per system, from the same initial
weights. The model is compiled with dynamic=False and the optimizer step with the same backend
(as in examples/train.py); eager runs both as they are. The loss is computed outside the model.

Correctness: the first STEPS_CHECKED losses of every system are compared with eager's (every
system starts from the same weights and data). Latency: medians of interleaved rounds of
whole steps. Memory: peak RSS growth during steps, over the state after warm-up steps
(parameters, gradients' storage between steps and the optimizer state are already there)."""
import torch
import torch._dynamo
from torch import nn

import torchair_ge
from bench import measure
from bench.models import bert, mlp, resnet

SYSTEMS = ("eager", "inductor", "torchair_ge")
STEPS_CHECKED = 3
LOSS_RTOL = 1e-3  # fp32 rounding of a few steps stays orders of magnitude below
WARMUP_STEPS = 3  # compiles: forward, backward, the optimizer's first step and its later steps


def _mlp():
    model, (x,) = mlp.build()
    return model, (x,), lambda out: nn.functional.cross_entropy(out, torch.arange(x.shape[0]) % out.shape[1])


def _resnet():
    model, (x,) = resnet.build(batch=8)
    return model, (x,), lambda out: nn.functional.cross_entropy(out, torch.arange(x.shape[0]) * 37 % out.shape[1])


def _bert():
    model, inputs = bert.build()
    target = torch.randn(inputs[0].shape + (256,), generator=torch.Generator().manual_seed(2))
    return model, inputs, lambda out: nn.functional.mse_loss(out, target)


# name -> (description, builder returning (model, inputs, loss of the model's output))
WORKLOADS = {
    "mlp": ("4 x (Linear 1024 + ReLU), batch 64, cross-entropy", _mlp),
    "resnet_b8": ("ResNet-18-style CNN, 8x3x112x112, batch norm in train mode, cross-entropy", _resnet),
    "bert": ("4-layer BERT encoder, hidden 256, seq 128, batch 4, MSE to a random target", _bert),
}
QUICK_WORKLOADS = ("mlp",)


def _backend(system):
    return {"inductor": "inductor", "torchair_ge": torchair_ge.get_npu_backend()}.get(system)


def make_step(system, workload):
    """A zero-argument training step for a fresh model of the workload; returns (step, backend)."""
    model, inputs, loss_of = WORKLOADS[workload][1]()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    forward, update = model, opt.step
    backend = _backend(system)
    if backend is not None:
        forward = torch.compile(model, backend=backend, dynamic=False)
        update = torch.compile(opt.step, backend=backend)

    def step():
        loss = loss_of(forward(*inputs))
        loss.backward()
        update()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, backend


def _fallback_ops(backend):
    reports = getattr(getattr(backend, "compiler", None), "reports", None) or []
    return {op: n for r in reports for op, n in r["fallback_ops"].items()}, len(reports)


def run_workload(name, quick=False, log=print, systems=SYSTEMS):
    torch._dynamo.reset()
    rows, steps, reference = [], {}, None
    for system in systems:
        row = {"system": system}
        try:
            step, backend = make_step(system, name)
            losses = [step().item() for _ in range(max(STEPS_CHECKED, WARMUP_STEPS))]
            if system == "eager":
                reference = losses
            row["losses"] = losses[:STEPS_CHECKED]
            row["max_loss_rel_err"] = (None if reference is None else
                                       max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference)))
            row["fallback_ops"], row["graphs"] = _fallback_ops(backend)
            if row["max_loss_rel_err"] is not None and row["max_loss_rel_err"] > LOSS_RTOL:
                row["error"] = f"wrong: the losses differ from eager's by {row['max_loss_rel_err']:.2g} (relative)"
            if "error" not in row:
                steps[system] = step
        except Exception as e:  # noqa: BLE001 - one system's failure is reported, not fatal
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            log(f"  training {name:<10} {system:<12} {row['error']}")
        rows.append(row)
    samples = measure.interleaved_latency(steps, 3 if quick else 15, batch_target_s=0.005 if quick else 0.1)
    for row in rows:
        if row["system"] in steps:
            row.update(measure.summarize(samples[row["system"]]))
            row["peak_mem_mb"] = measure.peak_rss_growth(steps[row["system"]], 2 if quick else 5) / 2**20
            log(f"  training {name:<10} {row['system']:<12} step {row['median_ms']:8.2f} ms  "
                f"peak +{row['peak_mem_mb']:.1f} MB  loss rel err {row['max_loss_rel_err']}")
    torch._dynamo.reset()
    return {"name": name, "description": WORKLOADS[name][0], "systems": rows}


def run(quick=False, log=print, systems=SYSTEMS, workloads=None):
    names = workloads or (QUICK_WORKLOADS if quick else tuple(WORKLOADS))
    return {"steps_checked": STEPS_CHECKED, "workloads": [run_workload(n, quick, log, systems) for n in names]}


def _fmt(value):
    return "—" if value is None else f"{value:.2g}"


def _ratio(row, base, key):
    return f"{row[key] / base[key]:.2f}" if base and base.get(key) and row.get(key) is not None else "—"


def markdown(results):
    lines = ["", "## Training steps", "",
             "One step: forward, loss, backward, AdamW step, `zero_grad`; the model compiled with `dynamic=False` and "
             "`opt.step` compiled with the same backend. Median step time over interleaved rounds; memory is the peak "
             "RSS growth during steps over the state after warm-up. Loss error: the largest relative difference of "
             f"the first {results['steps_checked']} losses from eager's (same initial weights). Ratios within this run.",
             "", "| workload | system | step ms | vs eager | vs inductor | peak mem MB | mem vs eager | loss rel err "
             "| host fallback |", "|---|---|---|---|---|---|---|---|---|"]
    for workload in results["workloads"]:
        by = {r["system"]: r for r in workload["systems"] if "error" not in r}
        for row in workload["systems"]:
            if "error" in row:
                lines.append(f"| {workload['name']} | {row['system']} | — | | | | | | {row['error']} |")
                continue
            fallback = ", ".join(f"{op} ×{n}" for op, n in row.get("fallback_ops", {}).items()) or "none"
            lines.append(f"| {workload['name']} | {row['system']} | {row.get('median_ms', 0):.2f} | "
                         f"{_ratio(row, by.get('eager'), 'median_ms')} | {_ratio(row, by.get('inductor'), 'median_ms')} | "
                         f"{row.get('peak_mem_mb', 0):.1f} | {_ratio(row, by.get('eager'), 'peak_mem_mb')} | "
                         f"{_fmt(row['max_loss_rel_err'])} | {fallback if row['system'] == 'torchair_ge' else ''} |")
    return lines


if __name__ == "__main__":
    for line in markdown(run(quick=True)):
        print(line)
