// Instrumented runs: per-task timing (profiling) and per-task output dumps (data dump). Both
// are chosen at compile time from the graph options; a graph without them runs the plain loop.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "ge/base/options.h"
#include "ge/runtime/device.h"

namespace ge {

struct RunDebugOptions {
  uint32_t graph_id = 0;
  bool profiling = false;
  bool data_dump = false;
  std::string dump_path = ".";
  std::string dump_filter;  // ECMAScript regex searched in node name and op type; "" = every task
  bool any() const { return profiling || data_dump; }
  static Expected<RunDebugOptions> FromOptions(const Options& options, uint32_t graph_id);
};

// One profiled run: steady-clock nanoseconds (CLOCK_MONOTONIC, the clock of Python's
// time.monotonic_ns) of the run and of each task, in task order.
struct RunProfile {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread_id = 0;
  std::vector<std::pair<int64_t, int64_t>> tasks;  // (start, end) per task
};

// The runs of one graph, kept until taken. Bounded: past kMaxTaskRecords task records, runs
// are counted as dropped instead of stored.
class ProfileLog {
 public:
  static constexpr size_t kMaxTaskRecords = size_t{1} << 22;
  void Append(RunProfile run);
  // Moves the stored runs out (the log starts over); `dropped` gets the count not stored.
  std::vector<RunProfile> Take(uint64_t* dropped);

 private:
  std::mutex mu_;
  std::vector<RunProfile> runs_;
  size_t task_records_ = 0;
  uint64_t dropped_ = 0;
};

// Writes the outputs of selected tasks after they run:
//   <dump_path>/graph_<id>_pid<pid>/step_<run>/<node>.out<k>.npy
class DataDumper {
 public:
  static Expected<std::unique_ptr<DataDumper>> Create(const Model& model, const RunDebugOptions& options);
  std::string StepDir(uint64_t step) const;
  // Dumps task `index`'s outputs as they are now in `program`.
  Status DumpTask(const Model& model, size_t index, const DeviceProgram& program, const std::string& step_dir) const;
  bool Selected(size_t index) const { return selected_[index]; }

 private:
  std::string root_;
  std::vector<bool> selected_;
};

}  // namespace ge
