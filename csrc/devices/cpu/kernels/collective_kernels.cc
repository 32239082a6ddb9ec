// The Hcom collectives on the CPU device, through the torch.distributed process group the graph
// names (c10d's registry: the group the functional collectives were traced with). Each kernel
// completes its collective inside its task -- the work is waited for before the task returns --
// so every later reader sees the reduced data (an output read before the work finished was the
// bug the engine refused collectives for). The group is looked up at each run: a group can be
// destroyed and a new one made under the same name between runs.
// All-reduce and broadcast work in their output's bytes; the memory planner puts the output
// over the input when the copy-insertion rules (compiler/collective_copies.h) allow, and the
// kernel copies the input over only when it did not.
#include <torch/csrc/distributed/c10d/GroupRegistry.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

c10::intrusive_ptr<c10d::ProcessGroup> GroupNamed(const std::string& name) {
  return c10d::resolve_process_group(name);  // throws naming the group when it is unknown
}

// "avg" is a sum divided by the group's size (gloo has no AVG reduction).
c10d::ReduceOp ReduceOpNamed(const std::string& name) {
  if (name == "sum" || name == "avg") return c10d::ReduceOp::SUM;
  if (name == "product") return c10d::ReduceOp::PRODUCT;
  if (name == "min") return c10d::ReduceOp::MIN;
  return c10d::ReduceOp::MAX;  // InferShape admits no other name
}

void CopyUnlessSame(at::Tensor& y, const at::Tensor& x) {
  if (y.data_ptr() != x.data_ptr()) y.copy_(x);
}

void DivideForAverage(const std::string& reduction, at::Tensor& y, int64_t size) {
  if (reduction == "avg") y.div_(size);
}

Expected<std::unique_ptr<Kernel>> CreateAllReduce(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string group, a.Attr<std::string>("group"));
  GE_ASSIGN_OR_RETURN(std::string reduction, a.Attr<std::string>("reduction"));
  return MakeKernel(a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable {
    auto pg = GroupNamed(group);
    CopyUnlessSame(y, x);
    std::vector<at::Tensor> tensors = {y};
    c10d::AllreduceOptions options;
    options.reduceOp = ReduceOpNamed(reduction);
    pg->allreduce(tensors, options)->wait();
    DivideForAverage(reduction, y, pg->getSize());
  });
}

Expected<std::unique_ptr<Kernel>> CreateAllGather(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string group, a.Attr<std::string>("group"));
  return MakeKernel(a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable {
    at::Tensor in = x;
    GroupNamed(group)->all_gather_single(y, in)->wait();
  });
}

Expected<std::unique_ptr<Kernel>> CreateReduceScatter(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string group, a.Attr<std::string>("group"));
  GE_ASSIGN_OR_RETURN(std::string reduction, a.Attr<std::string>("reduction"));
  return MakeKernel(a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable {
    auto pg = GroupNamed(group);
    at::Tensor in = x;  // read only (gloo leaves it as it was; the distributed test checks)
    c10d::ReduceScatterOptions options;
    options.reduceOp = ReduceOpNamed(reduction);
    pg->reduce_scatter_single(y, in, options)->wait();
    DivideForAverage(reduction, y, pg->getSize());
  });
}

Expected<std::unique_ptr<Kernel>> CreateBroadcast(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string group, a.Attr<std::string>("group"));
  GE_ASSIGN_OR_RETURN(int64_t root, a.Attr<int64_t>("root_rank"));
  return MakeKernel(a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable {
    CopyUnlessSame(y, x);
    std::vector<at::Tensor> tensors = {y};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    GroupNamed(group)->broadcast(tensors, options)->wait();
  });
}

Expected<std::unique_ptr<Kernel>> CreateAllToAll(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string group, a.Attr<std::string>("group"));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> send, a.Attr<std::vector<int64_t>>("send_counts"));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> recv, a.Attr<std::vector<int64_t>>("recv_counts"));
  return MakeKernel(a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable {
    at::Tensor in = x;
    std::vector<int64_t> out_splits = recv, in_splits = send;
    GroupNamed(group)->all_to_all_single(y, in, out_splits, in_splits)->wait();
  });
}

}  // namespace

void RegisterCollectiveKernels(CpuKernelRegistry& r) {
  r.Register("TensorMove", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return MakeKernel(a.task, [x = a.inputs[0], y = a.outputs[0]]() mutable { y.copy_(x); });
  });
  r.Register("HcomAllReduce", CreateAllReduce);
  r.MarkWritesOverInput("HcomAllReduce");
  r.MarkWritesOverInput("HcomBroadcast");
  r.Register("HcomAllGather", CreateAllGather);
  r.Register("HcomReduceScatter", CreateReduceScatter);
  r.Register("HcomBroadcast", CreateBroadcast);
  r.Register("HcomAllToAllV", CreateAllToAll);
}

}  // namespace ge::cpu
