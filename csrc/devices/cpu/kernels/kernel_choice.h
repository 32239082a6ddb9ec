// Kernels chosen by measurement. Where two implementations compute the same task (a float32
// product through MKL's sgemm via at::mm, or through oneDNN's matmul), which one is faster
// depends on the CPU: oneDNN's AVX-512 kernels were 2-2.5x faster on an AMD EPYC where MKL
// takes its AVX2 path, and not on an Intel Xeon where MKL has its own AVX-512 path. So no size
// threshold decides: the first time a process meets a shape key, every candidate is timed on
// scratch inputs of that shape, interleaved, and the fastest is kept for the key -- in the
// process and, when the winner is at least 10% faster than the rest, on disk in the kernel
// cache ($TORCHAIR_GE_CACHE_DIR/kernel_choices/<cpu>-r<revision>.tsv: one file per CPU model
// and feature set and per revision of the candidates' code), so later processes on this kind of
// machine start with the decision instead of timing again. In an instance of a graph whose
// sizes vary (KernelArgs::sizes_vary) the key holds size classes, not sizes (math_kernels.cc,
// ProductDim), so the graph's next instances reuse it.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ge/base/status.h"

namespace ge::cpu {

// Bytes in memory, [data, data + bytes).
struct MemoryRange {
  const void* data = nullptr;
  size_t bytes = 0;
};

struct KernelCandidate {
  KernelCandidate(std::string name, std::function<void()> run, std::vector<MemoryRange> cold = {})
      : name(std::move(name)), run(std::move(run)), cold(std::move(cold)) {}

  std::string name;
  std::function<void()> run;  // one call on scratch tensors of the task's shapes
  // What the task reads that is not in the caches when it runs in its graph: a weight is read
  // once per run of the graph, whose other tasks evict it meanwhile (a decode step streams every
  // weight from memory). Evicted before each timed call, so that timing the same call over
  // and over does not find the weight in the cache the call before left it in: a kernel that
  // streams it at the memory's bandwidth would lose to one that is faster only on cached data.
  std::vector<MemoryRange> cold;
};

// The bytes of each defined tensor of `tensors` (for KernelCandidate::cold).
std::vector<MemoryRange> MemoryOf(std::initializer_list<at::Tensor> tensors);

// Writes back and drops from every cache level each line of `ranges` (x86-64; elsewhere a no-op):
// before each timed call of a candidate, its `cold` ranges.
void EvictFromCaches(const std::vector<MemoryRange>& ranges);

// What was decided for one key: each candidate's best time and the winner; measure_us is the
// compile-time cost of deciding.
struct KernelChoice {
  std::string key;
  std::vector<std::string> names;
  std::vector<double> best_us;
  int winner = 0;
  double measure_us = 0;
  bool from_disk = false;  // decided by an earlier process on this kind of CPU (best_us unknown: 0)
};

// The index of the fastest candidate for `key`: the first time a process meets the key, the
// winner an earlier process stored for it, if it is one of `names`; else `make_candidates`
// builds them (scratch inputs and all, named `names` in that order) and they are timed, and
// the winner is stored. Thread-safe; timings never overlap. A single candidate is not timed.
int ChooseByMeasurement(const std::string& key, const std::vector<std::string>& names,
                        const std::function<std::vector<KernelCandidate>()>& make_candidates);

// The run body of the fastest of `kernels` for `key` (ChooseByMeasurement over their names),
// timed as a task runs: in inference mode, outside the compiling frontend's Python dispatch mode.
// `timed` makes the same candidates, in the same order, on scratch tensors (at load the arena is
// not bound yet, and garbage with denormals would distort the times).
std::function<void()> FastestByMeasurement(const std::string& key, std::vector<KernelCandidate> kernels,
                                           const std::function<std::vector<KernelCandidate>()>& timed);

// A size as a choice's key names it: itself, or in an instance of a graph whose sizes vary its
// power-of-two class ("(32..64]"), so the graph's next instances reuse the decision; sizes up to
// `exact_up_to` stay exact.
std::string SizeInKey(int64_t size, bool size_class, int64_t exact_up_to = 0);

// A variable forcing one kernel of a family (TORCHAIR_GE_CPU_MATMUL, TORCHAIR_GE_CPU_CONV: to
// reproduce a result, compare the kernels, or debug one): "measure" when unset or empty, else
// one of `forced` -- any other value is an error naming the variable and what it takes.
Expected<std::string> ForcedKernelSetting(const char* variable, const std::vector<std::string>& forced);

// The run body of the candidate named `name`, else of the first (a forced kernel that does not
// apply to this task leaves it to the family's default).
std::function<void()> CandidateNamed(std::vector<KernelCandidate> candidates, const std::string& name);

// Tests: forget this process's decisions (the stored ones are read again on the next call).
// (The store is also read again whenever the cache directory in effect changes.)
void ForgetKernelChoicesForTesting();

// Every choice made in this process, in order.
std::vector<KernelChoice> KernelChoices();

}  // namespace ge::cpu
