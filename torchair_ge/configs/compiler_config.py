"""CompilerConfig: the options of the backend, with TorchAir's names where the meaning is the same."""
from torchair_ge.configs.option import Bool, Choice, OptionGroup, Text


class GraphDumpConfig(OptionGroup):
    type = Choice(None, (None, "txt"), "dump the graph after each compile stage in this format")
    path = Text("./", "directory for graph dumps")


class FxSummaryConfig(OptionGroup):
    type = Choice(None, (None, "csv"), "write a per-op coverage table of each compiled FX graph")
    path = Text("./", "directory for the summaries")


class DebugConfig(OptionGroup):
    graph_dump = GraphDumpConfig
    fx_summary = FxSummaryConfig


class GeConfig(OptionGroup):
    enable_single_stream = Bool(False, "run every task on one stream (the CPU device has one stream today)")


class CompilerConfig(OptionGroup):
    """Options of `get_npu_backend` / `get_compiler`.

    >>> config = CompilerConfig()
    >>> config.debug.graph_dump.type = "txt"
    """

    mode = Choice("max-autotune", ("max-autotune", "reduce-overhead"),
                  "both compile the whole graph into one sunk task list on the CPU device")
    debug = DebugConfig
    ge_config = GeConfig

    def ge_options(self):
        """The engine options (GE keys) this configuration implies."""
        options = {"ge.enableSingleStream": str(self.ge_config.enable_single_stream).lower()}
        if self.debug.graph_dump.type:
            options["ge.graphDumpType"] = self.debug.graph_dump.type
            options["ge.graphDumpPath"] = self.debug.graph_dump.path
        return options
