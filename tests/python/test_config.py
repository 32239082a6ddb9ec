import pytest

import torchair_ge


def test_defaults_and_engine_options():
    config = torchair_ge.CompilerConfig()
    assert config.mode == "max-autotune"
    assert config.debug.graph_dump.type is None
    assert config.ge_config.enable_single_stream is False
    assert config.ge_options() == {"ge.enableSingleStream": "false"}
    config.debug.graph_dump.type = "txt"
    config.debug.graph_dump.path = "/tmp/x"
    config.ge_config.enable_single_stream = True
    assert config.ge_options() == {"ge.enableSingleStream": "true", "ge.graphDumpType": "txt",
                                   "ge.graphDumpPath": "/tmp/x"}
    assert config.as_dict()["debug.graph_dump.type"] == "txt"


def test_unknown_option_names_the_allowed_ones():
    config = torchair_ge.CompilerConfig()
    with pytest.raises(ValueError, match=r"unknown option 'debug.graph_dmp'; allowed: fx_summary, graph_dump"):
        config.debug.graph_dmp = 1
    with pytest.raises(ValueError, match=r"unknown option 'modee'"):
        config.modee = "x"


def test_bad_values_name_the_allowed_values():
    config = torchair_ge.CompilerConfig()
    with pytest.raises(ValueError, match=r"'mode'.*allowed: 'max-autotune', 'reduce-overhead'"):
        config.mode = "fast"
    with pytest.raises(ValueError, match=r"'debug.graph_dump.type'.*allowed: None, 'txt'"):
        config.debug.graph_dump.type = "svg"
    with pytest.raises(ValueError, match=r"'ge_config.enable_single_stream' takes True or False"):
        config.ge_config.enable_single_stream = "yes"
    with pytest.raises(ValueError, match="group of options"):
        config.debug = None
    assert config.mode == "max-autotune"  # rejected values leave the option unchanged


def test_configs_are_independent():
    a, b = torchair_ge.CompilerConfig(), torchair_ge.CompilerConfig()
    a.debug.graph_dump.type = "txt"
    assert b.debug.graph_dump.type is None


def test_backend_rejects_a_non_config():
    with pytest.raises(TypeError, match="CompilerConfig"):
        torchair_ge.get_npu_backend(compiler_config={"mode": "max-autotune"})
