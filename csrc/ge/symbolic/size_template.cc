#include "ge/symbolic/size_template.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "ge/ir/annotations.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/symbolic_infer.h"

namespace ge {
namespace {

// A constant whose elements differ in more places than this is data, not a shape vector.
constexpr size_t kMaxSitesPerConstant = 64;

bool IntegerConstant(DataType dtype) { return dtype == DataType::kInt64 || dtype == DataType::kInt32; }
bool RealConstant(DataType dtype) { return dtype == DataType::kFloat || dtype == DataType::kDouble; }

Status WriteElement(Tensor& t, int64_t i, int64_t value) {
  switch (t.desc().dtype) {
    case DataType::kInt64: t.data_as<int64_t>()[i] = value; return {};
    case DataType::kInt32:
      GE_CHECK(value >= INT32_MIN && value <= INT32_MAX, "size {} does not fit the int32 constant", value);
      t.data_as<int32_t>()[i] = static_cast<int32_t>(value);
      return {};
    case DataType::kFloat: t.data_as<float>()[i] = static_cast<float>(value); return {};
    case DataType::kDouble: t.data_as<double>()[i] = static_cast<double>(value); return {};
    default: return InvalidArgument("a {} constant holds no sizes", DataTypeName(t.desc().dtype));
  }
}

std::string Where(const SizeSite& site) {
  switch (site.kind) {
    case SizeSiteKind::kInputDim: return fmt::format("'{}' dim {}", site.node, site.index);
    case SizeSiteKind::kAttr: return fmt::format("'{}' attribute {}[{}]", site.node, site.attr, site.index);
    default: return fmt::format("'{}' element {}", site.node, site.index);
  }
}

// The integer at a site of `node` (a check that the site exists and holds one).
Expected<int64_t> ReadSite(const Node& node, const SizeSite& site) {
  switch (site.kind) {
    case SizeSiteKind::kInputDim: {
      GE_CHECK(node.type() == kOpData, "size site {}: not a Data node", Where(site));
      const Shape& shape = node.output_desc(0).shape;
      GE_CHECK(site.index >= 0 && site.index < static_cast<int64_t>(shape.size()), "size site {}: rank is {}",
               Where(site), shape.size());
      return shape[static_cast<size_t>(site.index)];
    }
    case SizeSiteKind::kAttr: {
      auto it = node.attrs().find(site.attr);
      GE_CHECK(it != node.attrs().end(), "size site {}: no such attribute", Where(site));
      if (site.index < 0) {
        const auto* v = std::get_if<int64_t>(&it->second);
        GE_CHECK(v != nullptr, "size site {}: not an int attribute", Where(site));
        return *v;
      }
      const auto* list = std::get_if<std::vector<int64_t>>(&it->second);
      GE_CHECK(list != nullptr && site.index < static_cast<int64_t>(list->size()),
               "size site {}: not an element of an int list", Where(site));
      return (*list)[static_cast<size_t>(site.index)];
    }
    case SizeSiteKind::kConstElement: {
      const auto value = node.attrs().find("value");  // a Const from a file may lack it
      const auto* t =
          node.type() == kOpConst && value != node.attrs().end() ? std::get_if<Tensor>(&value->second) : nullptr;
      GE_CHECK(t != nullptr, "size site {}: not a constant", Where(site));
      GE_CHECK(site.index >= 0 && site.index < t->desc().NumElements(), "size site {}: the constant has {} elements",
               Where(site), t->desc().NumElements());
      GE_CHECK(IntegerConstant(t->desc().dtype) || RealConstant(t->desc().dtype),
               "size site {}: a {} constant holds no sizes", Where(site), DataTypeName(t->desc().dtype));
      return t->SizeElement(site.index);
    }
  }
  return Internal("size site {}: unknown kind", Where(site));
}

Status WriteSite(Node& node, const SizeSite& site, int64_t value) {
  switch (site.kind) {
    case SizeSiteKind::kInputDim: {
      Shape shape = node.output_desc(0).shape;
      shape[static_cast<size_t>(site.index)] = value;
      node.output_desc(0).SetShape(std::move(shape));
      return {};
    }
    case SizeSiteKind::kAttr:
      if (site.index < 0) {
        node.SetAttr(site.attr, value);
      } else {
        auto list = std::get<std::vector<int64_t>>(node.attrs().at(site.attr));
        list[static_cast<size_t>(site.index)] = value;
        node.SetAttr(site.attr, std::move(list));
      }
      return {};
    case SizeSiteKind::kConstElement: {
      // A private copy by now: Instantiate copies a constant before writing its first site.
      Tensor constant = std::get<Tensor>(node.attrs().at("value"));
      return WriteElement(constant, site.index, value);
    }
  }
  return Internal("size site {}: unknown kind", Where(site));
}

// Gives a Const node its own copy of its bytes (the template's stay shared and unchanged).
void CopyConstant(Node& node) {
  const Tensor& shared = std::get<Tensor>(node.attrs().at("value"));
  Tensor own = Tensor::Allocate(shared.desc());
  if (shared.nbytes() > 0) std::memcpy(own.data(), shared.data(), static_cast<size_t>(shared.nbytes()));
  node.SetAttr("value", std::move(own));
}

using SitesOfNodes = std::unordered_map<std::string, std::vector<const SizeSite*>>;

SitesOfNodes SitesByNode(const SizeTemplate& sizes) {
  SitesOfNodes out;
  for (const SizeSite& site : sizes.sites) out[site.node].push_back(&site);
  return out;
}

// The template's sites as symbolic shape inference reads them.
class TemplateSizeExprs final : public SizeExprs {
 public:
  explicit TemplateSizeExprs(const SitesOfNodes& sites) : sites_(sites) {}
  const SymExpr* InputDim(const Node& data, int64_t dim) const override {
    return Find(data, SizeSiteKind::kInputDim, dim);
  }
  const SymExpr* ConstElement(const Node& constant, int64_t index) const override {
    return Find(constant, SizeSiteKind::kConstElement, index);
  }
  bool HasAttrSizes(const Node& node) const override { return Has(node, SizeSiteKind::kAttr); }
  bool HasConstSizes(const Node& constant) const override { return Has(constant, SizeSiteKind::kConstElement); }

 private:
  const SymExpr* Find(const Node& node, SizeSiteKind kind, int64_t index) const {
    const auto it = sites_.find(node.name());
    if (it == sites_.end()) return nullptr;
    for (const SizeSite* site : it->second)
      if (site->kind == kind && site->index == index) return &site->expr;
    return nullptr;
  }
  bool Has(const Node& node, SizeSiteKind kind) const {
    const auto it = sites_.find(node.name());
    if (it == sites_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [kind](const SizeSite* s) { return s->kind == kind; });
  }
  const SitesOfNodes& sites_;
};

}  // namespace

std::string_view SizeSiteKindName(SizeSiteKind kind) {
  switch (kind) {
    case SizeSiteKind::kInputDim: return "input_dim";
    case SizeSiteKind::kAttr: return "attr";
    default: return "const_element";
  }
}

Expected<SizeSiteKind> ParseSizeSiteKind(std::string_view name) {
  for (SizeSiteKind kind : {SizeSiteKind::kInputDim, SizeSiteKind::kAttr, SizeSiteKind::kConstElement})
    if (SizeSiteKindName(kind) == name) return kind;
  return InvalidArgument("unknown size site kind '{}'", name);
}

std::vector<std::string> SizeTemplate::SymbolNames() const {
  std::vector<std::string> names;
  for (const SymbolDef& s : symbols) names.push_back(s.name);
  return names;
}

Status SizeTemplate::Verify(const Graph& graph) const {
  const auto n = static_cast<int64_t>(symbols.size());
  const std::vector<Node*> inputs = graph.DataNodes();
  for (const SymbolDef& s : symbols) {
    GE_CHECK(!s.name.empty() && s.min <= s.max, "symbol '{}': bad name or range [{}, {}]", s.name, s.min, s.max);
    if (s.input < 0) continue;
    GE_CHECK(s.input < static_cast<int64_t>(inputs.size()) && s.dim >= 0 &&
                 s.dim < inputs[static_cast<size_t>(s.input)]->output_desc(0).rank(),
             "symbol '{}' is read from input {} dim {}, which the graph does not have", s.name, s.input, s.dim);
  }
  for (const SizeSite& site : sites) {
    const Node* node = graph.FindNode(site.node);
    GE_CHECK(node != nullptr, "size site {}: the graph has no such node", Where(site));
    GE_RETURN_IF_ERROR(ReadSite(*node, site).status());
    GE_CHECK(site.expr.MaxSymbol() < n, "size site {}: reads symbol {} of {}", Where(site), site.expr.MaxSymbol(), n);
  }
  for (const SymExpr& guard : guards)
    GE_CHECK(guard.MaxSymbol() < n, "size guard reads symbol {} of {}", guard.MaxSymbol(), n);
  return {};
}

}  // namespace ge

namespace ge {
namespace {

std::string Spell(const SizeTemplate& sizes, const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < sizes.symbols.size() && i < values.size(); ++i)
    out += fmt::format("{}{}={}", i ? ", " : "", sizes.symbols[i].name, values[i]);
  return out;
}

// Spells every value's symbolic shape that varies as the node's kAttrSymbolicShapes, for dumps
// ("" for the other outputs).
void SpellSymbolicShapes(Graph& graph, const std::vector<std::string>& names) {
  for (Node* node : graph.nodes()) {
    std::vector<std::string> texts = GetAttrOr(node->attrs(), kAttrSymbolicShapes, std::vector<std::string>{});
    bool changed = false;
    for (int o = 0; o < node->num_outputs(); ++o) {
      const std::vector<SymExpr>& dims = node->output_desc(o).symbolic;
      if (std::all_of(dims.begin(), dims.end(), [](const SymExpr& d) { return d.IsConstant(); })) continue;
      std::string text;
      for (size_t d = 0; d < dims.size(); ++d) text += (d ? ", " : "") + dims[d].ToString(names);
      texts.resize(static_cast<size_t>(node->num_outputs()));
      texts[static_cast<size_t>(o)] = "[" + text + "]";
      changed = true;
    }
    if (changed) node->SetAttr(kAttrSymbolicShapes, texts);
  }
}

Status CheckRangesAndGuards(const SizeTemplate& sizes, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < sizes.symbols.size(); ++i) {
    const SymbolDef& s = sizes.symbols[i];
    GE_CHECK(values[i] >= s.min && values[i] <= s.max, "{} = {} is outside the range [{}, {}] the graph was built for",
             s.name, values[i], s.min, s.max);
  }
  for (const SymExpr& guard : sizes.guards) {
    GE_ASSIGN_OR_RETURN(int64_t holds, guard.Evaluate(values));
    GE_CHECK(holds != 0, "sizes {} break the condition {} the graph was built under", Spell(sizes, values),
             guard.ToString(sizes.SymbolNames()));
  }
  return {};
}

}  // namespace

SymbolReader::SymbolReader(const Graph& graph, const SizeTemplate& sizes) : sizes_(&sizes) {
  std::unordered_map<std::string, std::vector<const SizeSite*>> sites = SitesByNode(sizes);
  for (const Node* data : graph.DataNodes()) {
    input_names_.push_back(data->name());
    expected_.push_back(data->output_desc(0).shape);
    input_sites_.push_back(sites[data->name()]);
  }
}

Expected<std::vector<int64_t>> SymbolReader::Read(const std::vector<Shape>& input_shapes) const {
  GE_CHECK(input_shapes.size() == expected_.size(), "{} inputs given, the graph takes {}", input_shapes.size(),
           expected_.size());
  std::vector<int64_t> values;
  values.reserve(sizes_->symbols.size());
  for (const SymbolDef& s : sizes_->symbols) {
    GE_CHECK(s.input >= 0, "symbol {} is not a size of any input, so no call can give its value", s.name);
    const Shape& shape = input_shapes[static_cast<size_t>(s.input)];
    GE_CHECK(s.dim < static_cast<int64_t>(shape.size()), "input {} has {} dims, the graph reads dim {} for {}", s.input,
             shape.size(), s.dim, s.name);
    values.push_back(shape[static_cast<size_t>(s.dim)]);
  }
  GE_RETURN_IF_ERROR(CheckRangesAndGuards(*sizes_, values));
  for (size_t i = 0; i < expected_.size(); ++i) {  // each input against its dims, with the sites' values
    Shape expected = expected_[i];
    for (const SizeSite* site : input_sites_[i]) {
      GE_ASSIGN_OR_RETURN(expected[static_cast<size_t>(site->index)], site->expr.Evaluate(values));
    }
    GE_CHECK(input_shapes[i] == expected, "input {} ('{}') has shape {}, the graph expects {} for {}", i,
             input_names_[i], ShapeToString(input_shapes[i]), ShapeToString(expected), Spell(*sizes_, values));
  }
  return values;
}

Expected<std::vector<int64_t>> ReadSymbols(const Graph& graph, const SizeTemplate& sizes,
                                           const std::vector<Shape>& input_shapes) {
  return SymbolReader(graph, sizes).Read(input_shapes);
}

Expected<std::unique_ptr<Graph>> Instantiate(const Graph& graph, const SizeTemplate& sizes,
                                             const std::vector<int64_t>& values, const std::string& name) {
  GE_CHECK(values.size() == sizes.symbols.size(), "{} size values for {} symbols", values.size(), sizes.symbols.size());
  GE_RETURN_IF_ERROR(CheckRangesAndGuards(sizes, values));
  const SitesOfNodes sites = SitesByNode(sizes);
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> copy, CloneGraph(graph, name));
  GE_ASSIGN_OR_RETURN(std::vector<Node*> order, copy->TopologicalOrder());
  for (Node* node : order) {
    const auto it = sites.find(node->name());
    if (it != sites.end()) {
      for (const SizeSite* site : it->second) GE_RETURN_IF_ERROR(ReadSite(*node, *site).status());
      if (node->type() == kOpConst) CopyConstant(*node);
      for (const SizeSite* site : it->second) {
        GE_ASSIGN_OR_RETURN(int64_t value, site->expr.Evaluate(values));
        GE_RETURN_IF_ERROR(WriteSite(*node, *site, value));
      }
    }
    Status inferred = OpRegistry::Global().VerifyAndInfer(*node);
    if (!inferred.ok()) return inferred.WithContext(fmt::format("instantiating for {}", Spell(sizes, values)));
  }
  const std::vector<std::string> names = sizes.SymbolNames();
  Status named = InferSymbolicShapes(*copy, TemplateSizeExprs(sites), values, names);
  if (!named.ok()) return named.WithContext(fmt::format("instantiating for {}", Spell(sizes, values)));
  SpellSymbolicShapes(*copy, names);
  GE_RETURN_IF_ERROR(copy->Verify());
  return copy;
}

namespace {

std::string InputName(const Value& v) { return v.valid() ? fmt::format("{}:{}", v.node->name(), v.index) : "-"; }

Status SameEdges(const Node& a, const Node& b) {
  GE_CHECK(a.type() == b.type(), "node '{}' is {} in one build and {} in the other", a.name(), a.type(), b.type());
  GE_CHECK(a.num_inputs() == b.num_inputs() && a.num_outputs() == b.num_outputs(),
           "node '{}' has {}/{} inputs/outputs in one build and {}/{} in the other", a.name(), a.num_inputs(),
           a.num_outputs(), b.num_inputs(), b.num_outputs());
  for (int i = 0; i < a.num_inputs(); ++i)
    GE_CHECK(InputName(a.input(i)) == InputName(b.input(i)),
             "node '{}' input {} reads {} in one build and {} in the other", a.name(), i, InputName(a.input(i)),
             InputName(b.input(i)));
  GE_CHECK(a.control_inputs().size() == b.control_inputs().size(), "node '{}' has other control inputs", a.name());
  for (size_t i = 0; i < a.control_inputs().size(); ++i)
    GE_CHECK(a.control_inputs()[i]->name() == b.control_inputs()[i]->name(), "node '{}' has other control inputs",
             a.name());
  return {};
}

void AddDifference(std::vector<SizeDifference>& out, const Node& node, SizeSiteKind kind, std::string attr,
                   int64_t index, int64_t a, int64_t b) {
  if (a != b) out.push_back({node.name(), kind, std::move(attr), index, a, b});
}

Status DiffConstant(const Node& node, const Tensor& a, const Tensor& b, std::vector<SizeDifference>& out) {
  GE_CHECK(a.desc() == b.desc(), "constant '{}' is {} in one build and {} in the other", node.name(),
           a.desc().ToString(), b.desc().ToString());
  if (a.data() == b.data() || std::memcmp(a.data(), b.data(), static_cast<size_t>(a.nbytes())) == 0) return {};
  const DataType dtype = a.desc().dtype;
  const int64_t n = a.desc().NumElements();
  GE_CHECK(IntegerConstant(dtype) || (RealConstant(dtype) && n == 1),
           "constant '{}' ({}) has other values in the two builds", node.name(), a.desc().ToString());
  const size_t before = out.size();
  for (int64_t i = 0; i < n; ++i) {
    auto x = a.SizeElement(i);
    auto y = b.SizeElement(i);
    GE_CHECK(x.ok() && y.ok(), "constant '{}' has values in the two builds that are not sizes", node.name());
    AddDifference(out, node, SizeSiteKind::kConstElement, "", i, *x, *y);
    GE_CHECK(out.size() - before <= kMaxSitesPerConstant, "constant '{}' ({}) differs in more than {} elements",
             node.name(), a.desc().ToString(), kMaxSitesPerConstant);
  }
  return {};
}

Status DiffAttr(const Node& node, const std::string& name, const AttrValue& a, const AttrValue& b,
                std::vector<SizeDifference>& out) {
  GE_CHECK(a.index() == b.index(), "node '{}' attribute {} has another type in the other build", node.name(), name);
  if (const auto* x = std::get_if<int64_t>(&a)) {
    AddDifference(out, node, SizeSiteKind::kAttr, name, -1, *x, std::get<int64_t>(b));
  } else if (const auto* list = std::get_if<std::vector<int64_t>>(&a)) {
    const auto& other = std::get<std::vector<int64_t>>(b);
    GE_CHECK(list->size() == other.size(), "node '{}' attribute {} has {} and {} elements", node.name(), name,
             list->size(), other.size());
    for (size_t i = 0; i < list->size(); ++i)
      AddDifference(out, node, SizeSiteKind::kAttr, name, static_cast<int64_t>(i), (*list)[i], other[i]);
  } else if (const auto* t = std::get_if<Tensor>(&a)) {
    GE_CHECK(name == "value" && node.type() == kOpConst, "node '{}' has a tensor attribute {}", node.name(), name);
    return DiffConstant(node, *t, std::get<Tensor>(b), out);
  } else {
    GE_CHECK(AttrToString(a) == AttrToString(b), "node '{}' attribute {} is {} in one build and {} in the other",
             node.name(), name, AttrToString(a), AttrToString(b));
  }
  return {};
}

// Attributes compared between builds: all but the dumps' spelling of symbolic shapes, which the
// frontend writes from FX and Instantiate rewrites from the template's SymbolicShapes.
size_t ComparedAttrs(const Node& node) { return node.attrs().size() - node.attrs().count(kAttrSymbolicShapes); }

Status DiffNode(const Node& a, const Node& b, std::vector<SizeDifference>& out) {
  GE_RETURN_IF_ERROR(SameEdges(a, b));
  GE_CHECK(ComparedAttrs(a) == ComparedAttrs(b), "node '{}' has {} attributes in one build and {} in the other",
           a.name(), ComparedAttrs(a), ComparedAttrs(b));
  for (const auto& [name, value] : a.attrs()) {
    if (name == kAttrSymbolicShapes) continue;
    const auto it = b.attrs().find(name);
    GE_CHECK(it != b.attrs().end(), "node '{}' has attribute {} in one build only", a.name(), name);
    GE_RETURN_IF_ERROR(DiffAttr(a, name, value, it->second, out));
  }
  if (a.type() == kOpData) {
    const TensorDesc& x = a.output_desc(0);
    const TensorDesc& y = b.output_desc(0);
    GE_CHECK(x.dtype == y.dtype && x.rank() == y.rank(), "input '{}' is {} in one build and {} in the other", a.name(),
             x.ToString(), y.ToString());
    for (int64_t d = 0; d < x.rank(); ++d)
      AddDifference(out, a, SizeSiteKind::kInputDim, "", d, x.shape[static_cast<size_t>(d)],
                    y.shape[static_cast<size_t>(d)]);
  }
  return {};
}

}  // namespace

Expected<std::vector<SizeDifference>> DiffSizes(const Graph& a, const Graph& b) {
  GE_CHECK(a.num_nodes() == b.num_nodes(), "the builds have {} and {} nodes", a.num_nodes(), b.num_nodes());
  std::vector<SizeDifference> out;
  for (const Node* x : a.nodes()) {
    const Node* y = b.FindNode(x->name());
    GE_CHECK(y != nullptr, "node '{}' ({}) is in one build only", x->name(), x->type());
    GE_RETURN_IF_ERROR(DiffNode(*x, *y, out));
  }
  return out;
}

Status CheckSameGraph(const Graph& a, const Graph& b) {
  GE_ASSIGN_OR_RETURN(std::vector<SizeDifference> differences, DiffSizes(a, b));
  if (!differences.empty()) {
    const SizeDifference& d = differences.front();
    return InvalidArgument("node '{}' {} {}[{}] is {} in one graph and {} in the other", d.node,
                           SizeSiteKindName(d.kind), d.attr, d.index, d.a, d.b);
  }
  for (const Node* x : a.nodes()) {
    const Node* y = b.FindNode(x->name());
    for (int o = 0; o < x->num_outputs(); ++o)
      GE_CHECK(x->output_desc(o) == y->output_desc(o), "node '{}' output {} is {} in one graph and {} in the other",
               x->name(), o, x->output_desc(o).ToString(), y->output_desc(o).ToString());
  }
  return {};
}

}  // namespace ge
