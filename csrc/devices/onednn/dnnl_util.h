// Pieces the engine's oneDNN primitives share (conv2d.cc, matmul.cc). Internal to
// devices/onednn: the only place that includes the system's oneDNN headers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
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
//
// A oneDNN primitive keeps the thread count it was planned for (the calling thread's OpenMP
// setting when it was made) and starts a team of that size on whatever thread runs it. A task
// on a stream runs on a thread given a share of the cores, so a run on a thread whose setting
// differs uses a primitive planned again for it (made on its first run there) -- as long as that
// one reads the weight in the same layout, which the packing was made for; else the original.
class BoundPrimitive {
 public:
  // A primitive for the same operation planned for the calling thread's setting, with the
  // layout it reads its weights in.
  using Replan = std::function<std::pair<dnnl::primitive, dnnl::memory::desc>()>;

  // `primitive` with its weights in `weights` (the layout it chose); `replan` makes it again.
  void Set(dnnl::primitive primitive, dnnl::memory::desc weights, std::string implementation, Replan replan);
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
  // The primitive for a thread whose OpenMP setting is `threads`.
  dnnl_primitive_t ForThreads(int threads);

  dnnl::stream stream_{CpuEngine()};
  dnnl::primitive primitive_;
  int threads_ = 0;  // the setting primitive_ was planned under (0: unknown, never replanned)
  Replan replan_;
  std::vector<std::pair<int, dnnl::primitive>> replanned_;  // by setting
  dnnl::memory::desc weights_;
  std::string implementation_;
  std::vector<dnnl::memory> memories_;      // by argument, in the order added (owners of the handles)
  std::vector<dnnl_exec_arg_t> exec_args_;  // what dnnl_primitive_execute reads
};

}  // namespace ge::onednn
