// Size templates for the frontend: find where two builds of a graph differ, and instantiate a
// template built from them for the sizes of a call (docs/dynamic_shapes.md).
#include <pybind11/stl.h>

#include "ge/offline_model.h"
#include "ge/serialize/graph_dump.h"
#include "ge/symbolic/size_template.h"
#include "python/py_utils.h"

namespace ge::python {

namespace {

// A template graph and its size sites; the graph is owned here and never compiled.
struct PySizeTemplate {
  std::unique_ptr<Graph> graph;
  SizeTemplate sizes;
};

using SymbolTuple = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>;  // name, input, dim, min, max
using SiteTuple =
    std::tuple<std::string, std::string, std::string, int64_t, std::string>;  // node, kind, attr, index, expr

PySizeTemplate MakeTemplate(PyGraph& graph, const std::vector<SymbolTuple>& symbols,
                            const std::vector<SiteTuple>& sites, const std::vector<std::string>& guards) {
  PySizeTemplate out{std::move(graph.graph), {}};
  if (!out.graph) throw GeError("this graph was already added to a session");
  for (const auto& [name, input, dim, min, max] : symbols) out.sizes.symbols.push_back({name, input, dim, min, max});
  const std::vector<std::string> names = out.sizes.SymbolNames();
  for (const auto& [node, kind, attr, index, expr] : sites)
    out.sizes.sites.push_back(
        {node, Unwrap(ParseSizeSiteKind(kind)), attr, index, Unwrap(SymExpr::Parse(expr, names))});
  for (const std::string& guard : guards) out.sizes.guards.push_back(Unwrap(SymExpr::Parse(guard, names)));
  ThrowIfError(out.sizes.Verify(*out.graph));
  return out;
}

}  // namespace

void BindSymbolic(py::module_& m) {
  m.def(
      "diff_sizes",
      [](PyGraph& a, PyGraph& b) {
        std::vector<std::tuple<std::string, std::string, std::string, int64_t, int64_t, int64_t>> out;
        for (const SizeDifference& d : Unwrap(DiffSizes(a.get(), b.get())))
          out.emplace_back(d.node, std::string(SizeSiteKindName(d.kind)), d.attr, d.index, d.a, d.b);
        return out;
      },
      py::arg("a"), py::arg("b"),
      "The integers that differ between two builds of one graph at different sizes: (node, kind, attr, index, "
      "value in a, value in b); a GeError names the first difference that is not an integer.");
  m.def(
      "symbolic_values",
      [](PyGraph& graph) {
        int64_t count = 0;
        for (const Node* node : graph.get().nodes())
          for (int o = 0; o < node->num_outputs(); ++o)
            for (const SymExpr& dim : node->output_desc(o).symbolic)
              if (!dim.IsConstant()) {
                ++count;
                break;
              }
        return count;
      },
      py::arg("graph"), "How many values of an instantiated graph have a shape named with a size symbol.");
  m.def(
      "check_same_graph", [](PyGraph& a, PyGraph& b) { ThrowIfError(CheckSameGraph(a.get(), b.get())); }, py::arg("a"),
      py::arg("b"), "Raises a GeError naming the first difference between two graphs.");
  py::class_<PySizeTemplate>(m, "SizeTemplate", "A graph built at some sizes plus its size sites.")
      .def(py::init(&MakeTemplate), py::arg("graph"), py::arg("symbols"), py::arg("sites"), py::arg("guards"),
           "Takes the graph. symbols: (name, input, dim, min, max); sites: (node, kind, attr, index, expression).")
      .def(
          "instantiate",
          [](const PySizeTemplate& t, const std::vector<int64_t>& values, const std::string& name) {
            return PyGraph{Unwrap(Instantiate(*t.graph, t.sizes, values, name))};
          },
          py::arg("values"), py::arg("name") = "",
          "The graph for these symbol values (in `symbols` order), named `name` (default: the template's).")
      .def(
          "optimize",
          [](const PySizeTemplate& t, const std::vector<int64_t>& values, const Options& options) {
            std::unique_ptr<Graph> graph;
            {
              py::gil_scoped_release release;
              NoPythonDispatch no_python;
              graph = Unwrap(OptimizeInstance(*t.graph, t.sizes, values, options));
            }
            return PyGraph{std::move(graph)};
          },
          py::arg("values"), py::arg("options") = Options{},
          "The graph for these symbol values after the engine's optimizer, with nothing computed from a size "
          "folded into a constant: what an optimized size template is derived from.")
      .def(
          "read_symbols",
          [](const PySizeTemplate& t, const std::vector<Shape>& shapes) {
            return Unwrap(ReadSymbols(*t.graph, t.sizes, shapes));
          },
          py::arg("input_shapes"), "The symbol values for inputs of these shapes, after every check.")
      .def(
          "export",
          [](const PySizeTemplate& t, const std::vector<int64_t>& example, const Options& options,
             const std::string& path, const std::vector<std::string>& input_names,
             const std::vector<std::string>& output_names) {
            ExportReport report;
            {
              py::gil_scoped_release release;
              NoPythonDispatch no_python;
              report =
                  Unwrap(ExportSizeTemplate(*t.graph, t.sizes, example, options, path, {input_names, output_names}));
            }
            return py::dict(py::arg("tasks") = report.tasks, py::arg("kernels") = report.kernels,
                            py::arg("arena_bytes") = report.arena_bytes, py::arg("const_bytes") = report.const_bytes,
                            py::arg("compile_ms") = report.compile_ms);
          },
          py::arg("example"), py::arg("options"), py::arg("path"), py::arg("input_names"), py::arg("output_names"),
          "Writes a model file with symbolic sizes (after compiling the instance for `example` symbol values).")
      .def("to_text", [](const PySizeTemplate& t) { return Unwrap(GraphToText(*t.graph)); })
      .def_property_readonly("num_sites", [](const PySizeTemplate& t) { return t.sizes.sites.size(); })
      .def_property_readonly("sites", [](const PySizeTemplate& t) {
        std::vector<std::string> out;
        const std::vector<std::string> names = t.sizes.SymbolNames();
        for (const SizeSite& s : t.sizes.sites)
          out.push_back(fmt::format("{} {} {}[{}] = {}", s.node, SizeSiteKindName(s.kind), s.attr, s.index,
                                    s.expr.ToString(names)));
        return out;
      });
}

}  // namespace ge::python
