// TransposeMatMulFold: a Transpose that only swaps a matrix operand's last two dims becomes the
// product's transpose flag (MatMulV2 transpose_x1/x2, BatchMatMulV2 adj_x1/adj_x2), so the
// kernel reads the operand transposed instead of a copy being made on every run.
//
// For BatchMatMulV2 the transpose may reach the product through a chain of single-user
// BroadcastTo / Identity / Reshape nodes that leave the last two dims alone (attention's
// k.transpose(-2, -1) -> expand -> reshape): those act per matrix, so they commute with the
// transpose; the chain is re-targeted to the untransposed shapes and the flag flipped.
//
// A BatchMatMulV2 operand's transpose that also moves other dims keeps them and gives the swap
// to the flag, when that leaves the innermost dim in place: a hand-written attention's
// k.view(b, s, h, d).transpose(1, 2).transpose(-2, -1) is one permutation [0, 2, 3, 1], a copy
// element by element; as [0, 2, 1, 3] and adj_x2 it moves whole rows of d, and the keys are
// [b, h, s, d] as SDPA's are (the FusedAttention rule's form).
#include <optional>
#include <vector>

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

// What a transpose by `perm` of a product's operand leaves to copy once the product reads the
// operand with its last two dims swapped: nothing (an empty permutation: the transpose only
// swaps them), or the permutation with its last two entries exchanged when that keeps the
// innermost dim in place and `perm` did not; nullopt when the flag would not help.
std::optional<std::vector<int64_t>> PermLeftByTheFlag(const std::vector<int64_t>& perm, bool batched) {
  if (SwapsLastTwo(perm)) return std::vector<int64_t>{};
  const size_t n = perm.size();
  if (!batched || n < 3) return std::nullopt;
  std::vector<int64_t> left = perm;
  std::swap(left[n - 1], left[n - 2]);
  const auto innermost = static_cast<int64_t>(n - 1);
  if (left[n - 1] != innermost || perm[n - 1] == innermost) return std::nullopt;
  return left;
}

// Points `node`'s input `slot` (a shape or a permutation) at a new constant `values`, of the
// index type it had.
Status SetIndexInput(Graph& graph, Node* node, int slot, const std::vector<int64_t>& values, const std::string& name) {
  const Value old = node->input(slot);
  Node* c = AddIndexConst(graph, values, name, old.node->output_desc(old.index).dtype);
  graph.SetInput(node, slot, c->output(0));
  return old.node->HasUsers() ? Status{} : graph.RemoveNode(old.node);
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
    // The products first: a fold removes its transpose (and the transpose's constants), which
    // a walk over every node would visit after they were freed.
    std::vector<Node*> products;
    for (Node* node : graph.nodes())
      if (node->type() == kOpMatMulV2 || node->type() == kOpBatchMatMulV2) products.push_back(node);
    for (Node* mm : products) {
      const bool batched = mm->type() == kOpBatchMatMulV2;
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
    const auto perm = ConstInts(transpose->input(1));
    if (!perm || (!batched && perm->size() != 2)) return false;
    const std::optional<std::vector<int64_t>> left = PermLeftByTheFlag(*perm, batched);
    if (!left) return false;
    const Value source = transpose->input(0);
    if (IsMutatedValue(source)) return false;

    // Re-target the chain (farthest first) to the untransposed shapes.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      if ((*it)->type() != kOpIdentity)
        GE_RETURN_IF_ERROR(
            SetIndexInput(graph, *it, 1, SwapLastTwo((*it)->output_desc(0).shape), (*it)->name() + "_shape"));
    if (left->empty()) {  // the transpose goes
      Node* first = chain.empty() ? mm : chain.back();
      graph.SetInput(first, chain.empty() ? operand : 0, source);
      GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, transpose));
    } else {  // it keeps the rest of its permutation
      GE_RETURN_IF_ERROR(SetIndexInput(graph, transpose, 1, *left, transpose->name() + "_rows"));
      transpose->output_desc(0) = TensorDesc();
      GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*transpose));
    }
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
