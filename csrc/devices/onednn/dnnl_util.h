// Pieces the engine's oneDNN primitives share (conv2d.cc, matmul.cc). Internal to
// devices/onednn: the only place that includes the system's oneDNN headers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "devices/onednn/post_ops.h"
#include "ge/base/status.h"

namespace ge::onednn {

// The process's CPU engine (oneDNN engines are thread-safe; streams are not: one per primitive).
const dnnl::engine& CpuEngine();

// Whether every size is at least 1: oneDNN is never asked to plan for an empty tensor.
template <typename Sizes>
bool AllPositive(const Sizes& sizes) {
  for (auto size : sizes)
    if (size < 1) return false;
  return true;
}

// Appends `activation` as an eltwise post-op (none: nothing).
void AppendActivation(dnnl::post_ops& post, Activation activation);

// A primitive made once and run on the caller's buffers: each argument is a memory object
// whose data handle is attached at each run, and the argument array oneDNN executes is built
// once (the C++ API's execute builds a vector of them on every call). The weight is packed into
// a buffer of the caller's, so one primitive serves a task and its timing stand-ins. One
// caller at a time.
class BoundPrimitive {
 public:
  // `primitive` with its weights in `weights` (the layout it chose).
  void Set(dnnl::primitive primitive, dnnl::memory::desc weights, std::string implementation);
  // Adds argument `arg` (DNNL_ARG_*) of layout `desc`; its buffer comes with each Run.
  void AddArgument(int arg, const dnnl::memory::desc& desc);
  // Reorders a weight in layout `plain` into `packed` (weights().get_size() bytes).
  Status Pack(const dnnl::memory::desc& plain, const void* weight, void* packed);
  // Runs with `buffers` (argument, data) for every argument added; arguments not named keep
  // their last buffer.
  Status Run(std::initializer_list<std::pair<int, const void*>> buffers);

  const dnnl::memory::desc& weights() const { return weights_; }
  const std::string& implementation() const { return implementation_; }

 private:
  dnnl::stream stream_{CpuEngine()};
  dnnl::primitive primitive_;
  dnnl::memory::desc weights_;
  std::string implementation_;
  std::vector<dnnl::memory> memories_;      // by argument, in the order added (owners of the handles)
  std::vector<dnnl_exec_arg_t> exec_args_;  // what dnnl_primitive_execute reads
};

}  // namespace ge::onednn
