// Compiles a generated translation unit with the system C++ compiler into a private on-disk
// cache and loads it. The compiler runs without a shell (posix_spawn, argv only) in a process
// group of its own under a timeout that kills the group; entries are keyed by a hash of the
// source, the flags, the compiler's version and the CPU; writes are atomic (temp file +
// rename). The cache is used only when its directories are safe (trusted_dir.h), and every
// entry carries an HMAC under the cache's key: a planted, swapped or torn library is never
// loaded, it is removed and rebuilt.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ge/runtime/kernel_library.h"
#include "ge/serialize/trusted_dir.h"

namespace ge::autofuse {

struct KernelCompilerOptions {
  std::string compiler;       // ge.kernelCompiler ($CXX); empty: the first of c++, g++, clang++ on PATH
  std::string cache_dir;      // ge.kernelCacheDir ($TORCHAIR_GE_CACHE_DIR, else $XDG_CACHE_HOME/torchair_ge or
                              // ~/.cache/torchair_ge)
  bool fast_math = false;     // -ffast-math (changes numerics; only when the user asks)
  int timeout_seconds = 300;  // every run of the compiler, its --version probe included
  TrustOptions trust;
  int max_entries = 1000;  // kernel libraries kept in the cache (least recently used go first)
};

struct KernelBuildInfo {
  bool cache_hit = false;
  double compile_ms = 0;  // compiler time (0 on a hit)
  std::string library;    // the cached .so
  std::string source;     // the cached .cc (kept for reading and debugging)
};

// The compiler command line without the output/input paths (for the cache key and logs).
std::vector<std::string> CompileFlags(const KernelCompilerOptions& options);
// Where the cache lives for these options (created with mode 0700 on first use; used only when
// it is trusted, else a private directory of the process).
std::string KernelCacheDir(const KernelCompilerOptions& options);

// The library's source is `prelude` + the kernels' texts (each complete given the prelude); the
// prelude (the same text for many graphs) is precompiled once into the cache where the compiler
// supports it, and the kernels compile in units side by side, one per core this process may use.
Expected<std::shared_ptr<const KernelLibrary>> BuildKernelLibrary(const std::string& prelude,
                                                                  const std::vector<std::string>& kernels,
                                                                  const KernelCompilerOptions& options,
                                                                  KernelBuildInfo* info);

}  // namespace ge::autofuse
