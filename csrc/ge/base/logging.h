// Engine logging through fmt. The level comes from TNG_LOG_LEVEL (0 debug, 1 info,
// 2 warning, 3 error, 4 off; names accepted too), read once.
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace ge {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

LogLevel CurrentLogLevel();
void SetLogLevel(LogLevel level);
// Parses "0".."4" or "DEBUG"/"INFO"/"WARNING"/"ERROR"/"OFF"; unknown text gives the default.
LogLevel ParseLogLevel(std::string_view text, LogLevel fallback);
inline bool LogEnabled(LogLevel level) { return level >= CurrentLogLevel(); }
void WriteLog(LogLevel level, const char* file, int line, std::string_view message);

}  // namespace ge

#define GE_LOG(level, ...)                                                          \
  do {                                                                              \
    if (::ge::LogEnabled(level)) ::ge::WriteLog(level, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
#define GE_LOGD(...) GE_LOG(::ge::LogLevel::kDebug, __VA_ARGS__)
#define GE_LOGI(...) GE_LOG(::ge::LogLevel::kInfo, __VA_ARGS__)
#define GE_LOGW(...) GE_LOG(::ge::LogLevel::kWarning, __VA_ARGS__)
#define GE_LOGE(...) GE_LOG(::ge::LogLevel::kError, __VA_ARGS__)
