// MatMulBiasFold: Add(MatMul(a, b), bias) with a bias over the last dim becomes the product's
// own bias input, so the kernel adds it while the output is hot (addmm) instead of in a second
// pass. Only when the product has no bias yet, the Add is its only user, the bias has the
// product's dtype and shape [N] (N = the product's last dim), and the Add's output is the
// product's shape (no broadcasting beyond the bias).
#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

class MatMulBiasFold final : public GraphPass {
 public:
  std::string_view name() const override { return "MatMulBiasFold"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    std::vector<std::string> adds;
    for (Node* node : order)
      if (node->type() == kOpAdd) adds.push_back(node->name());
    for (const std::string& name : adds) {
      Node* add = graph.FindNode(name);
      if (add == nullptr || HasControlEdges(add)) continue;
      for (int side = 0; side < 2; ++side) {
        const Value product = add->input(side), bias = add->input(1 - side);
        Node* mm = product.node;
        if ((mm->type() != kOpMatMulV2 && mm->type() != kOpBatchMatMulV2) || HasControlEdges(mm)) continue;
        if ((mm->num_inputs() > 2 && mm->input(2).valid()) || !HasSingleUser(product)) continue;
        const TensorDesc& out = mm->output_desc(0);
        const TensorDesc& b = bias.node->output_desc(bias.index);
        if (b.dtype != out.dtype || b.shape != Shape{out.shape.back()} || !(add->output_desc(0) == out)) continue;
        if (IsMutatedValue(bias) || IsMutatedValue(add->output(0)) || FeedsNetOutput(product)) continue;
        if (mm->num_inputs() > 2)
          graph.SetInput(mm, 2, bias);
        else
          graph.AppendInput(mm, bias);
        graph.ReplaceAllUsesWith(add->output(0), product);
        GE_RETURN_IF_ERROR(graph.RemoveNode(add));
        *changed = true;
        break;
      }
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateMatMulBiasFoldPass() { return std::make_unique<MatMulBiasFold>(); }

}  // namespace ge
