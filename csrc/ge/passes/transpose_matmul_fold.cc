// TransposeMatMulFold: a Transpose that only swaps a matrix operand's last two dims becomes the
// product's transpose flag (MatMulV2 transpose_x1/x2, BatchMatMulV2 adj_x1/adj_x2), so the
// kernel reads the operand transposed instead of a copy being made on every run.
//
// For BatchMatMulV2 the transpose may reach the product through a chain of single-user
// BroadcastTo / Identity / Reshape nodes that leave the last two dims alone (attention's
// k.transpose(-2, -1) -> expand -> reshape): those act per matrix, so they commute with the
// transpose; the chain is re-targeted to the untransposed shapes and the flag flipped.
#include "ge/ops/op_registry.h"
#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

bool SwapsLastTwo(const std::vector<int64_t>& perm) {
  const size_t n = perm.size();
  if (n < 2) return false;
  for (size_t i = 0; i + 2 < n; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return perm[n - 2] == static_cast<int64_t>(n - 1) && perm[n - 1] == static_cast<int64_t>(n - 2);
}

Shape SwapLastTwo(Shape s) {
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

// A link of the chain between the transpose and the product: keeps the last two dims.
bool PerMatrixLink(const Node* node) {
  const std::string& t = node->type();
  if (t != "Identity" && t != "BroadcastTo" && !IsPlainReshape(node)) return false;
  const Shape& in = node->input(0).node->output_desc(node->input(0).index).shape;
  const Shape& out = node->output_desc(0).shape;
  if (in.size() < 2 || out.size() < 2) return false;
  return in[in.size() - 1] == out[out.size() - 1] && in[in.size() - 2] == out[out.size() - 2];
}

class TransposeMatMulFold final : public GraphPass {
 public:
  std::string_view name() const override { return "TransposeMatMulFold"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    for (Node* mm : graph.nodes()) {
      const bool batched = mm->type() == kOpBatchMatMulV2;
      if (mm->type() != kOpMatMulV2 && !batched) continue;
      for (int operand = 0; operand < 2; ++operand) {
        GE_ASSIGN_OR_RETURN(bool folded, TryFold(graph, mm, operand, batched));
        *changed |= folded;
      }
    }
    return {};
  }

 private:
  static Expected<bool> TryFold(Graph& graph, Node* mm, int operand, bool batched) {
    // Walk up from the operand through per-matrix links to a transpose.
    std::vector<Node*> chain;  // links, nearest the product first
    Value v = mm->input(operand);
    while (batched && PerMatrixLink(v.node) && HasSingleUser(v) && !HasControlEdges(v.node)) {
      chain.push_back(v.node);
      v = v.node->input(0);
    }
    Node* transpose = v.node;
    if (transpose->type() != kOpTranspose || !HasSingleUser(v) || HasControlEdges(transpose)) return false;
    auto perm = ConstInts(transpose->input(1));
    if (!perm || !SwapsLastTwo(*perm) || (!batched && perm->size() != 2)) return false;
    const Value source = transpose->input(0);
    if (IsMutatedValue(source)) return false;

    // Re-target the chain (farthest first) to the untransposed shapes.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      Node* link = *it;
      if (link->type() != kOpIdentity) {
        const Shape target = SwapLastTwo(link->output_desc(0).shape);
        const DataType index_type = link->input(1).node->output_desc(link->input(1).index).dtype;
        Tensor shape = index_type == DataType::kInt32
                           ? Tensor::FromVector(DataType::kInt32, {static_cast<int64_t>(target.size())},
                                                std::vector<int32_t>(target.begin(), target.end()))
                           : Tensor::FromVector(DataType::kInt64, {static_cast<int64_t>(target.size())}, target);
        Node* c = AddConst(graph, std::move(shape), link->name() + "_shape");
        Node* old = link->input(1).node;
        graph.SetInput(link, 1, c->output(0));
        if (!old->HasUsers()) GE_RETURN_IF_ERROR(graph.RemoveNode(old));
      }
    }
    Node* first = chain.empty() ? mm : chain.back();
    const int slot = chain.empty() ? operand : 0;
    graph.SetInput(first, slot, source);
    GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, transpose));
    const char* flag =
        batched ? (operand == 0 ? "adj_x1" : "adj_x2") : (operand == 0 ? "transpose_x1" : "transpose_x2");
    mm->SetAttr(flag, !mm->GetAttrOr<bool>(flag, false));
    // Inference gives the links their new descs (farthest first); the product's is unchanged.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      for (int o = 0; o < (*it)->num_outputs(); ++o) (*it)->output_desc(o) = TensorDesc();
      GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(**it));
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateTransposeMatMulFoldPass() { return std::make_unique<TransposeMatMulFold>(); }

}  // namespace ge
