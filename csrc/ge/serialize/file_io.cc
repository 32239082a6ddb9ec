#include "ge/serialize/file_io.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace ge {

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    GE_CHECK(!ec, "cannot create directory '{}': {}", target.parent_path().string(), ec.message());
  }
  // pid + counter: concurrent writers (threads or processes) never share a temporary.
  static std::atomic<uint64_t> counter{0};
  const fs::path tmp = fmt::format("{}.tmp{}_{}", path, ::getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return Internal("cannot write '{}'", tmp.string());
    }
  }
  fs::rename(tmp, target, ec);
  GE_CHECK(!ec, "cannot rename '{}' to '{}': {}", tmp.string(), path, ec.message());
  return {};
}

std::string UniqueFilePath(const std::string& dir, const std::string& stem, const std::string& ext) {
  namespace fs = std::filesystem;
  fs::path path = fs::path(dir) / fmt::format("{}.{}", stem, ext);
  for (int k = 1; fs::exists(path); ++k) path = fs::path(dir) / fmt::format("{}_{}.{}", stem, k, ext);
  return path.string();
}

std::string SafeFileName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return out;
}

}  // namespace ge
