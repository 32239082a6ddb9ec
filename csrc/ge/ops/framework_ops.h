// Prototypes derived at run time from a framework operator's schema: how an operator a user
// registered with torch.library (or TORCH_LIBRARY in C++) becomes an IR op with no converter,
// IR file or InferShape written for it. Tensor arguments become inputs, the other arguments
// attrs (same names), the returns -- and the updated value of every mutated argument -- outputs
// whose descs the framework's fake/meta kernel computed at compile time (carried as attrs).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ge/ops/op_registry.h"

namespace ge {

struct FrameworkOpSpec {
  std::string type;                                       // the IR op type
  std::string framework_op;                               // "ns::name" or "ns::name.overload"
  std::vector<std::pair<std::string, InputKind>> inputs;  // tensor arguments, schema order
  std::vector<std::pair<std::string, AttrType>> attrs;    // the other arguments, schema order
  // Mutated arguments: {output, input}. `in_place`: the outputs are the inputs' memory (graph
  // inputs updated for the caller); otherwise each output is an updated copy of its input.
  std::vector<std::pair<int, int>> mutated;
  bool in_place = false;
  std::string doc;
};

// Registers the prototype, or checks that an identical one is registered (a second compile of
// the same model derives the same spec). Attrs of optional arguments get a default value and the
// node lists the arguments it passes as None in attr `none_args`.
Status RegisterFrameworkOp(OpRegistry& registry, const FrameworkOpSpec& spec);

}  // namespace ge
