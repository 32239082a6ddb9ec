"""CompilerConfig: the options of the backend, with TorchAir's names where the meaning is the same.
Options marked with an environment variable take their default from it (docs/configuration.md)."""
from torchair_ge import _C
from torchair_ge.configs.option import Bool, Choice, ChoiceList, OptionGroup, OptionalText, Regex, Text, IntRange

DUMP_FORMATS = ("txt", "onnx", "pbtxt", "py", "dot")


class GraphDumpConfig(OptionGroup):
    type = ChoiceList(None, DUMP_FORMATS, "dump the graph after compile stages in these formats (one or a list)",
                      env="TORCHAIR_GE_DUMP_GRAPH")
    path = Text("./", "directory for graph dumps", env="TORCHAIR_GE_DUMP_GRAPH_PATH")
    level = Choice("all", ("all", "key", "final"),
                   "all: every stage; key: original, optimized and final; final: the final graph only",
                   env="TORCHAIR_GE_DUMP_GRAPH_LEVEL")


class DataDumpConfig(OptionGroup):
    type = Choice(None, (None, "npy"), "write every task's outputs of every run as .npy files",
                  env="TORCHAIR_GE_DUMP_DATA")
    path = Text("./", "directory for data dumps", env="TORCHAIR_GE_DUMP_DATA_PATH")
    filter = Regex(None, "only nodes whose name or op type matches this regular expression (re.search)",
                   env="TORCHAIR_GE_DUMP_DATA_FILTER")


class FxSummaryConfig(OptionGroup):
    type = Choice(None, (None, "csv"), "write a per-op coverage table of each compiled FX graph")
    path = Text("./", "directory for the summaries")


class DebugConfig(OptionGroup):
    graph_dump = GraphDumpConfig
    data_dump = DataDumpConfig
    fx_summary = FxSummaryConfig
    run_eagerly = Bool(False, "run the FX graph the engine would get with eager PyTorch instead (no engine)",
                       env="TORCHAIR_GE_RUN_EAGERLY")


class ProfilingConfig(OptionGroup):
    enable = Bool(False, "time every task of every run: Chrome trace + per-op-type table",
                  env="TORCHAIR_GE_PROFILING")
    path = Text("./", "directory for the trace and the table", env="TORCHAIR_GE_PROFILING_PATH")


class SwitchList(OptionalText):
    """"PassName:off;PassName:on" -- each name one of the engine's optimizer passes or PatternRewrite's rules,
    checked when set."""

    def check(self, path, value):
        value = super().check(path, value)
        passes = _C.optimizer_passes() + _C.rewrite_rules()
        for item in filter(None, (value or "").split(";")):
            name, sep, state = item.partition(":")
            if not sep or not name or state not in ("on", "off"):
                raise ValueError(f"option '{path}': {item!r} is not 'PassName:on' or 'PassName:off'")
            if name not in passes:
                raise ValueError(f"option '{path}': unknown pass {name!r} (passes and rewrite rules: {', '.join(passes)})")
        return value


class CompileStatMode(Choice):
    """TorchAir's export_compile_stat: "0" off, "1" written when the process exits normally, "2" written as
    soon as each graph has compiled. True and False (this project's earlier form) mean "2" and "0"."""

    def __init__(self, doc="", env=None):
        super().__init__("0", ("0", "1", "2"), doc, env)

    def check(self, path, value):
        if isinstance(value, bool):
            value = "2" if value else "0"
        elif isinstance(value, int):
            value = str(value)
        return super().check(path, value)


class GeConfig(OptionGroup):
    enable_single_stream = Bool(False, "run every task on one stream: no stream assignment for independent branches "
                                "(TorchAir's option)")
    stream_replay = Choice("auto", ("auto", "always"),
                           "a graph with several streams: 'auto' times its first runs on its streams and in task "
                           "order and keeps the faster; 'always' runs it on its streams",
                           env="TORCHAIR_GE_STREAM_REPLAY")
    compute_streams = Choice("", ("", "1", "2", "3", "4", "6", "8"),
                             "at most this many compute streams ('' = one per core, at most 4)")
    oo_level = Choice("O3", ("O3", "O1"), "graph optimizer level: O3 every pass, O1 only cheap always-safe ones",
                      env="TORCHAIR_GE_OO_LEVEL")
    oo_constant_folding = Bool(True, "fold nodes whose inputs are all constants")
    oo_dead_code_elimination = Bool(True, "remove nodes that do not reach the outputs")
    optimization_switch = SwitchList(None, "turn single passes on or off: 'PassName:off;PassName:on'",
                                     env="TORCHAIR_GE_OPTIMIZATION_SWITCH")
    memory_reuse = Bool(True, "let values whose lifetimes do not overlap share arena bytes (off: for debugging)",
                        env="TORCHAIR_GE_MEMORY_REUSE")
    export_compile_stat = CompileStatMode("write compile statistics (stages, node counts, memory) as JSON per graph: "
                                          "'0' off, '1' when the process exits, '2' as soon as the graph has "
                                          "compiled (TorchAir's values; True/False mean '2'/'0')",
                                          env="TORCHAIR_GE_COMPILE_STAT")
    compile_stat_path = Text("./", "directory for the compile statistics", env="TORCHAIR_GE_COMPILE_STAT_PATH")


class ExperimentalConfig(OptionGroup):
    topology_sorting_strategy = Choice("MemoryAware", ("MemoryAware", "DFS", "BFS", "RDFS", "StableRDFS"),
                                       "execution order: which ready node runs next (decides how long values live); "
                                       "MemoryAware keeps whichever of the others gives the smallest arena",
                                       env="TORCHAIR_GE_TOPOLOGY_SORTING_STRATEGY")
    frozen_parameter = Bool(False, "parameters and buffers become constants of the graph (zero-copy): enables "
                            "folding; later in-place changes to them are not seen", env="TORCHAIR_GE_FROZEN_PARAMETER")
    static_kernel_compile = Bool(True, "compile generated kernels (auto-fusion) with the system C++ compiler, every "
                                 "shape a constant; off: only library kernels run",
                                 env="TORCHAIR_GE_STATIC_KERNEL_COMPILE")
    enable_autofuse = Bool(True, "fuse chains of elementwise/broadcast/reduction ops (and the matmul or conv "
                           "before them) into generated kernels; AUTOFUSE_FLAGS=\"--enable_autofuse=false\" "
                           "turns it off too, as in GE", env="TORCHAIR_GE_AUTOFUSE")
    kernel_fast_math = Bool(False, "compile generated kernels with -ffast-math (faster, numerics may differ)",
                            env="TORCHAIR_GE_KERNEL_FAST_MATH")
    kernel_codegen = Choice("vector", ("vector", "blocks"),
                            "generated kernels: 'vector' carries one xsimd vector at a time through every op of a "
                            "fused chain, in registers; 'blocks' runs blocks of elements op by op (needs no xsimd)",
                            env="TORCHAIR_GE_KERNEL_CODEGEN")
    graph_cache = Bool(False, "keep every static inference graph, compiled, in an on-disk cache keyed by Dynamo's graph, "
                       "its inputs' metas and constants, the options and versions: a later process that compiles the "
                       "same graph skips AOT autograd and the engine's optimizer (docs/export.md)",
                       env="TORCHAIR_GE_GRAPH_CACHE")
    # TorchAir's names, same meaning.
    keep_inference_input_mutations = Bool(True, "inference graphs write mutated inputs (KV caches, buffers) "
                                          "themselves, in place; off: AOT autograd returns the new values and "
                                          "copies them into the inputs after the graph")
    remove_noop_ops = Bool(True, "remove ops that compute nothing (identity reshapes, casts to the same dtype, "
                           "...): the optimizer's NoOpElimination pass")
    static_model_ops_lower_limit = IntRange(None, -1, 2**63 - 1, "the fewest ops a static island of a dynamic-shape "
                                            "graph needs to run sunk (GE's option); every graph is static today, "
                                            "so it has no effect yet")


class InferenceConfig(OptionGroup):
    dynamic_gears_merge_policy = Choice("zip", ("zip", "product"), "(TorchAir's) how the gears of several dims "
                                        "(inference.set_dim_gears) combine: the i-th of each (zip) or every "
                                        "combination (product)")
    max_shape_instances = IntRange(64, 1, 4096, "graphs with symbolic sizes: how many engine instances (one per set "
                                   "of sizes) stay compiled; the least recently used is dropped beyond it",
                                   env="TORCHAIR_GE_MAX_SHAPE_INSTANCES")
    new_shape_policy = Choice("amortize", ("amortize", "compile"),
                              "graphs with symbolic sizes: when a set of sizes gets its engine instance. amortize: "
                              "a new set of sizes runs the graph in eager PyTorch until the eager time spent on it "
                              "reaches what compiling an instance costs, then it is compiled; compile: at its first "
                              "call", env="TORCHAIR_GE_NEW_SHAPE_POLICY")


class CompilerConfig(OptionGroup):
    """Options of `get_npu_backend` / `get_compiler`.

    >>> config = CompilerConfig()
    >>> config.debug.graph_dump.type = "txt"
    """

    mode = Choice("max-autotune", ("max-autotune", "reduce-overhead"),
                  "both compile the whole graph into one sunk task list on the CPU device")
    debug = DebugConfig
    profiling = ProfilingConfig
    ge_config = GeConfig
    experimental_config = ExperimentalConfig
    inference_config = InferenceConfig

    def ge_options(self):
        """The engine options (GE keys) this configuration implies."""
        options = {}
        dump = self.debug.graph_dump
        if dump.type:
            options["ge.graphDumpType"] = ",".join(dump.type)
            options["ge.graphDumpPath"] = dump.path
            options["ge.graphDumpLevel"] = dump.level
        data = self.debug.data_dump
        if data.type:
            options["ge.exec.enableDump"] = "1"
            options["ge.exec.dumpPath"] = data.path
            if data.filter:
                options["ge.exec.dumpFilter"] = data.filter
        if self.profiling.enable:
            options["ge.exec.profilingMode"] = "1"
        ge = self.ge_config
        options["ge.oo.level"] = ge.oo_level
        options["ge.oo.constantFolding"] = str(ge.oo_constant_folding).lower()
        options["ge.oo.deadCodeElimination"] = str(ge.oo_dead_code_elimination).lower()
        options["ge.topoSortingMode"] = self.experimental_config.topology_sorting_strategy
        options["ge.exec.disableReuseMemory"] = "0" if ge.memory_reuse else "1"
        options["ge.enableSingleStream"] = "1" if ge.enable_single_stream else "0"
        options["ge.exec.streamReplay"] = ge.stream_replay
        if ge.compute_streams:
            options["ge.exec.computeStreams"] = ge.compute_streams
        experimental = self.experimental_config
        options["ge.staticKernelCompile"] = str(experimental.static_kernel_compile).lower()
        options["ge.autofuse"] = str(experimental.enable_autofuse).lower()
        options["ge.kernelFastMath"] = str(experimental.kernel_fast_math).lower()
        options["ge.kernelCodegen"] = experimental.kernel_codegen
        switches = [ge.optimization_switch] if ge.optimization_switch else []
        if not experimental.remove_noop_ops:
            switches.append("NoOpElimination:off")
        if switches:
            options["ge.optimizationSwitch"] = ";".join(switches)
        return options
