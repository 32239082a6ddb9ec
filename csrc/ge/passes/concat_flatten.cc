// ConcatFlatten: a ConcatV2 part that is itself a ConcatV2 along the same axis, read only
// there, is replaced by that concat's own parts: one concat of every part instead of a copy of
// a copy (torch.cat([torch.cat(embeddings, 1), dense], 1) in recommendation models), and the
// auto-fusion's concat kernel can then read every part (a fused concat's parts must come from
// outside its group, so the inner one stayed a library copy of its own).
#include "ge/ops/op_names.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/passes/passes.h"

namespace ge {
namespace {

constexpr const char* kConcat = "ConcatV2";

// The concat's axis, normalized against its output rank; nullopt when it is not a constant.
std::optional<int64_t> ConcatAxis(const Node* concat) {
  auto axis = ConstInts(concat->input(concat->num_inputs() - 1));
  if (!axis || axis->size() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(concat->output_desc(0).shape.size());
  const int64_t a = (*axis)[0] < 0 ? (*axis)[0] + rank : (*axis)[0];
  return a >= 0 && a < rank ? std::optional<int64_t>(a) : std::nullopt;
}

// A part that may be replaced by its own parts: a concat along `axis`, read only by `outer`.
bool Inlinable(Value part, int64_t axis) {
  const Node* inner = part.node;
  return inner->type() == kConcat && !HasControlEdges(inner) && HasSingleUser(part) && !IsMutatedValue(part) &&
         !FeedsNetOutput(part) && ConcatAxis(inner) == axis;
}

class ConcatFlatten final : public GraphPass {
 public:
  std::string_view name() const override { return "ConcatFlatten"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    std::vector<std::string> concats;  // producers first: an inner concat is flattened before its reader
    for (Node* node : order)
      if (node->type() == kConcat) concats.push_back(node->name());
    for (const std::string& name : concats) {
      Node* outer = graph.FindNode(name);
      if (outer == nullptr || HasControlEdges(outer)) continue;
      GE_ASSIGN_OR_RETURN(bool flattened, Flatten(graph, outer));
      *changed |= flattened;
    }
    return {};
  }

 private:
  static Expected<bool> Flatten(Graph& graph, Node* outer) {
    const auto axis = ConcatAxis(outer);
    if (!axis) return false;
    const int parts = outer->num_inputs() - 1;
    std::vector<Value> flat;
    std::vector<Node*> inlined;
    for (int k = 0; k < parts; ++k) {
      const Value part = outer->input(k);
      if (!Inlinable(part, *axis)) {
        flat.push_back(part);
        continue;
      }
      for (int j = 0; j + 1 < part.node->num_inputs(); ++j) flat.push_back(part.node->input(j));
      inlined.push_back(part.node);
    }
    if (inlined.empty()) return false;
    flat.push_back(outer->input(parts));  // the axis
    Node* merged = graph.AddNode(kConcat, outer->name(), flat, 1);
    merged->mutable_attrs() = outer->attrs();
    merged->SetAttr("N", AttrValue(static_cast<int64_t>(flat.size() - 1)));
    GE_RETURN_IF_ERROR(SubstituteNode(graph, outer, merged));
    GE_RETURN_IF_ERROR(graph.RemoveNode(outer));
    for (Node* inner : inlined) GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, inner));
    return true;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateConcatFlattenPass() { return std::make_unique<ConcatFlatten>(); }

}  // namespace ge
