#include "ge/compiler/prepare.h"

#include "ge/compiler/inplace_order.h"
#include "ge/ops/op_registry.h"

namespace ge {

Status PrepareGraph(Graph& graph) {
  GE_RETURN_IF_ERROR(graph.Verify());
  for (Node* data : graph.DataNodes()) {
    const TensorDesc& desc = data->output_desc(0);
    GE_CHECK(desc.IsStatic(), "graph input {} has shape {}: dynamic shapes are not supported yet", data->ToString(),
             ShapeToString(desc.shape));
  }
  // Steps below read nodes' inputs before VerifyGraphTypes: every input they may read must exist.
  for (Node* node : graph.nodes()) GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyInputs(*node));
  GE_RETURN_IF_ERROR(OrderInplaceUpdates(graph));
  OrderCollectives(graph);
  GE_RETURN_IF_ERROR(VerifyGraphTypes(graph));
  for (Node* node : graph.nodes())
    for (int o = 0; o < node->num_outputs(); ++o)
      GE_CHECK(node->output_desc(o).IsStatic(), "{} output {} has no static shape ({})", node->ToString(), o,
               node->output_desc(o).ToString());
  return {};
}

}  // namespace ge
