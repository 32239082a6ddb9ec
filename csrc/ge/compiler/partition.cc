#include "ge/compiler/partition.h"

namespace ge {

bool IsLocalOp(const std::string& type) { return type == kOpData || type == kOpConst || type == kOpNetOutput; }

Status PartitionGraph(Graph& graph, const KernelFactory& kernels, const std::string& device_name) {
  for (Node* node : graph.nodes()) {
    if (IsLocalOp(node->type())) {
      node->SetAttr(kAttrEngine, std::string(kEngineLocal));
    } else if (!kernels.Supports(node->type())) {
      return Unimplemented("{}: device '{}' has no kernel for op type {}", node->ToString(), device_name, node->type());
    } else if (node->type() == kOpTorch) {
      node->SetAttr(kAttrEngine, std::string(kEngineHostFallback));
    } else {
      node->SetAttr(kAttrEngine, std::string(kEngineNative));
    }
    if (!IsLocalOp(node->type())) node->SetAttr(kAttrStream, int64_t{0});  // one stream on this device
  }
  return {};
}

}  // namespace ge
