// Directories whose files the engine loads as code (the generated-kernel cache) or trusts
// (kernel choices, cached graphs), and the key that authenticates what is in them.
//
// A directory is trusted when nobody but this user can have put a file in it, the rule ssh
// applies to ~/.ssh: the directory and everything below it up to the files is owned by this
// user and writable by no group or other user; no component of it is a symbolic link (unless
// the user allows symlinks, and then their targets obey the same rule); every directory above
// it belongs to this user or root and is not writable by others, except sticky directories
// like /tmp, where nobody may rename what another user owns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ge/base/status.h"

namespace ge {

struct TrustOptions {
  bool allow_symlinks = false;  // ge.kernelCacheAllowSymlinks ($TORCHAIR_GE_CACHE_ALLOW_SYMLINKS)
};

// Creates `root` and then each of `below` under it (missing directories mode 0700; existing
// ones are never chmod'ed: a directory someone else set up stays as it is and is judged) and
// checks that all of them are trusted. Returns the root as checked (absolute, normalized: use
// that path, not the one given). The error says which path fails which rule.
Expected<std::string> MakeTrustedDir(const std::string& root, const std::vector<std::string>& below,
                                     const TrustOptions& options);

// Only checks (creates nothing): whether `dir` exists and is trusted as the root of a cache.
Status CheckTrustedDir(const std::string& dir, const TrustOptions& options);

// A private directory for this process's cache entries when the configured cache is not
// trusted: created (0700, mkdtemp under $TMPDIR or /tmp) on first use, removed at exit.
Expected<std::string> ProcessPrivateCacheDir();

// HMAC-SHA256 (OpenSSL) under a key that lives in the cache root as `key` (32 random bytes,
// mode 0600, created on first use). A file whose tag verifies was written by a process of
// this user that could read the key; a planted or swapped file cannot carry a valid tag.
class CacheAuthenticator {
 public:
  // Reads `root`/key, creating it when missing; refuses a key file that is a link, not
  // regular, not this user's, readable by others, or of the wrong size.
  static Expected<CacheAuthenticator> ForRoot(const std::string& root);

  std::string Tag(std::string_view bytes) const;  // 64 hex digits
  bool Verify(std::string_view bytes, std::string_view tag) const;

 private:
  explicit CacheAuthenticator(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

}  // namespace ge
