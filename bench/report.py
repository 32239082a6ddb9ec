"""Writes the results: a Markdown table, a JSON file and a PNG chart."""
import json
import math
import os


def _fmt(value, digits=3):
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def ratios(results, system, baseline):
    out = []
    for model in results["models"]:
        rows = {r["system"]: r for r in model["systems"]}
        a, b = rows.get(system), rows.get(baseline)
        if a and b and a.get("median_ms") and b.get("median_ms"):
            out.append(a["median_ms"] / b["median_ms"])
    return out


def markdown(results):
    env = results["environment"]
    lines = ["# Benchmark results", "",
             f"{env['date']} · torch {env['torch']} · {env['cpu']} · "
             f"mode {'quick' if results['quick'] else 'full'}", "",
             "Latency is the median (p90) per call over interleaved rounds; ratios below 1 mean faster "
             "than the baseline. Compile is the first call (compile + one run) with fresh caches (cold) "
             "and again after a reset (warm). Memory is the peak RSS growth while running, over the "
             "loaded model. Graph: FX nodes → IR nodes as converted → IR nodes after the optimizer → kernels per run, "
             "with how many run on the host-fallback "
             "engine (torchair_ge); kernels: "
             "generated kernels (Inductor).", "",
             "| model | system | status | median ms | p90 ms | vs eager | vs inductor | compile cold s | warm s "
             "| mem MB | graph | kernels | max abs err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for model in results["models"]:
        rows = {r["system"]: r for r in model["systems"]}
        for r in model["systems"]:
            ok = r.get("median_ms") is not None
            vs = lambda base: (_fmt(r["median_ms"] / rows[base]["median_ms"])  # noqa: E731
                               if ok and rows.get(base, {}).get("median_ms") else "—")
            graph = "—"
            if r.get("info", {}).get("fx_nodes") is not None:
                i = r["info"]
                graph = f"{i['fx_nodes']} → {i['ir_nodes_before']} → {i['ir_nodes_after']} → {i['kernels']}"
                if i.get("fallback_nodes"):
                    graph += f" ({i['fallback_nodes']} fallback)"
            lines.append("| " + " | ".join([
                model["name"], r["system"], r["status"] if r["status"] == "ok" else f"{r['status']}: {r.get('reason', '')}",
                _fmt(r.get("median_ms")), _fmt(r.get("p90_ms")), vs("eager"), vs("inductor"),
                _fmt(r.get("cold_compile_s")), _fmt(r.get("warm_compile_s")),
                _fmt(r.get("peak_mem_mb")), graph, _fmt(r.get("info", {}).get("kernels")), _fmt(r.get("max_abs_err")),
            ]) + " |")
    lines += ["", "## Summary", ""]
    peers = ("eager", "inductor", "inductor_freezing", "onnxruntime", "openvino")
    # torchair_ge_frozen (frozen_parameter) is the setting to compare with the peers that see
    # constant weights: inductor_freezing and onnxruntime.
    for system in ("torchair_ge", "torchair_ge_frozen") + peers[1:]:
        for base in peers if system.startswith("torchair_ge") else ("eager", "inductor"):
            if system == base:
                continue
            rs = ratios(results, system, base)
            if rs:
                lines.append(f"- {system} / {base}: geometric mean latency ratio {_fmt(geomean(rs))} over {len(rs)} models")
    lines += optimizer_section(results)
    lines += autofuse_section(results)
    lines += memory_section(results)
    if results.get("limits"):
        from bench import limits
        lines += limits.markdown(results["limits"])
    if results.get("codegen"):
        from bench import codegen
        lines += codegen.markdown(results["codegen"])
    if results.get("dynamic"):
        from bench import dynamic
        lines += dynamic.markdown(results["dynamic"])
    if results.get("training"):
        from bench import training
        lines += training.markdown(results["training"])
    if results.get("streams"):
        from bench import streams
        lines += streams.markdown(results["streams"])
    if results.get("warm_start"):
        from bench import warm_start
        lines += warm_start.markdown(results["warm_start"])
    if results.get("generate"):
        from bench import generate
        lines += generate.markdown(results["generate"])
    if results.get("attention"):
        from bench import attention
        lines += attention.markdown(results["attention"])
    if results.get("transformers_zoo"):
        from bench import transformers_zoo
        lines += transformers_zoo.markdown(results["transformers_zoo"])
    overhead = results.get("overhead")
    if overhead:
        lines += ["", f"## Host cost per sunk task (chains of tiny {overhead['size'][0]}x{overhead['size'][1]} ops)", "",
                  f"- engine alone: **{overhead['us_per_task_engine']:.3f} µs per task**; through torch.compile: "
                  f"{overhead['us_per_task_torch_compile']:.3f} µs per task; "
                  f"with dynamic=True: {overhead['us_per_task_dynamic']:.3f} µs per task; "
                  f"eager: {overhead['us_per_op_eager']:.3f} µs per op",
                  "", "| ops | tasks | eager µs | engine µs | torch.compile µs | dynamic=True µs |",
                  "|---|---|---|---|---|---|"]
        for r in overhead["rows"]:
            lines.append(f"| {r['ops']} | {r['tasks']} | {r['eager_us']:.1f} | {r['engine_us']:.1f} "
                         f"| {r['torch_compile_us']:.1f} | {r['dynamic_us']:.1f} |")
    return "\n".join(lines) + "\n"


def _latency_ratio(on, off):
    """Median latency of one system row over another's, formatted; a dash when either is missing."""
    return _fmt(on["median_ms"] / off["median_ms"]) if on.get("median_ms") and off.get("median_ms") else "—"


def optimizer_section(results):
    """Per model: IR nodes before/after the optimizer, the passes that fired (nodes they removed),
    and latency with the optimizer on vs off (torchair_ge / torchair_ge_noopt)."""
    rows = []
    for model in results["models"]:
        by = {r["system"]: r for r in model["systems"]}
        on = by.get("torchair_ge")
        if not on or not on.get("info", {}).get("ir_nodes_before"):
            continue
        i, off = on["info"], by.get("torchair_ge_noopt", {})
        fired = ", ".join(f"{name} {-n:+d}" for name, n in i.get("passes_fired", {}).items()) or "none"
        ratio = _latency_ratio(on, off)
        rows.append(f"| {model['name']} | {i['ir_nodes_before']} | {i['ir_nodes_after']} | {i['kernels']} | "
                    f"{_fmt(off.get('info', {}).get('kernels'))} | {ratio} | {fired} |")
    if not rows:
        return []
    return ["", "## Graph optimizer", "",
            "IR nodes as converted and after the optimizer, kernels per run with the optimizer on and off, the latency "
            "ratio on/off (below 1: the optimizer helps), and the passes that changed the graph with the change in node "
            "count each made.",
            "", "| model | IR before | IR after | kernels | kernels (off) | latency on/off | passes (node count change) |",
            "|---|---|---|---|---|---|---|"] + rows


def autofuse_section(results):
    """Per model: kernels per run with auto-fusion on and off, the cut, the latency ratio, and
    cold (fresh kernel cache) vs warm compile (torchair_ge / torchair_ge_nofuse)."""
    rows = []
    for model in results["models"]:
        by = {r["system"]: r for r in model["systems"]}
        on, off = by.get("torchair_ge"), by.get("torchair_ge_nofuse")
        if not on or not off or "kernels" not in on.get("info", {}) or "kernels" not in off.get("info", {}):
            continue
        k_on, k_off = on["info"]["kernels"], off["info"]["kernels"]
        cut = f"{100 * (1 - k_on / k_off):.0f}%" if k_off else "—"
        ratio = _latency_ratio(on, off)
        i = on["info"]
        cold_ms, warm_ms = i.get("backend_compile_cold_ms"), i.get("backend_compile_warm_ms")
        speedup = _fmt(cold_ms / warm_ms) if cold_ms and warm_ms else "—"
        rows.append(f"| {model['name']} | {k_off} | {k_on} | {cut} | {i.get('fused_kernels', 0)} | "
                    f"{i.get('fused_nodes', 0)} | {ratio} | {_fmt(i.get('kernel_build_ms'))} | {_fmt(cold_ms)} | "
                    f"{_fmt(warm_ms)} | {speedup} | {_fmt(on.get('cold_compile_s'))} | {_fmt(on.get('warm_compile_s'))} |")
    if not rows:
        return []
    return ["", "## Auto-fusion", "",
            "Kernels per run without and with auto-fusion, the cut, how many generated kernels replaced how many nodes, "
            "the latency ratio fused/unfused (below 1: fusion helps), the C++ compiler's time, and the backend's compile "
            "time with a fresh kernel cache (cold) against a second compile that finds its kernels in the cache (warm); "
            "the last two columns are whole first calls (Dynamo and AOT autograd included).", "",
            "| model | kernels (unfused) | kernels (fused) | cut | generated kernels | nodes fused | latency fused/unfused "
            "| C++ build ms | backend compile cold ms | warm ms | cold/warm | first call cold s | warm s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + rows


def memory_section(results):
    """Per model: the engine's arena against the live-bytes lower bound and against no reuse."""
    rows = []
    for model in results["models"]:
        on = {r["system"]: r for r in model["systems"]}.get("torchair_ge")
        i = (on or {}).get("info", {})
        if not i.get("arena_lower_bound"):
            continue
        mb = lambda b: f"{b / 2**20:.2f}"  # noqa: E731
        rows.append(f"| {model['name']} | {mb(i['arena_bytes'])} | {mb(i['arena_lower_bound'])} | "
                    f"{i['arena_bytes'] / i['arena_lower_bound']:.3f} | {mb(i['arena_no_reuse'])} |")
    if not rows:
        return []
    return ["", "## Memory", "",
            "The engine's arena (intermediates; inputs are read in place and outputs written straight into the "
            "returned tensors) against the lower bound, the largest sum of bytes live at one step of the schedule, "
            "and against giving every value its own bytes.", "",
            "| model | arena MiB | lower bound MiB | arena / bound | no reuse MiB |", "|---|---|---|---|---|"] + rows


def chart(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    models = [m["name"] for m in results["models"]]
    systems = [s for s in ("inductor", "inductor_freezing", "torchair_ge", "torchair_ge_frozen", "onnxruntime", "openvino")
               if any(r["system"] == s for m in results["models"] for r in m["systems"])]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(models)), 4))
    width = 0.8 / max(1, len(systems))
    for k, system in enumerate(systems):
        values = []
        for m in results["models"]:
            rows = {r["system"]: r for r in m["systems"]}
            r, e = rows.get(system), rows.get("eager")
            values.append(r["median_ms"] / e["median_ms"] if r and e and r.get("median_ms") and e.get("median_ms") else 0)
        xs = [i + k * width for i in range(len(models))]
        ax.bar(xs, values, width, label=system)
        for x, v in zip(xs, values):
            if not v:
                ax.text(x, 0.02, "n/s", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(models))])
    ax.set_xticklabels(models, rotation=30, ha="right")
    ax.set_ylabel("latency / eager (lower is faster)")
    ax.set_xlabel("n/s: not supported by that system yet (see the table)")
    ax.set_title("Median latency relative to eager PyTorch")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _doc_markers(kind):
    return f"<!-- bench:begin cpu={kind}", f"<!-- bench:end cpu={kind} -->"


def update_doc(results, doc_path):
    """Replaces the table of this run's CPU kind (amd-avx2, intel-amx, ...) in docs/performance.md. A kind
    seen for the first time gets its own section after the others: a run on one CPU never
    overwrites what was measured on another."""
    machine = results["environment"].get("machine", {})
    kind = machine.get("kind", "unknown")
    text = open(doc_path).read()
    begin, end = _doc_markers(kind)
    body = markdown(results).split("\n", 2)[2].rstrip() + "\n"  # without the title line
    start, stop = text.find(begin), text.find(end)
    if start >= 0 and stop > start:
        start = text.index("\n", start) + 1
        text = text[:start] + body + text[stop:]
    else:
        last = text.rfind("<!-- bench:end")
        if last < 0:
            return False
        at = text.index("\n", last) + 1
        text = (text[:at] + f"\n### {machine.get('model', kind)} ({kind})\n\n{begin} (written by a full `make bench` "
                f"on a CPU of this kind) -->\n{body}{end}\n" + text[at:])
    with open(doc_path, "w") as f:
        f.write(text)
    return True


def write(results, out_dir, stem="latest"):
    os.makedirs(out_dir, exist_ok=True)
    paths = {"markdown": os.path.join(out_dir, f"{stem}.md"), "json": os.path.join(out_dir, f"{stem}.json"),
             "chart": os.path.join(out_dir, f"{stem}.png")}
    with open(paths["markdown"], "w") as f:
        f.write(markdown(results))
    with open(paths["json"], "w") as f:
        json.dump(results, f, indent=1)
    if not chart(results, paths["chart"]):
        paths.pop("chart")
    return paths
