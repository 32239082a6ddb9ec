"""experimental_config.graph_cache: a graph Dynamo hands over again (a new process, or after a
reset) is loaded from the on-disk cache, skipping AOT autograd and the optimizer, with eager's
numbers; anything that changes what it compiles to misses."""
import torch

import torchair_ge


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        return torch.tanh(self.fc2(torch.relu(self.fc1(x)) * 0.5))


def _compile_and_run(model, x, **experimental):
    torch._dynamo.reset()
    config = torchair_ge.CompilerConfig()
    config.experimental_config.graph_cache = True
    for key, value in experimental.items():
        setattr(config.experimental_config, key, value)
    backend = torchair_ge.get_npu_backend(compiler_config=config)
    with torch.no_grad():
        got = torch.compile(model, backend=backend)(x)
        torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)
    return [r.get("graph_cache") for r in backend.compiler.reports]


def test_second_compile_loads_the_cached_graph(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model, x = Net().eval(), torch.randn(8, 16)
    assert _compile_and_run(model, x) == ["miss"]
    assert _compile_and_run(model, x) == ["hit"]
    assert len(list((tmp_path / "graphs").glob("*/*"))) == 1
    with torch.no_grad():  # parameters are inputs: new values hit and are used
        model.fc1.weight.mul_(2)
    assert _compile_and_run(model, x) == ["hit"]
    assert _compile_and_run(model, torch.randn(6, 16)) == ["miss"]  # another input shape
    assert _compile_and_run(model, x, topology_sorting_strategy="DFS") == ["miss"]  # another option


def test_broken_entries_are_rebuilt_and_uncacheable_graphs_compile_as_usual(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model, x = Net().eval(), torch.randn(8, 16)
    assert _compile_and_run(model, x) == ["miss"]
    entry = next((tmp_path / "graphs").glob("*/*"))
    entry.write_bytes(entry.read_bytes()[:-10])
    assert _compile_and_run(model, x) == ["miss"]  # refused (the model file's checksum), rebuilt
    assert _compile_and_run(model, x) == ["hit"]
    # Frozen parameters are constants whose values Dynamo's graph does not hold: not cached.
    assert _compile_and_run(model, x, frozen_parameter=True) == [None]


def test_an_unsafe_cache_is_neither_read_nor_written(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("TORCHAIR_GE_CACHE_DIR", str(tmp_path / "cache"))
    torch.manual_seed(0)
    model, x = Net().eval(), torch.randn(8, 16)
    assert _compile_and_run(model, x) == ["miss"]
    entry = next((tmp_path / "cache" / "graphs").glob("*/*"))
    entry.chmod(0o666)  # a pickle anyone may rewrite: refused, rebuilt with this user's mode
    assert _compile_and_run(model, x) == ["miss"]
    assert _compile_and_run(model, x) == ["hit"]
    (tmp_path / "cache").chmod(0o777)  # a root others may write: the cache is not used at all
    with caplog.at_level("WARNING", logger="torchair_ge"):
        assert _compile_and_run(model, x) == [None]
    assert "is writable by its group or others (mode 777)" in caplog.text
    assert "compiling without the cache" in caplog.text
