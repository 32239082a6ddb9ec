#include "ge/serialize/py_export.h"

#include <cmath>
#include <map>

#include "ge/ir/annotations.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

std::string PyString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string PyFloat(double x) {
  if (std::isnan(x)) return "float(\"nan\")";
  if (std::isinf(x)) return x > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string PyBytes(const void* data, int64_t n) {
  std::string out = "b\"";
  const auto* p = static_cast<const unsigned char*>(data);
  for (int64_t i = 0; i < n; ++i) out += fmt::format("\\x{:02x}", p[i]);
  return out + "\"";
}

std::string PyDtype(DataType dtype) { return fmt::format("DataType.{}", DataTypeName(dtype)); }

template <typename T, typename F>
std::string PyList(const std::vector<T>& values, F one) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + one(values[i]);
  return out + "]";
}

class Writer {
 public:
  explicit Writer(std::string sidecar_name) : sidecar_name_(std::move(sidecar_name)) {}

  // A Python expression that makes the torch tensor `t`.
  std::string TensorExpr(const Tensor& t) {
    std::string data;
    if (t.nbytes() <= kPyInlineConstBytes) {
      data = PyBytes(t.data(), t.nbytes());
    } else {
      data = fmt::format("_sidecar({}, {})", dump_.sidecar.size(), t.nbytes());
      dump_.sidecar.append(static_cast<const char*>(t.data()), static_cast<size_t>(t.nbytes()));
    }
    return fmt::format("_tensor({}, {}, {})", PyDtype(t.desc().dtype),
                       PyList(t.desc().shape, [](int64_t d) { return std::to_string(d); }), data);
  }

  std::string AttrExpr(const AttrValue& value) {
    return std::visit(
        [&](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>)
            return std::to_string(x);
          else if constexpr (std::is_same_v<T, double>)
            return PyFloat(x);
          else if constexpr (std::is_same_v<T, bool>)
            return x ? "True" : "False";
          else if constexpr (std::is_same_v<T, std::string>)
            return PyString(x);
          else if constexpr (std::is_same_v<T, DataType>)
            return PyDtype(x);
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
            return PyList(x, [](int64_t v) { return std::to_string(v); });
          else if constexpr (std::is_same_v<T, std::vector<double>>)
            return PyList(x, PyFloat);
          else if constexpr (std::is_same_v<T, std::vector<bool>>) {
            std::vector<int64_t> ints(x.begin(), x.end());
            return PyList(ints, [](int64_t v) { return std::string(v ? "True" : "False"); });
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>)
            return PyList(x, PyString);
          else
            return TensorExpr(x);
        },
        value);
  }

  PyDump Finish(std::string body) {
    dump_.script = std::move(body);
    return std::move(dump_);
  }
  const std::string& sidecar_name() const { return sidecar_name_; }
  bool has_sidecar() const { return !dump_.sidecar.empty(); }

 private:
  std::string sidecar_name_;
  PyDump dump_;
};

bool ReplayedAttr(const std::string& key) {
  return key.empty() || key[0] != '_' || key == kAttrFxNode || key == kAttrSource;
}

}  // namespace

Expected<PyDump> GraphToPython(const Graph& graph, const std::string& sidecar_name) {
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  Writer w(sidecar_name);
  std::map<const Node*, std::string> var;
  auto ref = [&](Value v) { return fmt::format("{}[{}]", var.at(v.node), v.index); };

  std::string body;
  for (const Node* node : order) {
    const std::string name = fmt::format("n{}", var.size());
    var[node] = name;
    if (node->type() == kOpData) {
      body += fmt::format("    {} = [b.create_input({}, {}, {}, {})]\n", name, node->GetAttrOr<int64_t>("index", 0),
                          PyDtype(node->output_desc(0).dtype),
                          PyList(node->output_desc(0).shape, [](int64_t d) { return std::to_string(d); }),
                          PyString(node->name()));
      continue;
    }
    if (node->type() == kOpConst) {
      GE_ASSIGN_OR_RETURN(Tensor value, node->GetAttr<Tensor>("value"));
      body += fmt::format("    {} = [b.create_const({}, {})]\n", name, w.TensorExpr(value), PyString(node->name()));
      continue;
    }
    if (node->type() == kOpNetOutput) {
      std::vector<std::string> outs;
      for (Value v : node->inputs()) outs.push_back(ref(v));
      body += fmt::format("    b.set_outputs({})\n", PyList(outs, [](const std::string& s) { return s; }));
      continue;
    }
    const OpProto* proto = OpRegistry::Global().Find(node->type());
    GE_CHECK(proto != nullptr, "{}: op type is not registered", node->ToString());
    // Regroup the flat node inputs by prototype input (a dynamic input takes a list).
    std::vector<std::string> args;
    for (int i = 0; i < static_cast<int>(proto->inputs.size()); ++i) {
      const auto [begin, end] = proto->InputRange(i, node->num_inputs());
      if (proto->inputs[static_cast<size_t>(i)].kind == InputKind::kDynamic) {
        std::vector<std::string> items;
        for (int k = begin; k < end; ++k) items.push_back(node->input(k).valid() ? ref(node->input(k)) : "None");
        args.push_back(PyList(items, [](const std::string& s) { return s; }));
      } else if (begin < node->num_inputs()) {
        const Value v = node->input(begin);
        args.push_back(v.valid() ? ref(v) : "None");
      }
    }
    std::string attrs;
    for (const auto& [key, value] : node->attrs())
      if (ReplayedAttr(key))
        attrs += fmt::format("{}{}: {}", attrs.empty() ? "" : ", ", PyString(key), w.AttrExpr(value));
    body += fmt::format("    {} = b.op({}, {}, {{{}}}, {}, {})\n", name, PyString(node->type()),
                        PyList(args, [](const std::string& s) { return s; }), attrs, PyString(node->name()),
                        proto->HasDynamicOutput() ? node->num_outputs() : -1);
  }

  std::string script = fmt::format(
      "# torchair_ge graph '{}' ({} nodes), written by the graph dump (format py).\n"
      "# `python <this file>` rebuilds it; build() returns a torchair_ge._C.Graph for a Session.\n"
      "import os\n\nimport torch\n\nfrom torchair_ge._C import DataType, GraphBuilder\n"
      "from torchair_ge.ge.dtypes import ge_to_torch\n\n"
      "_SIDECAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), {})\n\n\n"
      "def _sidecar(offset, nbytes):\n"
      "    with open(_SIDECAR, \"rb\") as f:\n"
      "        f.seek(offset)\n"
      "        data = f.read(nbytes)\n"
      "    if len(data) != nbytes:\n"
      "        raise ValueError(f\"{{_SIDECAR}} is truncated: constant at {{offset}} needs {{nbytes}} bytes\")\n"
      "    return data\n\n\n"
      "def _tensor(dtype, shape, data):\n"
      "    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)\n"
      "    return flat.view(ge_to_torch(dtype)).reshape(shape).clone()\n\n\n"
      "def build():\n"
      "    b = GraphBuilder({})\n",
      graph.name(), graph.num_nodes(), PyString(w.sidecar_name()), PyString(graph.name()));
  script += body;
  script +=
      "    return b.build()\n\n\nif __name__ == \"__main__\":\n    graph = build()\n"
      "    print(f\"{graph.name}: {graph.num_nodes} nodes\")\n";
  return w.Finish(std::move(script));
}

}  // namespace ge
