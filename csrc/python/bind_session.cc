// GEInitialize / Session: compile and run from Python. The GIL is released while the engine
// compiles or runs, so several Python threads can run one compiled graph at once.
#include <ATen/ops/empty.h>
#include <pybind11/stl.h>

#include "devices/cpu/aten_bridge.h"
#include "ge/serialize/graph_dump.h"
#include "ge/compiler/schedule.h"
#include "ge/offline_model.h"
#include "ge/session.h"
#include "python/py_utils.h"

namespace ge::python {

namespace {

py::dict SummaryToDict(const CompiledGraphSummary& s) {
  py::list stages;
  for (const auto& st : s.stages)
    stages.append(py::dict(py::arg("name") = st.name, py::arg("ms") = st.milliseconds,
                           py::arg("nodes_before") = st.nodes_before, py::arg("nodes_after") = st.nodes_after));
  py::list passes;
  for (const auto& p : s.passes)
    passes.append(py::dict(py::arg("stage") = p.stage, py::arg("name") = p.pass, py::arg("ms") = p.milliseconds,
                           py::arg("nodes_before") = p.nodes_before, py::arg("nodes_after") = p.nodes_after,
                           py::arg("runs") = p.runs, py::arg("changed") = p.changed));
  const auto& af = s.autofuse;
  py::dict autofuse(py::arg("kernels") = af.kernels, py::arg("fused_nodes") = af.fused_nodes,
                    py::arg("library_epilogues") = af.library_epilogues, py::arg("cache_hit") = af.cache_hit,
                    py::arg("build_ms") = af.build_ms, py::arg("library") = af.library, py::arg("source") = af.source,
                    py::arg("fallback") = af.fallback, py::arg("size_expr_kernels") = af.size_expr_kernels);
  return py::dict(
      py::arg("is_static") = s.is_static, py::arg("autofuse") = autofuse, py::arg("passes") = passes,
      py::arg("const_memory_size") = s.const_memory_size, py::arg("feature_memory_size") = s.feature_memory_size,
      py::arg("arena_lower_bound") = s.arena_lower_bound, py::arg("arena_no_reuse") = s.arena_no_reuse,
      py::arg("view_values") = s.view_values, py::arg("inplace_values") = s.inplace_values,
      py::arg("updates_in_input") = s.updates_in_input, py::arg("workspace_bytes") = s.workspace_bytes,
      py::arg("stream_num") = s.stream_num, py::arg("task_num") = s.task_num,
      py::arg("inputs") = DescsToList(s.input_descs), py::arg("outputs") = DescsToList(s.output_descs),
      py::arg("engines") = s.engine_counts, py::arg("fused_groups") = s.fused_groups, py::arg("stages") = stages,
      py::arg("schedule") = s.schedule, py::arg("orders_planned") = s.orders_planned);
}

// What errors call the graph: "graph 3", or "model" (graph_id < 0). Formatted only for errors:
// the run path allocates no message.
std::string RunnerName(int64_t graph_id) { return graph_id < 0 ? "model" : fmt::format("graph {}", graph_id); }

// Runs `run(inputs, &outputs)` on torch tensors: CPU, dense, supported dtypes.
template <typename Run>
std::vector<at::Tensor> RunOnTensors(int64_t graph_id, const std::vector<at::Tensor>& inputs, const Run& run) {
  std::vector<at::Tensor> contiguous;  // keeps copies of strided inputs alive for the run
  std::vector<Tensor> ge_inputs;
  ge_inputs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    if (!t.defined()) throw GeError(fmt::format("{} input {} is an undefined tensor", RunnerName(graph_id), i));
    if (!t.device().is_cpu())
      throw GeError(fmt::format("{} input {} is on {}, the CPU device needs CPU tensors", RunnerName(graph_id), i,
                                t.device().str()));
    if (t.is_nested() || t.layout() != at::kStrided)  // checked before anything asks for sizes or strides
      throw GeError(fmt::format("{} input {} is a {} tensor; the engine takes dense (strided) tensors",
                                RunnerName(graph_id), i, t.is_nested() ? "nested" : c10::str(t.layout())));
    const at::Tensor& dense = t.is_contiguous() ? t : contiguous.emplace_back(t.contiguous());
    auto dtype = cpu::FromScalarType(dense.scalar_type());
    if (!dtype.ok()) throw GeError(fmt::format("{} input {}: {}", RunnerName(graph_id), i, dtype.status().message()));
    ge_inputs.emplace_back(TensorDesc(*dtype, dense.sizes().vec()), dense.data_ptr(), nullptr);
  }
  std::vector<Tensor> ge_outputs;
  {
    py::gil_scoped_release release;
    NoPythonDispatch no_python;
    ThrowIfError(run(ge_inputs, &ge_outputs));
  }
  std::vector<at::Tensor> outputs;
  outputs.reserve(ge_outputs.size());
  for (size_t k = 0; k < ge_outputs.size(); ++k) {
    // An output that is a graph input comes back as that very tensor.
    const Tensor& out = ge_outputs[k];
    bool aliased = false;
    for (size_t i = 0; i < ge_inputs.size() && !aliased; ++i)
      if (out.data() == ge_inputs[i].data() && out.desc() == ge_inputs[i].desc() && !out.owner()) {
        outputs.push_back(inputs[i]);
        aliased = true;
      }
    if (!aliased) outputs.push_back(Unwrap(cpu::ToAtenTensor(out)));
  }
  return outputs;
}

std::vector<at::Tensor> RunGraph(Session& session, uint32_t graph_id, const std::vector<at::Tensor>& inputs) {
  return RunOnTensors(graph_id, inputs, [&](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    return session.RunGraph(graph_id, in, out);
  });
}

// Model files: export a graph (compiled here) and load one back (torchair_ge.export, docs/export.md).
void BindOfflineModels(py::module_& m) {
  m.def(
      "export_model",
      [](PyGraph& graph, const Options& options, const std::string& path, const std::vector<std::string>& input_names,
         const std::vector<std::string>& output_names) {
        graph.get();  // throws if already handed over
        ExportReport report;
        {
          py::gil_scoped_release release;
          NoPythonDispatch no_python;
          report = Unwrap(ExportModel(std::move(graph.graph), options, path, {input_names, output_names}));
        }
        return py::dict(py::arg("tasks") = report.tasks, py::arg("kernels") = report.kernels,
                        py::arg("arena_bytes") = report.arena_bytes, py::arg("const_bytes") = report.const_bytes,
                        py::arg("compile_ms") = report.compile_ms);
      },
      py::arg("graph"), py::arg("options"), py::arg("path"), py::arg("input_names"), py::arg("output_names"),
      "Compiles the graph and writes a model file (and its weights file).");
  py::class_<OfflineModel, std::shared_ptr<OfflineModel>>(m, "OfflineModel")
      .def_static(
          "load",
          [](const std::string& path, const Options& options) {
            py::gil_scoped_release release;
            NoPythonDispatch no_python;
            return Unwrap(LoadModel(path, options));
          },
          py::arg("path"), py::arg("options") = Options{})
      .def("run",
           [](const OfflineModel& model, const std::vector<at::Tensor>& inputs) {
             return RunOnTensors(-1, inputs, [&](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
               return model.Run(in, out);
             });
           })
      .def_property_readonly("input_names", &OfflineModel::input_names)
      .def_property_readonly("output_names", &OfflineModel::output_names)
      .def_property_readonly("inputs", [](const OfflineModel& m) { return DescsToList(m.input_descs()); })
      .def_property_readonly("outputs", [](const OfflineModel& m) { return DescsToList(m.output_descs()); })
      .def_property_readonly("plan_checked", &OfflineModel::plan_checked)
      .def_property_readonly("load_ms", &OfflineModel::load_ms)
      .def_property_readonly("dynamic", &OfflineModel::dynamic)
      .def_property_readonly("symbols", &OfflineModel::DescribeSymbols)
      .def_property_readonly("num_instances", &OfflineModel::num_instances);
}

// Task times as int64 tensors: runs [R, 2] (start, end) and tasks [R, T, 2], in steady-clock ns.
py::dict ProfileToDict(GraphProfile p) {
  const int64_t runs = static_cast<int64_t>(p.runs.size());
  const int64_t tasks = static_cast<int64_t>(p.task_names.size());
  at::Tensor run_times = at::empty({runs, 2}, at::kLong);
  at::Tensor task_times = at::empty({runs, tasks, 2}, at::kLong);
  std::vector<uint64_t> threads;
  auto* rt = run_times.data_ptr<int64_t>();
  auto* tt = task_times.data_ptr<int64_t>();
  for (int64_t r = 0; r < runs; ++r) {
    const RunProfile& run = p.runs[static_cast<size_t>(r)];
    rt[2 * r] = run.start_ns;
    rt[2 * r + 1] = run.end_ns;
    threads.push_back(run.thread_id);
    for (int64_t t = 0; t < tasks; ++t) {
      tt[(r * tasks + t) * 2] = run.tasks[static_cast<size_t>(t)].first;
      tt[(r * tasks + t) * 2 + 1] = run.tasks[static_cast<size_t>(t)].second;
    }
  }
  return py::dict(py::arg("graph_name") = p.graph_name, py::arg("task_names") = p.task_names,
                  py::arg("task_types") = p.task_types, py::arg("task_engines") = p.task_engines,
                  py::arg("task_streams") = p.task_streams, py::arg("run_times") = run_times,
                  py::arg("task_times") = task_times, py::arg("threads") = threads,
                  py::arg("dropped_runs") = p.dropped_runs);
}

}  // namespace

void BindSession(py::module_& m) {
  m.def(
      "ge_initialize", [](const Options& options) { ThrowIfError(GEInitialize(options)); },
      py::arg("options") = Options{});
  m.def("ge_finalize", [] { ThrowIfError(GEFinalize()); });
  m.def("ge_is_initialized", &GEIsInitialized);
  m.def(
      "options_for_later_instance",
      [](const Options& options, const std::string& first_order) {
        return OptionsForLaterInstance(options, Unwrap(ParseTopoStrategy(first_order)));
      },
      py::arg("options"), py::arg("first_order"),
      "The options a size template's later instance compiles with: MemoryAware becomes the order the first "
      "instance kept (a strategy the options name is kept).");
  BindOfflineModels(m);

  py::class_<Session>(m, "Session")
      .def(py::init<Options>(), py::arg("options") = Options{})
      .def(
          "add_graph",
          [](Session& s, uint32_t id, PyGraph& graph, const Options& options) {
            graph.get();  // throws if already handed over
            ThrowIfError(s.AddGraph(id, std::move(graph.graph), options));
          },
          py::arg("graph_id"), py::arg("graph"), py::arg("options") = Options{})
      .def(
          "add_optimized_graph",
          [](Session& s, uint32_t id, PyGraph& graph, const Options& options) {
            graph.get();
            ThrowIfError(s.AddOptimizedGraph(id, std::move(graph.graph), options));
          },
          py::arg("graph_id"), py::arg("graph"), py::arg("options") = Options{},
          "Adds a graph from SizeTemplate.optimize: compile_graph starts after the optimizer.")
      .def(
          "compile_graph",
          [](Session& s, uint32_t id) {
            py::gil_scoped_release release;
            NoPythonDispatch no_python;
            ThrowIfError(s.CompileGraph(id));
          },
          py::arg("graph_id"))
      .def(
          "compile_graph_to_model",
          [](Session& s, uint32_t id, const std::vector<std::string>& input_names) {
            std::string bytes;
            {
              py::gil_scoped_release release;
              NoPythonDispatch no_python;
              bytes = Unwrap(s.CompileGraphToModel(id, {input_names, {}}));
            }
            return py::bytes(bytes);
          },
          py::arg("graph_id"), py::arg("input_names") = std::vector<std::string>{},
          "Compiles the graph and returns it as a model file (bytes, constants inline).")
      .def(
          "load_graph",
          [](Session& s, uint32_t id, const py::bytes& model, const Options& options) {
            std::string bytes = model;
            py::gil_scoped_release release;
            NoPythonDispatch no_python;
            ThrowIfError(s.LoadGraph(id, bytes, options));
          },
          py::arg("graph_id"), py::arg("model"), py::arg("options") = Options{},
          "Adds a graph compiled from a model file held in memory (checked as load_model checks files).")
      .def("run_graph", &RunGraph, py::arg("graph_id"), py::arg("inputs"))
      .def(
          "take_profile", [](Session& s, uint32_t id) { return ProfileToDict(Unwrap(s.TakeProfile(id))); },
          py::arg("graph_id"), "The profiled runs since the last call (graph compiled with profiling on).")
      .def("remove_graph", [](Session& s, uint32_t id) { ThrowIfError(s.RemoveGraph(id)); })
      .def("summary", [](Session& s, uint32_t id) { return SummaryToDict(Unwrap(s.GetCompiledGraphSummary(id))); })
      .def("stream_mode", [](Session& s, uint32_t id) { return Unwrap(s.StreamMode(id)); })
      .def("graph_text", [](Session& s, uint32_t id) { return Unwrap(GraphToText(*Unwrap(s.GetGraph(id)))); })
      .def(
          "dump_graph",
          [](Session& s, uint32_t id, const std::string& format, const std::string& dir, const std::string& stem) {
            return Unwrap(DumpGraph(*Unwrap(s.GetGraph(id)), Unwrap(ParseDumpFormat(format)), dir, stem));
          },
          py::arg("graph_id"), py::arg("format"), py::arg("dir"), py::arg("stem"),
          "Dumps the graph as it stands (after compilation: the final, annotated graph).");
}

}  // namespace ge::python
