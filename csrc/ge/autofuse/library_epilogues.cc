#include "ge/autofuse/library_epilogues.h"

#include "ge/ops/epilogue_activation.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge::autofuse {
namespace {

// A float product whose only reader is the activation: nothing else needs the raw product.
bool FoldableProduct(Value product) {
  const Node* mm = product.node;
  if (mm->type() != kOpMatMulV2 || HasControlEdges(mm) || !HasSingleUser(product) || FeedsNetOutput(product) ||
      IsMutatedValue(product))
    return false;
  if (mm->num_inputs() > 3 && mm->input(3).valid()) return false;  // int8 offset_w
  if (mm->GetAttrOr<int64_t>("offset_x", 0) != 0) return false;
  const DataType dt = mm->output_desc(0).dtype;
  return dt == DataType::kFloat || dt == DataType::kFloat16 || dt == DataType::kBFloat16;
}

}  // namespace

Expected<int> FoldLibraryEpilogues(Graph& graph) {
  int folded = 0;
  GE_ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  for (Node* act : order) {
    const std::optional<EpilogueActivation> activation = EpilogueActivationOf(*act);
    if (!activation || act->num_inputs() != 1 || HasControlEdges(act) || !FoldableProduct(act->input(0))) continue;
    const std::string name(EpilogueActivationName(*activation));
    Node* mm = act->input(0).node;
    const std::vector<Value> inputs = {mm->input(0), mm->input(1), mm->num_inputs() > 2 ? mm->input(2) : Value{}};
    Node* fused = graph.AddNode(kOpFusedMatMul, mm->name() + "_" + name, inputs, 1);
    fused->SetAttr("transpose_x1", mm->GetAttrOr<bool>("transpose_x1", false));
    fused->SetAttr("transpose_x2", mm->GetAttrOr<bool>("transpose_x2", false));
    fused->SetAttr("fused_op_type", name);
    GE_RETURN_IF_ERROR(SubstituteNode(graph, act, fused));
    fused->output_desc(0).symbolic = act->output_desc(0).symbolic;  // the value it replaces, at any size
    GE_RETURN_IF_ERROR(graph.RemoveNode(act));
    GE_RETURN_IF_ERROR(graph.RemoveNode(mm));
    ++folded;
  }
  return folded;
}

}  // namespace ge::autofuse
