#include "ge/serialize/trusted_dir.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

namespace ge {
namespace fs = std::filesystem;
namespace {

constexpr size_t kKeyBytes = 32;
constexpr int kMaxLinkDepth = 8;
constexpr const char* kAllowLinksHint = "set TORCHAIR_GE_CACHE_ALLOW_SYMLINKS=1 to accept links whose targets are safe";

enum class Rule { kAbove, kOwned };

// The cache's own directories: this user's and writable by nobody else. Directories above it:
// this user's or root's, and nobody else may rename entries in them (not writable by group or
// others, or sticky like /tmp).
Status CheckDirectory(const std::string& path, const struct stat& st, Rule rule) {
  const uid_t me = ::geteuid();
  GE_CHECK(S_ISDIR(st.st_mode), "{} is not a directory", path);
  const bool writable_by_others = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (rule == Rule::kOwned) {
    if (st.st_uid != me) return FailedPrecondition("{} belongs to user {}, not to this user ({})", path, st.st_uid, me);
    if (writable_by_others)
      return FailedPrecondition("{} is writable by its group or others (mode {:o})", path, st.st_mode & 07777);
    return {};
  }
  if (st.st_uid != me && st.st_uid != 0) return FailedPrecondition("{} belongs to user {}", path, st.st_uid);
  if (writable_by_others && (st.st_mode & S_ISVTX) == 0)
    return FailedPrecondition("{} is writable by its group or others (mode {:o})", path, st.st_mode & 07777);
  return {};
}

size_t ComponentCount(const fs::path& path) { return static_cast<size_t>(std::distance(path.begin(), path.end())) - 1; }

// Checks every directory of the absolute, normal `path` from '/': its components numbered
// `owned_from` (1 is the first below '/') and later by the owned rule, the others by the rule
// for directories above. A symbolic link is refused where the owned rule applies (unless
// allowed); otherwise the link must be this user's or root's and its target is checked in turn.
Status CheckChain(const fs::path& path, size_t owned_from, const TrustOptions& options, int depth) {
  GE_CHECK(depth <= kMaxLinkDepth, "{}: too many levels of symbolic links", path.string());
  struct stat st {};
  fs::path prefix = "/";
  if (::lstat("/", &st) != 0) return FailedPrecondition("cannot inspect /: {}", std::strerror(errno));
  GE_RETURN_IF_ERROR(CheckDirectory("/", st, Rule::kAbove));
  size_t index = 0;
  for (const fs::path& part : path.relative_path()) {
    prefix /= part;
    const Rule rule = ++index >= owned_from ? Rule::kOwned : Rule::kAbove;
    if (::lstat(prefix.c_str(), &st) != 0)
      return FailedPrecondition("cannot inspect {}: {}", prefix.string(), std::strerror(errno));
    if (!S_ISLNK(st.st_mode)) {
      GE_RETURN_IF_ERROR(CheckDirectory(prefix.string(), st, rule));
      continue;
    }
    if (rule == Rule::kOwned && !options.allow_symlinks)
      return FailedPrecondition("{} is a symbolic link ({})", prefix.string(), kAllowLinksHint);
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      return FailedPrecondition("{} is a symbolic link that belongs to user {}", prefix.string(), st.st_uid);
    char resolved[PATH_MAX];
    if (::realpath(prefix.c_str(), resolved) == nullptr)
      return FailedPrecondition("cannot resolve {}: {}", prefix.string(), std::strerror(errno));
    const fs::path target(resolved);
    GE_RETURN_IF_ERROR(CheckChain(target, rule == Rule::kOwned ? ComponentCount(target) : SIZE_MAX, options, depth + 1)
                           .WithContext(fmt::format("{} links to {}", prefix.string(), resolved)));
    prefix = target;
  }
  return {};
}

fs::path NormalAbsolute(const std::string& path) {
  std::error_code error;
  fs::path absolute = !path.empty() && path[0] == '/' ? fs::path(path) : fs::current_path(error) / path;
  absolute = absolute.lexically_normal();
  if (absolute.has_filename() || absolute == "/") return absolute;
  return absolute.parent_path();  // "a/b/" -> "a/b"
}

Status MakeDirectories(const fs::path& dir) {
  fs::path prefix = "/";
  for (const fs::path& part : dir.relative_path()) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return FailedPrecondition("cannot create {}: {}", prefix.string(), std::strerror(errno));
  }
  return {};
}

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

// Removes the process's private cache at exit (its libraries stay mapped; only names go). Only
// the process that made it: a forked child that exits normally must not take it from its parent.
struct PrivateDirRemover {
  std::string dir;
  pid_t owner = 0;
  ~PrivateDirRemover() {
    std::error_code error;
    if (!dir.empty() && ::getpid() == owner) fs::remove_all(dir, error);
  }
};

Expected<std::string> ReadKey(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return FailedPrecondition("cannot inspect {}: {}", path, std::strerror(errno));
  GE_CHECK(S_ISREG(st.st_mode), "cache key {} is not a regular file", path);
  if (st.st_uid != ::geteuid()) return FailedPrecondition("cache key {} belongs to user {}", path, st.st_uid);
  if ((st.st_mode & 077) != 0)
    return FailedPrecondition("cache key {} is readable or writable by others (mode {:o})", path, st.st_mode & 07777);
  std::string key(kKeyBytes, '\0');
  const ssize_t n = ::read(fd, key.data(), kKeyBytes);
  GE_CHECK(n == static_cast<ssize_t>(kKeyBytes) && st.st_size == static_cast<off_t>(kKeyBytes),
           "cache key {} has {} bytes, not {}", path, st.st_size, kKeyBytes);
  return key;
}

// A new key written to a private temporary file and linked into place: a reader never sees
// half a key, and when two processes create it at once one key wins and both use it.
Status CreateKey(const std::string& path) {
  unsigned char key[kKeyBytes];
  GE_CHECK(RAND_bytes(key, kKeyBytes) == 1, "no random bytes for the cache key {}", path);
  static std::atomic<int> counter{0};
  const std::string tmp = fmt::format("{}.tmp{}_{}", path, ::getpid(), counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return FailedPrecondition("cannot create the cache key {}: {}", tmp, std::strerror(errno));
  const bool written = ::write(fd, key, kKeyBytes) == static_cast<ssize_t>(kKeyBytes);
  ::close(fd);
  const bool linked = written && (::link(tmp.c_str(), path.c_str()) == 0 || errno == EEXIST);
  const int link_error = errno;
  ::unlink(tmp.c_str());
  if (!linked) return FailedPrecondition("cannot create the cache key {}: {}", path, std::strerror(link_error));
  return {};
}

}  // namespace

Status CheckTrustedDir(const std::string& dir, const TrustOptions& options) {
  const fs::path path = NormalAbsolute(dir);
  return CheckChain(path, ComponentCount(path), options, 0);
}

Expected<std::string> MakeTrustedDir(const std::string& root, const std::vector<std::string>& below,
                                     const TrustOptions& options) {
  const fs::path path = NormalAbsolute(root);
  GE_CHECK(path != "/", "the cache root cannot be /");
  GE_RETURN_IF_ERROR(MakeDirectories(path));
  const size_t owned_from = ComponentCount(path);
  GE_RETURN_IF_ERROR(CheckChain(path, owned_from, options, 0));
  for (const std::string& sub : below) {
    GE_RETURN_IF_ERROR(MakeDirectories(path / sub));
    GE_RETURN_IF_ERROR(CheckChain(path / sub, owned_from, options, 0));
  }
  return path.string();
}

Expected<std::string> ProcessPrivateCacheDir() {
  static std::mutex mu;
  static PrivateDirRemover remover;
  std::lock_guard<std::mutex> lock(mu);
  if (!remover.dir.empty()) return remover.dir;
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/torchair_ge-XXXXXX", tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp");
  if (::mkdtemp(pattern.data()) == nullptr)
    return FailedPrecondition("cannot create a private cache directory {}: {}", pattern, std::strerror(errno));
  GE_RETURN_IF_ERROR(CheckTrustedDir(pattern, {}).WithContext("a private cache directory"));
  remover.dir = pattern;
  remover.owner = ::getpid();
  return pattern;
}

Expected<CacheAuthenticator> CacheAuthenticator::ForRoot(const std::string& root) {
  const std::string path = root + "/key";
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      auto key = ReadKey(fd, path);
      ::close(fd);
      GE_RETURN_IF_ERROR(key.status());
      return CacheAuthenticator(std::move(*key));
    }
    if (errno == ELOOP) return FailedPrecondition("cache key {} is a symbolic link", path);
    if (errno != ENOENT) return FailedPrecondition("cannot open the cache key {}: {}", path, std::strerror(errno));
    GE_RETURN_IF_ERROR(CreateKey(path));
  }
  return FailedPrecondition("cache key {} vanished while it was created", path);
}

std::string CacheAuthenticator::Tag(std::string_view bytes) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), reinterpret_cast<const unsigned char*>(bytes.data()),
       bytes.size(), mac, &length);
  return Hex(mac, length);
}

bool CacheAuthenticator::Verify(std::string_view bytes, std::string_view tag) const {
  const std::string expected = Tag(bytes);
  return tag.size() == expected.size() && CRYPTO_memcmp(tag.data(), expected.data(), expected.size()) == 0;
}

}  // namespace ge
