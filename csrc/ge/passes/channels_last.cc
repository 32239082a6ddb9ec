// ChannelsLast: a convolution net's activations are kept channels-last (NHWC) from its first
// convolution to the ops that need them NCHW -- GE's format inference, with a Transpose (GE's
// TransData) only at the region's edges. PyTorch hands over NCHW, but the CPU device's
// convolutions (oneDNN through ATen) and pools run faster on NHWC: on the bench's ResNet at
// batch 8 the whole net ran 23% faster channels-last in eager (AMD EPYC Zen 3). Converting
// around each convolution eats most of that, so the layout is kept across the region.
//
// The region grows in execution order: every NCHW float Conv2D joins; a BatchNorm (inference),
// max/avg pool, or elementwise op joins when its activation inputs come from the region (an
// elementwise op's every input of more than one element, of its output's shape: a scalar such
// as `x * 0.5` broadcasts the same way in either layout and is left as it is). A region node
// takes data_format NHWC (window attributes reordered to x's dims) and NHWC output shapes; a
// value entering from outside gets one Transpose to NHWC, a value read outside one Transpose
// back to NCHW, which auto-fusion turns into a permuted load of the kernel that reads it.
// Generated kernels see only shapes, so they need nothing else. Graphs with backward ops are
// left alone (they read NCHW activations), as are connected parts of the region with a single
// convolution (two layout copies for one faster kernel; a training forward graph's convolutions
// are such parts, cut apart by batch norms in training mode).
#include <map>
#include <unordered_map>
#include <utility>
#include <unordered_set>

#include "ge/ops/op_names.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/passes/passes.h"

namespace ge {
namespace {

using IntList = std::vector<int64_t>;

const std::unordered_set<std::string>& ElementwiseOps() {
  static const std::unordered_set<std::string> ops = {"Relu",  "Relu6", "LeakyRelu", "Elu",         "Sigmoid", "Tanh",
                                                      "Swish", "Gelu",  "HardSwish", "HardSigmoid", "Neg",     "Abs",
                                                      kOpAdd,  "Sub",   "Mul",       "Maximum",     "Minimum"};
  return ops;
}

const std::unordered_set<std::string>& PoolOps() {
  static const std::unordered_set<std::string> ops = {"MaxPoolV3", "MaxPoolWithArgmaxV2", "AvgPoolV2"};
  return ops;
}

bool IsTrainingGraph(const Graph& graph) {
  for (const Node* node : graph.nodes())
    if (node->type().find("Backprop") != std::string::npos || node->type().find("Grad") != std::string::npos)
      return true;
  return false;
}

bool IsNchwActivation(const TensorDesc& desc) { return desc.shape.size() == 4 && IsFloatingPoint(desc.dtype); }

// A node the pass may rewrite: no control edges, no side effects, no value updated in place.
bool Rewritable(const Node* node) {
  if (HasControlEdges(node) || HasSideEffects(node)) return false;
  for (const Value& v : node->inputs())
    if (v.valid() && IsMutatedValue(v)) return false;
  for (int o = 0; o < node->num_outputs(); ++o)
    if (IsMutatedValue(Value{const_cast<Node*>(node), o})) return false;
  return true;
}

// A single element broadcasts alike against NCHW and NHWC: an elementwise op's scalar operand
// stays as it is.
bool SingleElement(const Node* node, int input) {
  const Value v = node->input(input);
  return v.valid() && v.node->output_desc(v.index).NumElements() == 1;
}

// The inputs of `node` that carry activations (the ones whose layout changes).
std::vector<int> ActivationInputs(const Node* node) {
  if (ElementwiseOps().count(node->type())) {
    std::vector<int> tensors;
    for (int i = 0; i < node->num_inputs(); ++i)
      if (!SingleElement(node, i)) tensors.push_back(i);
    return tensors;
  }
  return {0};
}

// The nodes that run NHWC, grown in execution order, as connected parts (a union-find).
class Region {
 public:
  bool Contains(const Node* node) const { return part_of_.count(node) != 0; }

  // Whether `node` joins, given the nodes before it in execution order.
  bool Joins(const Node* node) const {
    if (node->num_inputs() == 0 || node->num_outputs() == 0 || !Rewritable(node) ||
        !IsNchwActivation(node->output_desc(0)))
      return false;
    const std::string& type = node->type();
    const std::string format = node->GetAttrOr<std::string>("data_format", "NCHW");
    if (type == kOpConv2D) return format == "NCHW" && !(node->num_inputs() > 3 && node->input(3).valid());
    const bool from_region = Contains(node->input(0).node);
    if (type == kOpBatchNorm) return from_region && format == "NCHW" && !node->GetAttrOr<bool>("is_training", false);
    if (PoolOps().count(type)) return from_region && format == "NCHW";
    if (!ElementwiseOps().count(type) || node->num_outputs() != 1) return false;
    const std::vector<int> activations = ActivationInputs(node);
    for (int i : activations) {
      const Value v = node->input(i);
      if (!v.valid() || !Contains(v.node) || v.node->output_desc(v.index).shape != node->output_desc(0).shape)
        return false;
    }
    return !activations.empty();
  }

  void Add(const Node* node) {
    part_of_[node] = node;
    for (int i : ActivationInputs(node))
      if (Contains(node->input(i).node)) Join(node, node->input(i).node);
    if (node->type() == kOpConv2D) ++convolutions_[Root(node)];
  }

  // The members, in the order they joined, of parts with at least two convolutions.
  std::vector<Node*> Kept(const std::vector<Node*>& joined) {
    std::vector<Node*> kept;
    for (Node* node : joined)
      if (convolutions_[Root(node)] >= 2) kept.push_back(node);
    return kept;
  }

 private:
  const Node* Root(const Node* node) {
    while (part_of_[node] != node) node = part_of_[node] = part_of_[part_of_[node]];
    return node;
  }
  void Join(const Node* a, const Node* b) {
    const Node *ra = Root(a), *rb = Root(b);
    if (ra == rb) return;
    convolutions_[rb] += convolutions_[ra];
    convolutions_.erase(ra);
    part_of_[ra] = rb;
  }

  std::unordered_map<const Node*, const Node*> part_of_;  // union-find over the parts
  std::unordered_map<const Node*, int> convolutions_;     // per part's root
};

// NCHW-ordered per-dim attribute values in NHWC order.
IntList ToNhwcOrder(const IntList& nchw) { return {nchw[0], nchw[2], nchw[3], nchw[1]}; }

class ChannelsLast final : public GraphPass {
 public:
  std::string_view name() const override { return "ChannelsLast"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    if (IsTrainingGraph(graph)) return {};
    GE_ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    Region region;
    std::vector<Node*> joined;
    for (Node* node : order) {
      if (!region.Joins(node)) continue;
      region.Add(node);
      joined.push_back(node);
    }
    const std::vector<Node*> members = region.Kept(joined);
    if (members.empty()) return {};
    const std::unordered_set<const Node*> nhwc(members.begin(), members.end());
    std::map<std::pair<const Node*, int>, Value> entries;  // a value from outside -> its NHWC transpose
    for (Node* node : members) GE_RETURN_IF_ERROR(Convert(graph, nhwc, node, entries));
    *changed = true;
    return {};
  }

 private:
  Expected<Value> Transposed(Graph& graph, Value v, const IntList& perm, const std::string& name) {
    Node* perm_node = AddIndexConst(graph, perm, UniqueName(graph, name + "_perm"));
    Node* transpose = graph.AddNode(kOpTranspose, name, {v, perm_node->output(0)}, 1);
    GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*transpose));
    return transpose->output(0);
  }

  // `node` in NHWC: its activation inputs from outside through a Transpose each (one per value),
  // its attributes reordered, its outputs re-inferred, and its readers outside the region
  // through a Transpose back.
  Status Convert(Graph& graph, const std::unordered_set<const Node*>& nhwc, Node* node,
                 std::map<std::pair<const Node*, int>, Value>& entries) {
    for (int i : ActivationInputs(node)) {
      const Value v = node->input(i);
      if (nhwc.count(v.node)) continue;
      auto entry = entries.find({v.node, v.index});
      if (entry == entries.end()) {
        GE_ASSIGN_OR_RETURN(Value moved,
                            Transposed(graph, v, {0, 2, 3, 1}, UniqueName(graph, v.node->name() + "_nhwc")));
        entry = entries.emplace(std::make_pair(v.node, v.index), moved).first;
      }
      graph.SetInput(node, i, entry->second);
    }
    for (const char* attr : {"strides", "dilations", "ksize"})
      if (node->HasAttr(attr)) {
        GE_ASSIGN_OR_RETURN(IntList values, node->GetAttr<IntList>(attr));
        if (values.size() != 4) return InvalidArgument("{}: attribute '{}' needs 4 values", node->ToString(), attr);
        node->SetAttr(attr, ToNhwcOrder(values));
      }
    if (node->type() == kOpConv2D || node->type() == kOpBatchNorm || PoolOps().count(node->type()))
      node->SetAttr("data_format", std::string("NHWC"));
    // The readers outside the region, before the output shapes change.
    std::vector<std::vector<Use>> outside(static_cast<size_t>(node->num_outputs()));
    for (int o = 0; o < node->num_outputs(); ++o)
      for (const Use& use : node->users(o))
        if (!nhwc.count(use.user)) outside[static_cast<size_t>(o)].push_back(use);
    GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*node));
    for (int o = 0; o < node->num_outputs(); ++o) {
      if (outside[static_cast<size_t>(o)].empty()) continue;
      const std::string name = UniqueName(graph, node->name() + (o == 0 ? "" : "_" + std::to_string(o)) + "_nchw");
      GE_ASSIGN_OR_RETURN(Value nchw, Transposed(graph, node->output(o), {0, 3, 1, 2}, name));
      for (const Use& use : outside[static_cast<size_t>(o)]) graph.SetInput(use.user, use.input_index, nchw);
    }
    return {};
  }

  static std::string UniqueName(const Graph& graph, const std::string& base) {
    std::string name = base;
    for (int k = 1; graph.FindNode(name) != nullptr; ++k) name = base + "_" + std::to_string(k);
    return name;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateChannelsLastPass() { return std::make_unique<ChannelsLast>(); }

}  // namespace ge
