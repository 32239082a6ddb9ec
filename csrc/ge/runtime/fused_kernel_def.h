// What auto-fusion hands a device for one generated kernel: a typed contract, read by the memory
// stage (workspaces, strided inputs), the task builder and the device's FusedKernel kernel. The
// FusedKernel node's attributes repeat it for dumps (and InferShape checks its output descs); no
// stage reads the kernel's description back from them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ge/ir/attr.h"
#include "ge/ir/tensor_desc.h"

namespace ge {

// A library op (MatMulV2, Conv2D, ...) whose output only the generated kernel reads: the task
// runs it first, into a workspace, and the kernel reads that workspace while it is in cache.
struct FusedProducerDef {
  std::string type;
  std::string name;    // the node it was (profiles, messages)
  AttrMap attrs;       // its own attributes, as its kernel takes them
  int num_inputs = 0;  // its inputs come first among the task's, producer after producer
  int buffer = 0;      // the kernel input buffer its output fills
  TensorDesc output;   // that output: a workspace of the task
};

struct FusedKernelDef {
  std::string symbol;          // the generated function in the model's kernel library
  std::string kernel_ir;       // the kernel IR's text form
  std::vector<int64_t> sizes;  // the kernel's `sizes` argument (kernels generated for run-time sizes)
  // `sizes` as expressions over the graph's size symbols, when every entry has one (the
  // buffers' symbolic shapes give them): the argument at any other sizes. Empty otherwise.
  std::vector<SymExpr> size_exprs;
  std::vector<FusedProducerDef> producers;
  std::vector<TensorDesc> outputs;
  std::vector<std::string> fused_ops;  // "Type:name" of every node it replaced, producers first
  // Per output: the task inputs whose bytes it may be stored over (KernelIR::InputsStorableOver),
  // so that an update of a graph input (an optimizer step) is computed in the input's own memory.
  std::vector<std::vector<int>> storable_over;

  // The task's inputs that producers read, before the generated kernel's own inputs.
  int ProducerInputs() const;
  // Which producer takes the task's input `index`, and as which of its own inputs.
  struct ProducerInput {
    const FusedProducerDef* producer;
    int index;
  };
  std::optional<ProducerInput> ProducerOfInput(int index) const;
  // The task's workspaces: every producer's output, in producer order.
  std::vector<TensorDesc> Workspaces() const;
};

class Node;
// The definitions of a graph's FusedKernel nodes, by node.
using FusedKernelDefs = std::unordered_map<const Node*, std::shared_ptr<const FusedKernelDef>>;

}  // namespace ge
