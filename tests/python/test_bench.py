"""The benchmark never rots: the quick run checks correctness (never timings), and every zoo
model either matches eager under torchair_ge or is reported with its missing ops named."""
import json

import pytest
import torch

from bench import models as zoo
from bench import attention, dynamic, generate, limits, machine, report, runner, streams, training
from bench.systems import InductorFreezing, OpenVino, TorchairGe


def test_quick_run_is_correct_and_writes_reports(tmp_path):
    results = runner.run(quick=True, systems=["eager", "inductor", "torchair_ge"], log=lambda *_: None,
                         dynamic_shapes=False, generation=False, training=False, streams=False, warm_start=False)
    assert [m["name"] for m in results["models"]] == runner.QUICK_MODELS
    for model in results["models"]:
        for row in model["systems"]:
            assert row["status"] == "ok", (model["name"], row)
            assert row["max_abs_err"] <= 1e-3 and row["median_ms"] > 0
    ge_rows = [r for m in results["models"] for r in m["systems"] if r["system"] == "torchair_ge"]
    assert all(r["info"]["graphs"] == 1 and r["info"]["kernels"] > 0 for r in ge_rows)
    overhead = results["overhead"]
    assert overhead["us_per_task_engine"] > 0 and [r["ops"] for r in overhead["rows"]] == [16, 64]
    assert all(r["dynamic_us"] > 0 for r in overhead["rows"])  # the same chains with symbolic sizes
    paths = report.write(results, str(tmp_path), "quick")
    table = open(paths["markdown"]).read()
    assert "| tiny_chain | torchair_ge | ok |" in table and "geometric mean" in table
    assert json.load(open(paths["json"]))["quick"] is True


@pytest.mark.parametrize("entry", zoo.get(), ids=lambda e: e.name)
def test_every_zoo_model_matches_eager_as_one_mostly_native_graph(entry):
    model, inputs = entry.build()
    with torch.no_grad():
        expected = model(*inputs)
    prepared = TorchairGe().prepare(entry)
    torch.testing.assert_close(prepared.run(), expected, rtol=1e-3, atol=1e-3)
    info = prepared.info
    assert info["graphs"] == 1, "no graph breaks"
    native, fallback = info["native_nodes"], info["fallback_nodes"]
    assert native >= 0.95 * (native + fallback), f"{fallback} of {native + fallback} kernels fall back: {info['fallback_ops']}"


def test_full_runs_refresh_their_cpu_kinds_table_in_the_performance_doc(tmp_path):
    def results(kind, model):
        return {"quick": False, "environment": {"date": "d", "torch": "t", "threads": 2, "cpu": "c",
                                                "machine": {"kind": kind, "model": model}},
                "models": [{"name": "m", "systems": [{"system": "eager", "status": "ok", "median_ms": 2.0,
                                                      "p90_ms": 3.0}]}]}
    doc = tmp_path / "performance.md"
    doc.write_text("intro\n<!-- bench:begin cpu=amd x -->\nold table\n<!-- bench:end cpu=amd -->\nafter\n")
    assert report.update_doc(results("amd", "AMD EPYC"), str(doc))
    text = doc.read_text()
    assert "old table" not in text and "| m | eager | ok | 2 | 3 |" in text
    assert text.startswith("intro\n") and text.endswith("<!-- bench:end cpu=amd -->\nafter\n")
    # another CPU kind gets its own section; the AMD table stays
    assert report.update_doc(results("intel", "Intel Xeon"), str(doc))
    text = doc.read_text()
    assert text.count("| m | eager | ok | 2 | 3 |") == 2 and "### Intel Xeon (intel)" in text
    assert text.index("<!-- bench:end cpu=amd -->") < text.index("<!-- bench:begin cpu=intel")


def test_the_bench_records_its_machine():
    cpuinfo = {"model name": "Intel(R) Xeon(R) Platinum", "vendor_id": "GenuineIntel",
               "flags": "fpu avx2 fma avx512f avx512_bf16 amx_tile amx_bf16"}
    described = machine.describe(threads=2, cpuinfo=cpuinfo)
    assert described["kind"] == "intel-amx" and described["isa"] == ["AVX2", "FMA", "AVX-512", "AVX-512 BF16",
                                                                     "AMX", "AMX BF16"]
    # the kind separates what picks different kernels: AVX2-only and AVX-512 AMD CPUs get tables of their own
    assert machine.kind("AuthenticAMD", ["avx2", "fma"]) == "amd-avx2"
    assert machine.kind("AuthenticAMD", ["avx2", "avx512f"]) == "amd-avx512"
    assert machine.kind("GenuineIntel", ["avx2", "avx512f"]) == "intel-avx512"
    assert "no AMX" not in machine.summary(described)
    assert machine.describe()["logical_cpus"] >= 1  # this machine's own /proc/cpuinfo


def test_the_bench_records_the_cpu_numbers_and_caches(tmp_path):
    # Two Intel VMs both called "Intel(R) Xeon(R) Processor" differ by family/model and caches; a
    # 260 MiB L3 holds a decode step's weights (docs/performance.md, intel-avx512)
    for index, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"),
                                                 (2, "Unified", "2048K"), (3, "Unified", "266240K")]):
        entry = tmp_path / f"index{index}"
        entry.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (entry / name).write_text(f"{value}\n")
    cpuinfo = {"model name": "Intel(R) Xeon(R) Processor", "vendor_id": "GenuineIntel", "cpu family": "6",
               "model": "207", "flags": "avx2 fma avx512f"}
    described = machine.describe(threads=2, cpuinfo=cpuinfo, cache_root=str(tmp_path))
    assert described["caches"] == {"L1d": 48 << 10, "L2": 2 << 20, "L3": 260 << 20}
    assert machine.summary(described) == ("Intel(R) Xeon(R) Processor (intel-avx512, family 6 model 207), AVX2 FMA "
                                          "AVX-512, no AMX, L2 2 MiB, L3 260 MiB, 2 CPUs, 2 threads")
    # no cache directory, and results written before these fields existed, still summarize
    assert machine.describe(cpuinfo=cpuinfo, cache_root=str(tmp_path / "none"))["caches"] == {}
    old = {k: v for k, v in described.items() if k not in ("family", "model_number", "caches")}
    assert machine.summary(old).startswith("Intel(R) Xeon(R) Processor (intel-avx512), AVX2 FMA AVX-512, no AMX, 2 CPUs")


@pytest.mark.parametrize("name", list(dynamic.WORKLOADS))
def test_dynamic_workloads_match_eager_with_few_compiles(name):
    workload = dynamic.run_workload(name, quick=True, log=lambda *_: None,
                                    systems=("eager", "torchair_ge", "torchair_ge_compile"))
    eager, amortized, ours = workload["systems"]
    for row in (amortized, ours):
        assert row["max_abs_err"] <= 1e-3, row
        # automatic dynamic: a static graph for the first shape, one symbolic graph for the rest (the
        # decoder's prefill and decode steps are two graphs, and its 0-length first cache a third)
        assert row["graphs"] <= (3 if name == "gpt_prefill_decode" else 2), row
    assert ours["engine_instances"] >= 2 and ours["eager_runs"] == 0  # policy compile: every size on the engine
    assert ours["from_template"] >= 1  # later sizes are instantiated, not converted again
    # the default policy: every call of a size without an instance ran eagerly and was counted
    assert amortized["eager_runs"] + amortized["engine_instances"] >= 2, amortized
    lines = dynamic.markdown({"workloads": [workload], "static_vs_dynamic": []})
    assert any(line.startswith(f"| {name} | torchair_ge |") for line in lines)
    assert any(line.startswith(f"| {name} | torchair_ge_compile |") for line in lines)


def test_generate_workload_gives_eager_tokens_with_few_compiles():
    results = generate.run(quick=True, log=lambda *_: None, systems=("eager", "torchair_ge"))
    ours = [r for r in results["rows"] if r["system"] == "torchair_ge"]
    # one prompt with each cache; eight with the static one (products of eight rows a step)
    assert [(r["cache"], r["batch"]) for r in ours] == [("dynamic", 1), ("static", 1), ("static", 8)]
    for row in ours:
        assert row["tokens_equal"] is True and row["decode_tokens_per_s"] > 0, row
        assert row["graphs"] <= 3, row  # prefill, first decode step, symbolic decode
    lines = generate.markdown(results)
    assert any(line.startswith("| static | 8 | torchair_ge |") for line in lines)


def test_attention_benchmark_agrees_with_atens_flash_kernel():
    rows = attention.run(quick=True, log=lambda *_: None)
    assert [r["name"] for r in rows] == [c[0] for c in attention.CASES]
    assert all(r["max_abs_err"] < 1e-4 and all(ms > 0 for ms in r["ms"].values()) for r in rows), rows
    assert any(line.startswith("| decode_2048 |") for line in attention.markdown(rows))


def test_transformers_models_run_with_eagers_numbers():
    from bench import transformers_zoo
    results = transformers_zoo.run(quick=True, log=lambda *_: None, systems=("eager", "torchair_ge"))
    assert [r["model"] for r in results["rows"]] == ["gpt2", "llama", "bert"]
    for row in results["rows"]:
        ours = row["systems"]["torchair_ge"]
        assert ours["max_abs_err"] < 1e-4 and ours["median_ms"] > 0, row
    assert any(line.startswith("| gpt2 |") for line in transformers_zoo.markdown(results))


def test_transformers_training_steps_check_the_losses_against_eager():
    from bench import transformers_zoo
    configs = transformers_zoo._configs()
    row = transformers_zoo.train_model("llama", *configs["llama"], quick=True, log=lambda *_: None,
                                       systems=("eager", "torchair_ge"))
    ours = row["systems"]["torchair_ge"]
    assert "error" not in ours and ours["loss_rel_err"] < transformers_zoo.LOSS_RTOL and ours["median_ms"] > 0, row
    assert ours["losses"][0] > ours["losses"][-1], "AdamW steps lower the loss"
    results = {"batch": 2, "tokens": 128, "rows": [], "training_rows": [row]}
    assert any(line.startswith("| llama |") for line in transformers_zoo.markdown(results))
    assert not transformers_zoo.wrong_training(results)
    row["systems"]["torchair_ge"]["error"] = "wrong: the losses differ from eager's by 0.1 (relative)"
    assert transformers_zoo.wrong_training(results) == [("transformers training llama", "torchair_ge")]


@pytest.mark.parametrize("system", [InductorFreezing(), OpenVino(), TorchairGe(frozen=True)], ids=lambda s: s.name)
def test_peer_systems_match_eager(system):
    if system.unavailable():
        pytest.skip(system.unavailable())  # OpenVINO comes with `make bench`'s set-up
    entry = zoo.get(["mlp"])[0]
    model, inputs = entry.build()
    with torch.no_grad():
        expected = model(*inputs)
    prepared = system.prepare(entry)
    torch.testing.assert_close(prepared.run(), expected, rtol=1e-3, atol=1e-3)
    assert prepared.cold_compile_s > 0


def test_limits_relate_models_to_bandwidth_and_gemm_peak():
    rows = [{"name": name, "systems": [{"system": "torchair_ge", "median_ms": 5.0}]} for name in ("mlp", "gpt_decode")]
    result = limits.run(rows, zoo.get(["mlp", "gpt_decode"]), quick=True, log=lambda *_: None)
    assert result["bandwidth_gbs"] > 0 and result["gemm_peak_gflops"] >= result["gemm_rates"]["mkl"]
    by_model = {r["model"]: r for r in result["models"]}
    mlp_flops = 2 * 64 * 1024 * 1024 * 4  # 4 Linear 1024 layers, batch 64
    assert by_model["mlp"]["achieved"] == pytest.approx(mlp_flops / 5e-3 / 1e9, rel=0.01)
    assert by_model["gpt_decode"]["unit"] == "GB/s" and by_model["gpt_decode"]["share"] > 0
    assert any(line.startswith("| gpt_decode | bandwidth |") for line in limits.markdown(result))


def test_training_steps_agree_with_eager_and_report_time_and_memory():
    results = training.run(quick=True, log=lambda *_: None, systems=("eager", "torchair_ge"), workloads=("mlp", "bert"))
    for workload in results["workloads"]:
        eager, ours = workload["systems"]
        assert "error" not in ours, ours
        assert ours["max_loss_rel_err"] <= training.LOSS_RTOL and len(ours["losses"]) == training.STEPS_CHECKED
        assert ours["median_ms"] > 0 and ours["peak_mem_mb"] >= 0 and ours["graphs"] == 3  # forward, backward, step
        assert not ours["fallback_ops"], ours["fallback_ops"]
    lines = training.markdown(results)
    assert any(line.startswith("| bert | torchair_ge |") for line in lines)


def test_the_streams_bench_checks_and_reports_streams_and_tensor_parallelism():
    results = streams.run(quick=True, log=lambda *_: None)
    (mmoe,) = results["models"]
    assert mmoe["streams"] >= 2 and mmoe["systems"]["streams"]["median_ms"] > 0
    tp = results["tensor_parallel"]
    assert "error" not in tp, tp  # the compiled step equals eager's on both ranks (checked in the ranks)
    assert 0.0 <= tp["hidden_share"] <= 1.0 and tp["systems"]["torchair_ge"]["median_ms"] > 0
    text = "\n".join(streams.markdown(results))
    assert "| mmoe |" in text and "communication hidden" in text


def test_warm_start_section_reports_both_runs():
    from bench import warm_start
    rows = [{"model": "bert", "system": "torchair_ge", "cold": {"first_call_s": 2.0}, "warm": {"first_call_s": 0.25},
             "warm_over_cold": 0.125},
            {"model": "bert", "system": "inductor", "cold": {"error": "boom"}, "warm": {"first_call_s": 1.5}}]
    table = "\n".join(warm_start.markdown(rows))
    assert "| bert | torchair_ge | 2.000 | 0.250 | 0.12 |" in table
    assert "| bert | inductor | boom | 1.500 | — |" in table
