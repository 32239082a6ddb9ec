import pytest

import torchair_ge


def test_defaults_and_engine_options():
    config = torchair_ge.CompilerConfig()
    assert config.mode == "max-autotune"
    assert config.debug.graph_dump.type is None
    assert config.ge_config.enable_single_stream is False
    optimizer = {"ge.oo.level": "O3", "ge.oo.constantFolding": "true", "ge.oo.deadCodeElimination": "true",
                 "ge.topoSortingMode": "MemoryAware", "ge.exec.disableReuseMemory": "0",
                 "ge.staticKernelCompile": "true", "ge.autofuse": "true", "ge.kernelFastMath": "false"}
    assert config.ge_options() == {"ge.enableSingleStream": "false", **optimizer}
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.path = "/tmp/x"
    config.ge_config.enable_single_stream = True
    assert config.ge_options() == {"ge.enableSingleStream": "true", "ge.graphDumpType": "txt",
                                   "ge.graphDumpPath": "/tmp/x", "ge.graphDumpLevel": "all", **optimizer}
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
