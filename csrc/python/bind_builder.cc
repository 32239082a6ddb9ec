// GraphBuilder / EsTensor / Graph for the Python frontend (graphs built straight in C++ memory).
#include <pybind11/stl.h>

#include "devices/cpu/aten_bridge.h"
#include "ge/es/graph_builder.h"
#include "ge/ir/annotations.h"
#include "ge/ops/op_registry.h"
#include "ge/serialize/graph_dump.h"
#include "python/py_utils.h"

namespace ge::python {

namespace {

es::EsTensor Checked(es::GraphBuilder& b, es::EsTensor t) {
  ThrowIfError(b.status());
  return t;
}

es::OpInput ToOpInput(const py::handle& item) {
  if (item.is_none()) return std::monostate{};
  if (py::isinstance<es::EsTensor>(item)) return item.cast<es::EsTensor>();
  return item.cast<std::vector<es::EsTensor>>();
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): the binding table of the builder
void BindBuilder(py::module_& m) {
  py::class_<es::EsTensor>(m, "EsTensor", "One output of a node being built.")
      .def_property_readonly("dtype", &es::EsTensor::dtype)
      .def_property_readonly("shape", [](const es::EsTensor& t) { return t.shape(); })
      .def_property_readonly("node_name", [](const es::EsTensor& t) { return t.value().node->name(); })
      .def_property_readonly("node_type", [](const es::EsTensor& t) { return t.value().node->type(); })
      .def_property_readonly("index", [](const es::EsTensor& t) { return t.value().index; })
      .def("__repr__", [](const es::EsTensor& t) {
        return fmt::format("EsTensor({}:{} {})", t.value().node->name(), t.value().index, t.desc().ToString());
      });

  py::class_<PyGraph>(m, "Graph", "A built Ascend IR graph.")
      .def_property_readonly("name", [](PyGraph& g) { return g.get().name(); })
      .def_property_readonly("num_nodes", [](PyGraph& g) { return g.get().num_nodes(); })
      .def("node_types",
           [](PyGraph& g) {
             std::vector<std::string> types;
             for (Node* n : Unwrap(g.get().TopologicalOrder())) types.push_back(n->type());
             return types;
           })
      .def("to_text", [](PyGraph& g) { return Unwrap(GraphToText(g.get())); })
      .def(
          "dump",
          [](PyGraph& g, const std::string& format, const std::string& dir, const std::string& stem) {
            return Unwrap(DumpGraph(g.get(), Unwrap(ParseDumpFormat(format)), dir, stem));
          },
          py::arg("format"), py::arg("dir"), py::arg("stem"),
          "Writes the graph as dir/<stem>.<format> (txt, onnx, pbtxt, py, dot); returns the path.");

  m.def(
      "graph_from_text",
      [](const std::string& text, bool zero_elided_constants) {
        return PyGraph{Unwrap(GraphFromText(text, zero_elided_constants))};
      },
      py::arg("text"), py::arg("zero_elided_constants") = false,
      "Rebuilds a graph from a txt dump (untrusted input: every reference and value is checked).\n"
      "Constants the dump left out are an error, or zeros with zero_elided_constants=True.");

  py::class_<es::GraphBuilder>(m, "GraphBuilder",
                               "EagerStyle builder: ops are verified and inferred as they are added.")
      .def(py::init<std::string>(), py::arg("name") = "graph")
      .def(
          "create_input",
          [](es::GraphBuilder& b, int64_t index, DataType dtype, const Shape& shape, const std::string& name) {
            return Checked(b, b.CreateInput(index, dtype, shape, Format::kND, name));
          },
          py::arg("index"), py::arg("dtype"), py::arg("shape"), py::arg("name") = "")
      .def(
          "create_const",
          [](es::GraphBuilder& b, const at::Tensor& value, const std::string& name) {
            // Zero-copy for contiguous CPU tensors: the graph keeps the tensor alive.
            return Checked(b, b.CreateConst(Unwrap(cpu::ToGeTensor(value.contiguous())), name));
          },
          py::arg("value"), py::arg("name") = "")
      .def(
          "op",
          [](es::GraphBuilder& b, const std::string& type, const py::list& inputs, const py::dict& attrs,
             const std::string& name, int num_outputs) {
            const OpProto* proto = OpRegistry::Global().Find(type);
            if (!proto) throw GeError(fmt::format("op type '{}' is not registered", type));
            std::vector<es::OpInput> ins;
            for (auto item : inputs) ins.push_back(ToOpInput(item));
            AttrMap attr_map;
            for (auto [k, v] : attrs) attr_map[k.cast<std::string>()] = ToAttr(*proto, k.cast<std::string>(), v);
            auto outs = b.Op(type, ins, std::move(attr_map), name, num_outputs);
            ThrowIfError(b.status());
            return outs;
          },
          py::arg("type"), py::arg("inputs"), py::arg("attrs") = py::dict(), py::arg("name") = "",
          py::arg("num_outputs") = -1)
      .def_property_readonly("num_nodes", [](es::GraphBuilder& b) { return b.graph().num_nodes(); })
      .def(
          "annotate_nodes_since",
          [](es::GraphBuilder& b, int start, const std::string& fx_node, const std::string& source,
             const std::string& user_stream) {
            // Nodes are kept in creation order: everything from `start` on came from one FX node.
            const auto nodes = b.graph().nodes();
            for (size_t i = static_cast<size_t>(std::max(start, 0)); i < nodes.size(); ++i) {
              if (!nodes[i]->HasAttr(kAttrFxNode)) nodes[i]->SetAttr(kAttrFxNode, fx_node);
              if (!source.empty() && !nodes[i]->HasAttr(kAttrSource)) nodes[i]->SetAttr(kAttrSource, source);
              if (!user_stream.empty() && nodes[i]->type() != "Const" && !nodes[i]->HasAttr(kAttrUserStream))
                nodes[i]->SetAttr(kAttrUserStream, user_stream);
            }
          },
          py::arg("start"), py::arg("fx_node"), py::arg("source") = "", py::arg("user_stream") = "",
          "Tags nodes created since `start` with the FX node (and source line) they came from, and the "
          "npu_stream_switch label they were made under.")
      .def(
          "add_control_edge",
          [](es::GraphBuilder& b, const es::EsTensor& before, const es::EsTensor& after) {
            b.graph().AddControlEdge(before.value().node, after.value().node);
          },
          py::arg("before"), py::arg("after"), "`after`'s node runs only once `before`'s node has finished.")
      .def(
          "annotate_symbolic_shape",
          [](es::GraphBuilder& b, const es::EsTensor& t, const std::string& shape) {
            Node* node = t.value().node;
            auto shapes = GetAttrOr(node->attrs(), kAttrSymbolicShapes, std::vector<std::string>{});
            shapes.resize(static_cast<size_t>(node->num_outputs()));
            shapes[static_cast<size_t>(t.value().index)] = shape;
            node->SetAttr(kAttrSymbolicShapes, shapes);
          },
          py::arg("tensor"), py::arg("shape"),
          "Records the output's shape with Dynamo's symbols (\"[s0, 16]\") on its node, for dumps.")
      .def("set_outputs",
           [](es::GraphBuilder& b, const std::vector<es::EsTensor>& outs) {
             b.SetOutputs(outs);
             ThrowIfError(b.status());
           })
      .def("build", [](es::GraphBuilder& b) { return PyGraph{Unwrap(b.Build())}; });
}

}  // namespace ge::python
