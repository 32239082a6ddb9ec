// Engine options: string key/value pairs as in GE (e.g. "ge.graphDumpType" -> "txt").
#pragma once

#include <map>
#include <string>

namespace ge {

using Options = std::map<std::string, std::string>;

inline std::string GetOption(const Options& options, const std::string& key, const std::string& fallback = "") {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

// Option keys understood by the engine.
namespace option {
inline constexpr const char* kDevice = "ge.device";                         // "cpu" (default)
inline constexpr const char* kGraphDumpType = "ge.graphDumpType";           // "" or "txt"
inline constexpr const char* kGraphDumpPath = "ge.graphDumpPath";           // directory
inline constexpr const char* kEnableSingleStream = "ge.enableSingleStream"; // "true"/"false"
}  // namespace option

}  // namespace ge
