#include "ge/base/options.h"

#include <algorithm>
#include <cstdlib>

namespace ge {
namespace {

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

Expected<bool> ParseBool(const std::string& key, const std::string& text) {
  if (text == "1" || text == "true" || text == "on") return true;
  if (text == "0" || text == "false" || text == "off") return false;
  return InvalidArgument("option {}='{}' must be true or false (1/0)", key, text);
}

Expected<int> ParsePositiveInt(const std::string& key, const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(text) <= 0) return InvalidArgument("option {}='{}' must be a positive integer", key, text);
  return std::stoi(text);
}

// At most 2^50: limits on elements then bound every byte count the compiler adds up (2^50
// elements of 16 bytes, summed over a graph, stay far below int64's range).
constexpr int64_t kMaxCount = int64_t{1} << 50;

Expected<int64_t> ParseCount(const std::string& key, const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 16 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoll(text) <= 0 || std::stoll(text) > kMaxCount)
    return InvalidArgument("option {}='{}' must be a positive integer up to 2^50 ({})", key, text, kMaxCount);
  return std::stoll(text);
}

// AUTOFUSE_FLAGS as GE spells it: "--enable_autofuse=true|false" among other flags of GE's
// auto-fusion that this engine does not have (those are ignored, as they do not change results).
Expected<std::string> AutofuseFromFlags(const std::string& flags) {
  const std::string key = "--enable_autofuse=";
  const size_t at = flags.find(key);
  if (at == std::string::npos) return std::string();
  const size_t begin = at + key.size();
  const std::string value = flags.substr(begin, flags.find_first_of(" \t", begin) - begin);
  if (value != "true" && value != "false")
    return InvalidArgument("AUTOFUSE_FLAGS: --enable_autofuse takes true or false, got '{}'", value);
  return value;
}

// Streams (compiler/stream_assign.h, runtime/stream_runner.h).
std::vector<OptionDef> StreamOptionDefs() {
  using T = OptionType;
  return {{option::kEnableSingleStream, T::kBool, "0", {}, nullptr, "every task on one stream (no stream assignment)"},
          {option::kComputeStreams,
           T::kPositiveInt,
           "",
           {},
           nullptr,
           "at most this many compute streams for independent branches (default: one per core, at most 4)"},
          {option::kStreamMinBranchWork,
           T::kPositiveInt,
           "262144",
           {},
           nullptr,
           "a branch gets a stream of its own only from this much estimated work (multiply-adds or elements) on"},
          {option::kStreamReplay,
           T::kChoice,
           "auto",
           {"auto", "always"},
           nullptr,
           "auto: a graph with several streams is timed both ways in its first runs and keeps the faster; "
           "always: it always runs on its streams"}};
}

// What bounds untrusted input: the kernel cache's trust rules and the work limits
// (docs/reliability.md, "Trust boundaries").
std::vector<OptionDef> TrustOptionDefs() {
  using T = OptionType;
  return {
      {option::kKernelCacheAllowSymlinks,
       T::kBool,
       "false",
       {},
       "TORCHAIR_GE_CACHE_ALLOW_SYMLINKS",
       "accept symbolic links in the kernel cache's path (their targets must still be safe)"},
      {option::kMaxTensorElements,
       T::kCount,
       "17179869184",
       {},
       "TORCHAIR_GE_MAX_TENSOR_ELEMENTS",
       "the most elements any tensor of a graph may have (default 2^34); larger graphs are refused at compile/load"},
      {option::kMaxWorkPerRun,
       T::kCount,
       "1099511627776",
       {},
       "TORCHAIR_GE_MAX_WORK_PER_RUN",
       "the most elements one run may read and write, summed over every node (default 2^40); larger graphs are "
       "refused at compile/load"},
  };
}

std::vector<OptionDef> WithGroupedOptions(std::vector<OptionDef> table) {
  for (OptionDef& def : StreamOptionDefs()) table.push_back(std::move(def));
  for (OptionDef& def : TrustOptionDefs()) table.push_back(std::move(def));
  return table;
}

}  // namespace

const std::vector<OptionDef>& EngineOptionTable() {
  using T = OptionType;
  static const std::vector<OptionDef> table = WithGroupedOptions({
      {option::kDevice, T::kText, "cpu", {}, nullptr, "device name for GEInitialize"},
      {option::kGraphDumpType,
       T::kText,
       "",
       {},
       nullptr,
       "graph dump formats, comma separated: txt, onnx, pbtxt, py, dot"},
      {option::kGraphDumpPath, T::kText, ".", {}, nullptr, "directory for graph dumps"},
      {option::kGraphDumpLevel,
       T::kChoice,
       "all",
       {"all", "key", "final", "1", "2", "3"},
       nullptr,
       "which stages a graph dump covers"},
      {option::kDataDumpEnable, T::kBool, "0", {}, nullptr, "write every task's outputs of every run"},
      {option::kDataDumpPath, T::kText, ".", {}, nullptr, "directory for data dumps"},
      {option::kDataDumpFilter, T::kText, "", {}, nullptr, "regular expression on node name or op type"},
      {option::kProfilingEnable, T::kBool, "0", {}, nullptr, "time every task of every run"},
      {option::kTopoSortingMode,
       T::kChoice,
       "MemoryAware",
       {"MemoryAware", "BFS", "DFS", "RDFS", "StableRDFS", "0", "1", "2", "3"},
       nullptr,
       "execution order"},
      {option::kDisableReuseMemory, T::kBool, "0", {}, nullptr, "no two values share arena bytes"},
      {option::kOoLevel, T::kChoice, "O3", {"O1", "O3"}, nullptr, "optimizer level"},
      {option::kOoConstantFolding, T::kBool, "true", {}, nullptr, "constant folding"},
      {option::kOoDeadCodeElimination, T::kBool, "true", {}, nullptr, "dead code elimination"},
      {option::kOoVerifyEachPass,
       T::kBool,
       "false",
       {},
       "TORCHAIR_GE_VERIFY_PASSES",
       "re-verify and re-infer the graph after every pass that changed it"},
      {option::kOptimizationSwitch, T::kText, "", {}, nullptr, "PassName:off;PassName:on"},
      {option::kAutofuse, T::kBool, "true", {}, "AUTOFUSE_FLAGS", "auto-fusion into generated kernels"},
      {option::kStaticKernelCompile, T::kBool, "true", {}, nullptr, "compile generated kernels at all"},
      {option::kKernelCompiler,
       T::kText,
       "",
       {},
       "CXX",
       "the C++ compiler for generated kernels (default: the first of c++, g++, clang++ on PATH)"},
      {option::kKernelCacheDir,
       T::kText,
       "",
       {},
       "TORCHAIR_GE_CACHE_DIR",
       "generated-kernel cache (empty: DefaultKernelCacheDir)"},
      {option::kKernelCacheMaxEntries,
       T::kPositiveInt,
       "1000",
       {},
       "TORCHAIR_GE_CACHE_MAX_ENTRIES",
       "kernel libraries kept in the cache (least recently used removed first)"},
      {option::kKernelCompileTimeout,
       T::kPositiveInt,
       "300",
       {},
       "TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT",
       "seconds the C++ compiler may take per graph"},
      {option::kKernelFastMath, T::kBool, "false", {}, nullptr, "-ffast-math for generated kernels"},
      {option::kKernelCodegen,
       T::kChoice,
       "vector",
       {"vector", "blocks"},
       "TORCHAIR_GE_KERNEL_CODEGEN",
       "generated kernels: xsimd vectors through each chain, or blocks op by op (no library)"},
      {option::kKernelRunTimeSizes,
       T::kBool,
       "false",
       {},
       nullptr,
       "generated kernels read extents and strides at run time (instances of a graph with symbolic sizes)"},
  });
  return table;
}

const OptionDef* FindOptionDef(const std::string& key) {
  for (const OptionDef& def : EngineOptionTable())
    if (key == def.key) return &def;
  return nullptr;
}

Expected<std::string> OptionValue(const Options& options, const char* key) {
  const OptionDef* def = FindOptionDef(key);
  if (def == nullptr) return Internal("the engine reads option '{}', which EngineOptionTable does not declare", key);
  auto it = options.find(key);
  return it == options.end() || it->second.empty() ? std::string(def->default_value) : it->second;
}

Expected<bool> BoolOption(const Options& options, const char* key) {
  GE_ASSIGN_OR_RETURN(std::string text, OptionValue(options, key));
  return ParseBool(key, text);
}

Expected<int> PositiveIntOption(const Options& options, const char* key) {
  GE_ASSIGN_OR_RETURN(std::string text, OptionValue(options, key));
  return ParsePositiveInt(key, text);
}

Expected<int64_t> CountOption(const Options& options, const char* key) {
  GE_ASSIGN_OR_RETURN(std::string text, OptionValue(options, key));
  return ParseCount(key, text);
}

Status ValidateOptions(const Options& options) {
  for (const auto& [key, value] : options) {
    const OptionDef* def = FindOptionDef(key);
    if (def == nullptr) {
      std::vector<std::string> known;
      for (const OptionDef& d : EngineOptionTable()) known.emplace_back(d.key);
      return InvalidArgument("unknown engine option '{}'; known options: {}", key, Joined(known));
    }
    switch (def->type) {
      case OptionType::kBool:
        if (!value.empty()) GE_RETURN_IF_ERROR(ParseBool(key, value).status());
        break;
      case OptionType::kPositiveInt:
        if (!value.empty()) GE_RETURN_IF_ERROR(ParsePositiveInt(key, value).status());
        break;
      case OptionType::kCount:
        if (!value.empty()) GE_RETURN_IF_ERROR(ParseCount(key, value).status());
        break;
      case OptionType::kChoice: {
        const auto& choices = def->choices;
        GE_CHECK(value.empty() || std::find(choices.begin(), choices.end(), value) != choices.end(),
                 "option {}='{}' is not supported (allowed: {})", key, value, Joined(choices));
        break;
      }
      case OptionType::kText: break;
    }
  }
  return {};
}

Expected<Options> WithEnvironment(Options options) {
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  for (const OptionDef& def : EngineOptionTable()) {
    const char* text = def.environment == nullptr ? nullptr : std::getenv(def.environment);
    if (text == nullptr || *text == '\0') continue;
    std::string value = text;
    if (std::string(def.key) == option::kAutofuse) {
      // GE's switch: AUTOFUSE_FLAGS="--enable_autofuse=false" turns auto-fusion off whatever the
      // options say; "=true" only fills in an option nobody set.
      GE_ASSIGN_OR_RETURN(value, AutofuseFromFlags(value));
      if (value.empty() || (value == "true" && options.count(def.key))) continue;
    } else if (options.count(def.key)) {
      continue;  // the caller's value wins
    }
    options[def.key] = value;
    Status st = ValidateOptions({{def.key, value}});
    if (!st.ok()) return st.WithContext(fmt::format("${}", def.environment));
  }
  return options;
}

std::string KernelCacheDir(const std::string& configured) {
  return configured.empty() ? DefaultKernelCacheDir() : configured;
}

std::string KernelCacheDir(const Options& options) {
  auto value = OptionValue(options, option::kKernelCacheDir);
  return KernelCacheDir(value.ok() ? *value : std::string());
}

std::string DefaultKernelCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg) return std::string(xdg) + "/torchair_ge";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home ? home : "/tmp") + "/.cache/torchair_ge";
}

}  // namespace ge
