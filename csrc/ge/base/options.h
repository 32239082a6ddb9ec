// Engine options: string key/value pairs as in GE (e.g. "ge.graphDumpType" -> "txt").
#pragma once

#include <map>
#include <string>

#include "ge/base/status.h"

namespace ge {

using Options = std::map<std::string, std::string>;

inline std::string GetOption(const Options& options, const std::string& key, const std::string& fallback = "") {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

// A true/false option: "1"/"true"/"on" or "0"/"false"/"off"; absent or empty gives `fallback`.
inline Expected<bool> GetBoolOption(const Options& options, const std::string& key, bool fallback) {
  const std::string v = GetOption(options, key);
  if (v.empty()) return fallback;
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  return InvalidArgument("option {}='{}' must be true or false (1/0)", key, v);
}

// Option keys understood by the engine.
namespace option {
inline constexpr const char* kDevice = "ge.device";                         // "cpu" (default)
inline constexpr const char* kGraphDumpType = "ge.graphDumpType";           // "" or formats: "txt,onnx,pbtxt,py,dot"
inline constexpr const char* kGraphDumpPath = "ge.graphDumpPath";           // directory
inline constexpr const char* kGraphDumpLevel = "ge.graphDumpLevel";         // "all" (default), "key", "final"
inline constexpr const char* kDataDumpEnable = "ge.exec.enableDump";        // "1": write every task's outputs per run
inline constexpr const char* kDataDumpPath = "ge.exec.dumpPath";            // directory
inline constexpr const char* kDataDumpFilter = "ge.exec.dumpFilter";        // regex on node name or op type
inline constexpr const char* kProfilingEnable = "ge.exec.profilingMode";    // "1": time every task of every run
inline constexpr const char* kTopoSortingMode = "ge.topoSortingMode";       // MemoryAware (default), BFS, DFS, RDFS, StableRDFS (or 0-3)
inline constexpr const char* kDisableReuseMemory = "ge.exec.disableReuseMemory";  // "1": no two values share arena bytes
inline constexpr const char* kOoLevel = "ge.oo.level";                       // O3 (default) or O1
inline constexpr const char* kOoConstantFolding = "ge.oo.constantFolding";   // true (default) / false
inline constexpr const char* kOoDeadCodeElimination = "ge.oo.deadCodeElimination";  // true / false
inline constexpr const char* kOoVerifyEachPass = "ge.oo.verifyEachPass";     // re-verify after each changing pass
inline constexpr const char* kOptimizationSwitch = "ge.optimizationSwitch";  // "PassName:off;PassName:on"
inline constexpr const char* kAutofuse = "ge.autofuse";                       // true (default) / false: fuse elementwise/reduction groups into generated kernels
inline constexpr const char* kStaticKernelCompile = "ge.staticKernelCompile";  // true (default) / false: compile generated kernels (off: no generated kernels)
inline constexpr const char* kKernelCacheDir = "ge.kernelCacheDir";           // generated-kernel cache (default $TORCHAIR_GE_CACHE_DIR or ~/.cache/torchair_ge)
inline constexpr const char* kKernelFastMath = "ge.kernelFastMath";           // true / false (default): -ffast-math for generated kernels
inline constexpr const char* kEnableSingleStream = "ge.enableSingleStream"; // "true"/"false"
}  // namespace option

}  // namespace ge
