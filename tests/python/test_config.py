import pytest
import torch

import torchair_ge


def test_defaults_and_engine_options():
    config = torchair_ge.CompilerConfig()
    assert config.mode == "max-autotune"
    assert config.debug.graph_dump.type is None
    assert config.ge_config.enable_single_stream is False
    optimizer = {"ge.oo.level": "O3", "ge.oo.constantFolding": "true", "ge.oo.deadCodeElimination": "true",
                 "ge.topoSortingMode": "MemoryAware", "ge.exec.disableReuseMemory": "0",
                 "ge.staticKernelCompile": "true", "ge.autofuse": "true", "ge.kernelFastMath": "false",
                 "ge.kernelCodegen": "vector", "ge.enableSingleStream": "0", "ge.exec.streamReplay": "auto"}
    assert config.ge_options() == optimizer
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.path = "/tmp/x"
    config.ge_config.enable_single_stream = True
    assert config.ge_options() == {"ge.graphDumpType": "txt", "ge.graphDumpPath": "/tmp/x", "ge.graphDumpLevel": "all",
                                   **optimizer, "ge.enableSingleStream": "1"}
    assert config.as_dict()["debug.graph_dump.type"] == ("txt",)
    config.debug.graph_dump.type = ["onnx", "dot"]
    config.debug.graph_dump.level = "key"
    config.debug.data_dump.type = "npy"
    config.debug.data_dump.filter = "MatMul|relu"
    config.profiling.enable = True
    options = config.ge_options()
    assert options["ge.graphDumpType"] == "onnx,dot" and options["ge.graphDumpLevel"] == "key"
    assert options["ge.exec.enableDump"] == "1" and options["ge.exec.dumpFilter"] == "MatMul|relu"
    assert options["ge.exec.profilingMode"] == "1"


def test_unknown_option_names_the_allowed_ones():
    config = torchair_ge.CompilerConfig()
    allowed = "data_dump, fx_summary, graph_dump, run_eagerly"
    with pytest.raises(ValueError, match=rf"unknown option 'debug.graph_dmp'; allowed: {allowed}"):
        config.debug.graph_dmp = 1
    with pytest.raises(ValueError, match=r"unknown option 'modee'"):
        config.modee = "x"


def test_bad_values_name_the_allowed_values():
    config = torchair_ge.CompilerConfig()
    with pytest.raises(ValueError, match=r"'mode'.*allowed: 'max-autotune', 'reduce-overhead'"):
        config.mode = "fast"
    with pytest.raises(ValueError, match=r"'debug.graph_dump.type'.*allowed: None or any of 'txt', 'onnx'"):
        config.debug.graph_dump.type = "svg"
    with pytest.raises(ValueError, match=r"lists a value twice"):
        config.debug.graph_dump.type = "txt,txt"
    with pytest.raises(ValueError, match=r"'debug.data_dump.filter'.*not a regular expression"):
        config.debug.data_dump.filter = "(unclosed"
    with pytest.raises(ValueError, match=r"'ge_config.enable_single_stream' takes True or False"):
        config.ge_config.enable_single_stream = "yes"
    with pytest.raises(ValueError, match="group of options"):
        config.debug = None
    assert config.mode == "max-autotune"  # rejected values leave the option unchanged


def test_environment_variables_give_defaults(monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_DUMP_GRAPH", "onnx,py")
    monkeypatch.setenv("TORCHAIR_GE_PROFILING", "1")
    config = torchair_ge.CompilerConfig()
    assert config.debug.graph_dump.type == ("onnx", "py")
    assert config.profiling.enable is True
    config.profiling.enable = False  # an explicit value wins over the environment
    assert config.profiling.enable is False
    monkeypatch.setenv("TORCHAIR_GE_DUMP_GRAPH", "svg")
    with pytest.raises(ValueError, match=r"debug.graph_dump.type \(from \$TORCHAIR_GE_DUMP_GRAPH\)"):
        _ = torchair_ge.CompilerConfig().debug.graph_dump.type


def test_configs_are_independent():
    a, b = torchair_ge.CompilerConfig(), torchair_ge.CompilerConfig()
    a.debug.graph_dump.type = "txt"
    assert b.debug.graph_dump.type is None


def test_backend_rejects_a_non_config():
    with pytest.raises(TypeError, match="CompilerConfig"):
        torchair_ge.get_npu_backend(compiler_config={"mode": "max-autotune"})


def test_torchair_option_names_and_values_port_unchanged():
    """A TorchAir script ports by changing the import: its option names and values are accepted."""
    config = torchair_ge.CompilerConfig()
    for value, mode in [("0", "0"), ("1", "1"), ("2", "2"), (True, "2"), (False, "0"), (1, "1")]:
        config.ge_config.export_compile_stat = value
        assert config.ge_config.export_compile_stat == mode
    with pytest.raises(ValueError, match=r"'ge_config.export_compile_stat'; allowed: '0', '1', '2'"):
        config.ge_config.export_compile_stat = "3"
    experimental = config.experimental_config
    assert experimental.keep_inference_input_mutations is True and experimental.remove_noop_ops is True
    assert experimental.static_model_ops_lower_limit is None
    experimental.static_model_ops_lower_limit = -1
    with pytest.raises(ValueError, match=r"takes an integer from -1"):
        experimental.static_model_ops_lower_limit = -2
    with pytest.raises(ValueError, match=r"takes an integer, got str"):
        experimental.static_model_ops_lower_limit = "4"
    experimental.remove_noop_ops = False
    config.ge_config.optimization_switch = "CommonSubexpressionElimination:off"
    assert config.ge_options()["ge.optimizationSwitch"] == "CommonSubexpressionElimination:off;NoOpElimination:off"


def test_remove_noop_ops_switches_no_op_elimination():
    fired = {}
    for flag in (True, False):
        torch._dynamo.reset()
        config = torchair_ge.CompilerConfig()
        config.experimental_config.remove_noop_ops = flag
        backend = torchair_ge.get_npu_backend(compiler_config=config)
        fn = torch.compile(lambda x: (x.reshape(6) * 1.0).reshape(2, 3) + 1, backend=backend, dynamic=False)
        x = torch.randn(6)
        torch.testing.assert_close(fn(x), x.reshape(2, 3) + 1)
        fired[flag] = backend.compiler.reports[0]["passes_fired"]
    assert fired[True].get("NoOpElimination", 0) > 0 and "NoOpElimination" not in fired[False]


def test_keep_inference_input_mutations_off_still_updates_the_callers_tensor():
    config = torchair_ge.CompilerConfig()
    config.experimental_config.keep_inference_input_mutations = False

    def f(cache, x):
        cache.add_(x)
        return cache * 2

    compiled = torch.compile(f, backend=torchair_ge.get_npu_backend(compiler_config=config), dynamic=False)
    cache, x = torch.zeros(4), torch.ones(4)
    with torch.no_grad():
        out = compiled(cache, x)
    torch.testing.assert_close(cache, torch.ones(4))
    torch.testing.assert_close(out, torch.full((4,), 2.0))


def test_compile_stat_at_exit_is_written_when_the_process_ends(tmp_path):
    import subprocess
    import sys
    code = (
        "import torch, torchair_ge\n"
        "c = torchair_ge.CompilerConfig()\n"
        "c.ge_config.export_compile_stat = '1'\n"
        f"c.ge_config.compile_stat_path = {str(tmp_path)!r}\n"
        "f = torch.compile(lambda x: x + 1, backend=torchair_ge.get_npu_backend(compiler_config=c), dynamic=False)\n"
        "f(torch.ones(3))\n"
        "import os; assert not os.listdir(" + repr(str(tmp_path)) + ")\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
    assert [p.name.startswith("compile_stat_graph_") for p in tmp_path.iterdir()] == [True]
