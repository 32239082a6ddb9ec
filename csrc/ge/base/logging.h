// Engine logging through fmt. The level comes from TNG_LOG_LEVEL (0 debug, 1 info,
// 2 warning, 3 error, 4 off, 5 event; names accepted too), read once; SetLogLevel changes it.
// EVENT lines are timings (compile stages, runs): shown at DEBUG, INFO and EVENT; the EVENT
// level otherwise shows what WARNING shows. Every line reads
//   [torchair_ge LEVEL pid:tid] file:line message
// the same format as the Python logger's (torchair_ge/logging_setup.py).
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace ge {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4, kEvent = 5 };

LogLevel CurrentLogLevel();
void SetLogLevel(LogLevel level);
// Parses "0".."5" or "DEBUG"/"INFO"/"WARNING"/"ERROR"/"OFF"/"EVENT"; unknown text gives the default.
LogLevel ParseLogLevel(std::string_view text, LogLevel fallback);
bool LogEnabled(LogLevel level);
void WriteLog(LogLevel level, const char* file, int line, std::string_view message);

}  // namespace ge

#define GE_LOG(level, ...)                                                                            \
  do {                                                                                                \
    if (::ge::LogEnabled(level)) ::ge::WriteLog(level, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
#define GE_LOGD(...) GE_LOG(::ge::LogLevel::kDebug, __VA_ARGS__)
#define GE_LOGI(...) GE_LOG(::ge::LogLevel::kInfo, __VA_ARGS__)
#define GE_LOGW(...) GE_LOG(::ge::LogLevel::kWarning, __VA_ARGS__)
#define GE_LOGE(...) GE_LOG(::ge::LogLevel::kError, __VA_ARGS__)
#define GE_LOG_EVENT(...) GE_LOG(::ge::LogLevel::kEvent, __VA_ARGS__)
