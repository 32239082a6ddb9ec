// The optimizer's unit: one graph rewrite. See README.md in this directory for the invariants
// every pass keeps.
#pragma once

#include <string_view>

#include "ge/ir/graph.h"

namespace ge {

class Device;

struct PassContext {
  Device* device = nullptr;              // for passes that evaluate (constant folding); may be null
  int64_t fold_limit_bytes = 1 << 20;    // constant folding never materializes more than this per node
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
