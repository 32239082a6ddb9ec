// Engine options: string key/value pairs as in GE (e.g. "ge.graphDumpType" -> "txt").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ge/base/status.h"

namespace ge {

using Options = std::map<std::string, std::string>;

// Option keys understood by the engine. Each is declared once, with its type and default, in
// EngineOptionTable() (options.cc), which ValidateOptions and the docs test read.
namespace option {
inline constexpr const char* kDevice = "ge.device";
inline constexpr const char* kGraphDumpType = "ge.graphDumpType";
inline constexpr const char* kGraphDumpPath = "ge.graphDumpPath";
inline constexpr const char* kGraphDumpLevel = "ge.graphDumpLevel";
inline constexpr const char* kDataDumpEnable = "ge.exec.enableDump";
inline constexpr const char* kDataDumpPath = "ge.exec.dumpPath";
inline constexpr const char* kDataDumpFilter = "ge.exec.dumpFilter";
inline constexpr const char* kProfilingEnable = "ge.exec.profilingMode";
inline constexpr const char* kTopoSortingMode = "ge.topoSortingMode";
inline constexpr const char* kDisableReuseMemory = "ge.exec.disableReuseMemory";
inline constexpr const char* kEnableSingleStream = "ge.enableSingleStream";
inline constexpr const char* kComputeStreams = "ge.exec.computeStreams";
inline constexpr const char* kStreamReplay = "ge.exec.streamReplay";
inline constexpr const char* kStreamMinBranchWork = "ge.exec.streamMinBranchWork";
inline constexpr const char* kOoLevel = "ge.oo.level";
inline constexpr const char* kOoConstantFolding = "ge.oo.constantFolding";
inline constexpr const char* kOoDeadCodeElimination = "ge.oo.deadCodeElimination";
inline constexpr const char* kOoVerifyEachPass = "ge.oo.verifyEachPass";
inline constexpr const char* kOptimizationSwitch = "ge.optimizationSwitch";
inline constexpr const char* kAutofuse = "ge.autofuse";
inline constexpr const char* kStaticKernelCompile = "ge.staticKernelCompile";
inline constexpr const char* kKernelCompiler = "ge.kernelCompiler";
inline constexpr const char* kKernelCacheDir = "ge.kernelCacheDir";
inline constexpr const char* kKernelCacheAllowSymlinks = "ge.kernelCacheAllowSymlinks";
inline constexpr const char* kKernelCacheMaxEntries = "ge.kernelCacheMaxEntries";
inline constexpr const char* kKernelCompileTimeout = "ge.kernelCompileTimeout";
inline constexpr const char* kKernelFastMath = "ge.kernelFastMath";
inline constexpr const char* kKernelCodegen = "ge.kernelCodegen";
inline constexpr const char* kMaxTensorElements = "ge.maxTensorElements";
inline constexpr const char* kMaxWorkPerRun = "ge.maxWorkPerRun";
// Set by the frontend for the instances of a graph with symbolic sizes: generated kernels read
// their sizes at run time, so every instance shares one kernel library.
inline constexpr const char* kKernelRunTimeSizes = "ge.kernelRunTimeSizes";
}  // namespace option

// kCount: a positive 64-bit count (limits on elements and work).
enum class OptionType { kText, kBool, kChoice, kPositiveInt, kCount };

struct OptionDef {
  const char* key;
  OptionType type;
  const char* default_value;         // "" where the engine derives it (see doc)
  std::vector<std::string> choices;  // kChoice: the values allowed
  const char* environment;           // the variable that supplies it when the caller does not, or null
  const char* doc;
};

// Every option the engine reads.
const std::vector<OptionDef>& EngineOptionTable();
const OptionDef* FindOptionDef(const std::string& key);

// Readers: the caller's value of a declared option, else its declared default -- so no reader
// repeats a default. (An undeclared key is a bug of the engine: Internal.)
Expected<std::string> OptionValue(const Options& options, const char* key);
// "1"/"true"/"on" or "0"/"false"/"off".
Expected<bool> BoolOption(const Options& options, const char* key);
Expected<int> PositiveIntOption(const Options& options, const char* key);
Expected<int64_t> CountOption(const Options& options, const char* key);

// An unknown key is an error naming the known ones; a value of the wrong type or outside its
// choices is an error naming the key and what it takes.
Status ValidateOptions(const Options& options);

// `options` completed from the environment: each declared option the caller did not set takes
// its variable's value (TORCHAIR_GE_CACHE_DIR, AUTOFUSE_FLAGS, ...). The one place the engine
// reads environment variables that configure it; the result is validated like any options.
Expected<Options> WithEnvironment(Options options);

// $XDG_CACHE_HOME/torchair_ge, else ~/.cache/torchair_ge: where generated kernels are cached
// when ge.kernelCacheDir and $TORCHAIR_GE_CACHE_DIR say nothing.
std::string DefaultKernelCacheDir();

// The kernel cache directory: `configured` (ge.kernelCacheDir / $TORCHAIR_GE_CACHE_DIR) when it
// is set, else DefaultKernelCacheDir(). Generated kernels, kernel choices and the frontend's
// graph cache live under it.
std::string KernelCacheDir(const std::string& configured);
// The same for `options` (completed with WithEnvironment by the caller).
std::string KernelCacheDir(const Options& options);

}  // namespace ge
