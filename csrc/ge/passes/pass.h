// The optimizer's unit: one graph rewrite. See README.md in this directory for the invariants
// every pass keeps.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ge/ir/graph.h"
#include "ge/ir/tensor.h"

namespace ge {

// Runs a graph whose inputs are all constants to completion on the target device. The compiler
// implements it with its own back end (compiler/graph_compiler.h: DeviceGraphEvaluator), so a
// pass that evaluates (constant folding) computes exactly what the run would, workspaces and
// all, without the optimizer depending on the compiler or the runtime.
class GraphEvaluator {
 public:
  virtual ~GraphEvaluator() = default;
  virtual bool Supports(const std::string& op_type) const = 0;
  // The graph's outputs, in NetOutput order. The graph is consumed (annotated, planned).
  virtual Expected<std::vector<Tensor>> Evaluate(Graph& graph) const = 0;
};

struct PassContext {
  const GraphEvaluator* evaluator = nullptr;  // for passes that evaluate (constant folding); may be null
  int64_t fold_limit_bytes = 1 << 20;         // constant folding never materializes more than this per node
  // Optimizing a size template (OptimizeInstance): nodes holding a size of the graph's symbols.
  // Nothing computed from them is folded, since a folded constant's shape or values would follow
  // the sizes; may be null.
  const std::unordered_set<std::string>* size_dependent = nullptr;
  // Rewrite rules (rewrite_rules.h) that ge.optimizationSwitch turned off ("RotaryMul:off"); may
  // be null.
  const std::map<std::string, bool>* switches = nullptr;
};

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual std::string_view name() const = 0;
  // Rewrites `graph`; sets *changed when it did anything. A failure is a bug or bad input
  // and stops the compile with the pass named.
  virtual Status Run(Graph& graph, const PassContext& context, bool* changed) = 0;
};

}  // namespace ge
