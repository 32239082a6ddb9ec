#include "ge/runtime/run_debug.h"

#include <unistd.h>

#include "ge/serialize/file_io.h"
#include "ge/serialize/npy.h"

namespace ge {

Expected<RunDebugOptions> RunDebugOptions::FromOptions(const Options& options, uint32_t graph_id) {
  RunDebugOptions out;
  out.graph_id = graph_id;
  GE_ASSIGN_OR_RETURN(out.profiling, BoolOption(options, option::kProfilingEnable));
  GE_ASSIGN_OR_RETURN(out.data_dump, BoolOption(options, option::kDataDumpEnable));
  GE_ASSIGN_OR_RETURN(out.dump_path, OptionValue(options, option::kDataDumpPath));
  GE_ASSIGN_OR_RETURN(out.dump_filter, OptionValue(options, option::kDataDumpFilter));
  return out;
}

void ProfileLog::Append(RunProfile run) {
  std::lock_guard<std::mutex> lock(mu_);
  if (task_records_ + run.tasks.size() > kMaxTaskRecords) {
    ++dropped_;
    return;
  }
  task_records_ += run.tasks.size();
  runs_.push_back(std::move(run));
}

std::vector<RunProfile> ProfileLog::Take(uint64_t* dropped) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dropped) *dropped = dropped_;
  dropped_ = 0;
  task_records_ = 0;
  return std::exchange(runs_, {});
}

Expected<std::unique_ptr<DataDumper>> DataDumper::Create(const Model& model, const RunDebugOptions& options) {
  auto dumper = std::make_unique<DataDumper>();
  dumper->root_ = fmt::format("{}/graph_{}_pid{}", options.dump_path, options.graph_id, ::getpid());
  std::regex filter;
  if (!options.dump_filter.empty()) {
    try {
      filter = std::regex(options.dump_filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument("option {}='{}' is not a regular expression: {}", option::kDataDumpFilter,
                             options.dump_filter, e.what());
    }
  }
  for (const TaskDef& task : model.tasks) {
    dumper->selected_.push_back(options.dump_filter.empty() || std::regex_search(task.name, filter) ||
                                std::regex_search(task.type, filter));
  }
  return dumper;
}

std::string DataDumper::StepDir(uint64_t step) const { return fmt::format("{}/step_{:06d}", root_, step); }

Status DataDumper::DumpTask(const Model& model, size_t index, const DeviceProgram& program,
                            const std::string& step_dir) const {
  const TaskDef& task = model.tasks[index];
  for (size_t k = 0; k < task.outputs.size(); ++k) {
    const int32_t id = task.outputs[k];
    const ValueInfo& value = model.values[static_cast<size_t>(id)];
    GE_ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(value.desc, program.ValueData(id)));
    GE_RETURN_IF_ERROR(WriteFileAtomic(fmt::format("{}/{}.out{}.npy", step_dir, SafeFileName(task.name), k), bytes)
                           .WithContext(fmt::format("data dump of {} '{}'", task.type, task.name)));
  }
  return {};
}

}  // namespace ge
