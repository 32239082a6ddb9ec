// InferShape: re-verifies every node and re-runs its shape inference after the rewrites, so a
// pass that left a desc inconsistent fails here, naming the node, rather than in a kernel.
#include "ge/passes/pass_manager.h"
#include "ge/passes/passes.h"

namespace ge {
namespace {

class InferShape final : public GraphPass {
 public:
  std::string_view name() const override { return "InferShape"; }
  Status Run(Graph& graph, const PassContext&, bool*) override { return VerifyGraphTypes(graph); }
};

}  // namespace

std::unique_ptr<GraphPass> CreateInferShapePass() { return std::make_unique<InferShape>(); }

}  // namespace ge
