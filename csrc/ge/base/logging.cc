#include "ge/base/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace ge {
namespace {

std::atomic<int>& LevelSlot() {
  static std::atomic<int> level{static_cast<int>(
      ParseLogLevel(std::getenv("TNG_LOG_LEVEL") ? std::getenv("TNG_LOG_LEVEL") : "", LogLevel::kWarning))};
  return level;
}

const char* LevelTag(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    case LogLevel::kError: return "ERROR";
    case LogLevel::kOff: return "OFF";
    case LogLevel::kEvent: return "EVENT";
  }
  return "?";
}

}  // namespace

LogLevel ParseLogLevel(std::string_view text, LogLevel fallback) {
  static constexpr std::string_view kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR", "OFF", "EVENT"};
  for (int i = 0; i < 6; ++i) {
    if (text == kNames[i] || text == std::string(1, static_cast<char>('0' + i))) return static_cast<LogLevel>(i);
  }
  return fallback;
}

bool LogEnabled(LogLevel level) {
  const LogLevel current = CurrentLogLevel();
  if (level == LogLevel::kEvent) return current == LogLevel::kEvent || current <= LogLevel::kInfo;
  if (current == LogLevel::kEvent) return level >= LogLevel::kWarning && level != LogLevel::kOff;
  return level >= current && level != LogLevel::kOff;
}

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(LevelSlot().load(std::memory_order_relaxed)); }

void SetLogLevel(LogLevel level) { LevelSlot().store(static_cast<int>(level)); }

void WriteLog(LogLevel level, const char* file, int line, std::string_view message) {
  static std::mutex mu;  // keeps lines from interleaving across threads
  const char* base = std::strrchr(file, '/');
  std::lock_guard<std::mutex> lock(mu);
  fmt::print(stderr, "[torchair_ge {} {}:{}] {}:{} {}\n", LevelTag(level), ::getpid(), static_cast<long>(::gettid()),
             base ? base + 1 : file, line, message);
}

}  // namespace ge
