// ReduceOverPack: a sum over the axis a Pack (torch.stack) made, of the stacked values or of
// their product with a weight, is the sum of the parts: ReduceSum(Mul(w, Pack(x0..xn-1)), a)
// becomes w[a=0] * x0 + w[a=1] * x1 + ... (a mixture of experts' gated combination,
// torch.stack(list).sum(0)). The stacked tensor is never made and the products and sums are
// elementwise over the parts' shape, which auto-fusion makes one kernel of; the reduction was a
// library sum over a non-trailing axis (which generated kernels do not reduce). The terms are
// added in the order the reduction adds them.
#include "ge/ops/op_names.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/passes/passes.h"

namespace ge {
namespace {

constexpr const char* kPack = "Pack";
constexpr const char* kReduceSum = "ReduceSum";

const TensorDesc& DescOf(Value v) { return v.node->output_desc(v.index); }

// A value only `reader` reads, that nothing else observes.
bool Private(Value v) {
  return HasSingleUser(v) && !IsMutatedValue(v) && !FeedsNetOutput(v) && !HasControlEdges(v.node);
}

struct Match {
  Node* reduce;
  Node* pack;
  std::optional<Value> weight;  // the other factor of the Mul, if any
  int64_t axis;
};

std::optional<Match> MatchReduce(Node* reduce) {
  if (HasControlEdges(reduce) || reduce->num_inputs() != 2) return std::nullopt;
  auto axes = ConstInts(reduce->input(1));
  const Shape& in = DescOf(reduce->input(0)).shape;
  const auto rank = static_cast<int64_t>(in.size());
  if (!axes || axes->size() != 1 || rank < 2 || !IsFloatingPoint(DescOf(reduce->input(0)).dtype)) return std::nullopt;
  const int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
  Value x = reduce->input(0);
  std::optional<Value> weight;
  if (x.node->type() == kOpMul && Private(x)) {
    for (int side = 0; side < 2 && !weight; ++side)
      if (x.node->input(side).node->type() == kPack) {
        weight = x.node->input(1 - side);
        x = x.node->input(side);
      }
    if (!weight) return std::nullopt;
  }
  Node* pack = x.node;
  // The stack may have other readers (the same experts combined per task): they keep it, this
  // sum reads its parts.
  if (pack->type() != kPack || IsMutatedValue(x) || HasControlEdges(pack) || pack->num_inputs() < 2)
    return std::nullopt;
  const int64_t pack_axis = pack->GetAttrOr<int64_t>("axis", 0);
  if ((pack_axis < 0 ? pack_axis + rank : pack_axis) != axis) return std::nullopt;
  if (weight) {  // every weight slice must broadcast into a part without growing it
    const Shape& w = DescOf(*weight).shape;
    if (w.size() != in.size() || DescOf(*weight).dtype != DescOf(pack->input(0)).dtype) return std::nullopt;
    for (size_t d = 0; d < w.size(); ++d)
      if (w[d] != 1 && w[d] != in[d]) return std::nullopt;
  }
  return Match{reduce, pack, weight, axis};
}

Shape Without(Shape s, int64_t axis) {
  s.erase(s.begin() + axis);
  return s;
}

class ReduceOverPack final : public GraphPass {
 public:
  std::string_view name() const override { return "ReduceOverPack"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    std::vector<std::string> reduces;
    for (Node* node : graph.nodes())
      if (node->type() == kReduceSum) reduces.push_back(node->name());
    for (const std::string& name : reduces) {
      Node* reduce = graph.FindNode(name);
      if (reduce == nullptr) continue;
      auto match = MatchReduce(reduce);
      if (!match) continue;
      GE_RETURN_IF_ERROR(Rewrite(graph, *match));
      *changed = true;
    }
    return {};
  }

 private:
  static Expected<Node*> Added(Graph& graph, const std::string& type, const std::string& name,
                               const std::vector<Value>& inputs) {
    Node* node = graph.AddNode(type, name, inputs, 1);
    GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*node));
    return node;
  }

  static Value ShapeConst(Graph& graph, const Shape& s, const std::string& name) {
    return AddIndexConst(graph, s, name)->output(0);
  }

  // The weight's slice for part `e`, without the packed axis: a select (GatherV2 of a 0-d
  // index; a view, or a load where it lies in the weight for a generated kernel), or where the
  // weight has one value along the axis, a reshape that drops it.
  static Expected<Value> WeightSlice(Graph& graph, const Match& m, int64_t e) {
    const Value w = *m.weight;
    const std::string base = m.reduce->name() + "_w" + std::to_string(e);
    if (DescOf(w).shape[static_cast<size_t>(m.axis)] != 1) {
      Node* index = AddConst(graph, Tensor::FromVector(DataType::kInt64, {}, std::vector<int64_t>{e}), base + "_index");
      GE_ASSIGN_OR_RETURN(Node * selected,
                          Added(graph, kOpGatherV2, base,
                                {w, index->output(0), AddIndexConst(graph, {m.axis}, base + "_axis")->output(0)}));
      return selected->output(0);
    }
    const Shape target = Without(DescOf(w).shape, m.axis);
    GE_ASSIGN_OR_RETURN(Node * reshaped,
                        Added(graph, kOpReshape, base, {w, ShapeConst(graph, target, base + "_shape")}));
    return reshaped->output(0);
  }

  static Status Rewrite(Graph& graph, const Match& m) {
    const std::string base = m.reduce->name();
    Value sum;
    for (int e = 0; e < m.pack->num_inputs(); ++e) {
      Value term = m.pack->input(e);
      if (m.weight) {
        GE_ASSIGN_OR_RETURN(Value w, WeightSlice(graph, m, e));
        GE_ASSIGN_OR_RETURN(Node * product, Added(graph, kOpMul, base + "_term" + std::to_string(e), {w, term}));
        term = product->output(0);
      }
      if (e > 0) {
        GE_ASSIGN_OR_RETURN(Node * add, Added(graph, kOpAdd, base + "_sum" + std::to_string(e), {sum, term}));
        term = add->output(0);
      }
      sum = term;
    }
    Node* last = sum.node;  // the last Add: a pack has at least two parts
    // keep_dims: one reshape to the reduction's shape.
    if (last->output_desc(0).shape != m.reduce->output_desc(0).shape) {
      GE_ASSIGN_OR_RETURN(last, Added(graph, kOpReshape, base + "_out",
                                      {sum, ShapeConst(graph, m.reduce->output_desc(0).shape, base + "_out_shape")}));
    }
    GE_RETURN_IF_ERROR(SubstituteNode(graph, m.reduce, last));
    return RemoveWithDeadInputs(graph, m.reduce);
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateReduceOverPackPass() { return std::make_unique<ReduceOverPack>(); }

}  // namespace ge
