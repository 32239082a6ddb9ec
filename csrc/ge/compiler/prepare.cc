#include "ge/compiler/prepare.h"

#include "ge/compiler/inplace_order.h"
#include "ge/ops/op_registry.h"

namespace ge {

Status PrepareGraph(Graph& graph) {
  GE_RETURN_IF_ERROR(graph.Verify());
  GE_RETURN_IF_ERROR(OrderInplaceUpdates(graph));
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  for (Node* node : order) {
    if (node->type() == kOpData) {
      const TensorDesc& desc = node->output_desc(0);
      GE_CHECK(desc.IsStatic(), "graph input {} has shape {}: dynamic shapes are not supported yet",
               node->ToString(), ShapeToString(desc.shape));
    }
    std::vector<TensorDesc> before;
    for (int o = 0; o < node->num_outputs(); ++o) before.push_back(node->output_desc(o));
    GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*node));
    for (int o = 0; o < node->num_outputs(); ++o) {
      const TensorDesc& now = node->output_desc(o);
      if (before[o].dtype != DataType::kUndefined && !(before[o] == now))
        return InvalidArgument("{} output {}: InferShape gives {} but the graph says {}", node->ToString(), o,
                               now.ToString(), before[o].ToString());
      GE_CHECK(now.IsStatic() || node->type() == kOpData, "{} output {} has no static shape ({})", node->ToString(),
               o, now.ToString());
    }
  }
  return {};
}

}  // namespace ge
