// ConstantMerge: constants with the same dtype, shape and bytes become one node.
#include <cstring>
#include <map>
#include <string_view>

#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"

namespace ge {
namespace {

class ConstantMerge final : public GraphPass {
 public:
  std::string_view name() const override { return "ConstantMerge"; }

  Status Run(Graph& graph, const PassContext& context, bool* changed) override {
    // Keyed by desc + a hash of the bytes; equal hashes are confirmed byte for byte.
    std::multimap<std::pair<std::string, size_t>, Node*> seen;
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    for (Node* node : order) {
      const Tensor* value = ConstValue(node->output(0));
      if (value == nullptr || value->nbytes() > context.fold_limit_bytes || HasControlEdges(node)) continue;
      const std::string_view bytes(static_cast<const char*>(value->data()), static_cast<size_t>(value->nbytes()));
      const auto key = std::make_pair(value->desc().ToString(), std::hash<std::string_view>{}(bytes));
      Node* twin = nullptr;
      for (auto [it, end] = seen.equal_range(key); it != end && !twin; ++it) {
        const Tensor* other = ConstValue(it->second->output(0));
        if (std::memcmp(other->data(), value->data(), bytes.size()) == 0) twin = it->second;
      }
      if (twin == nullptr || FeedsNetOutput(node->output(0))) {
        if (!twin) seen.emplace(key, node);
        continue;
      }
      graph.ReplaceAllUsesWith(node->output(0), twin->output(0));
      GE_RETURN_IF_ERROR(graph.RemoveNode(node));
      *changed = true;
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateConstantMergePass() { return std::make_unique<ConstantMerge>(); }

}  // namespace ge
