#include "ge/autofuse/kernel_compiler.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <utime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "ge/base/fingerprint.h"
#include "ge/base/logging.h"
#include "ge/base/options.h"
#include "ge/serialize/file_io.h"
#include "ge/serialize/trusted_dir.h"

extern char** environ;

namespace ge::autofuse {
namespace {

bool IsExecutable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

std::string FindOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return IsExecutable(name) ? name : "";
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

Expected<std::string> FindCompiler(const KernelCompilerOptions& options) {
  std::vector<std::string> names;
  if (!options.compiler.empty())
    names.push_back(options.compiler);
  else
    names = {"c++", "g++", "clang++"};
  for (const std::string& n : names)
    if (std::string found = FindOnPath(n); !found.empty()) return found;
  return NotFound("no C++ compiler found (tried {} on PATH)", fmt::join(names, ", "));
}

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string output;  // stdout and stderr together
};

// Waits for `pid` up to `deadline` without reaping it (the zombie keeps its process group
// alive, so killing the group cannot reach a process that reused the number). True when it
// exited.
Expected<bool> WaitForExit(pid_t pid, std::chrono::steady_clock::time_point deadline, const std::string& name) {
  while (std::chrono::steady_clock::now() <= deadline) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
      return Internal("waiting for {} failed: {}", name, std::strerror(errno));
    if (info.si_pid == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Starts argv[0] with argv (no shell), output captured to a file, in a process group of its
// own, so that a timeout can kill the compiler's own children (cc1plus, as, ld, or whatever a
// wrapper started) with it.
Expected<pid_t> StartProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // a new group led by the compiler
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return Internal("cannot start {}: {}", argv[0], std::strerror(rc));
  return pid;
}

// Waits for a started process until `deadline`, then kills its whole group; reaps it and reads
// its output.
Expected<ProcessResult> FinishProcess(pid_t pid, const std::string& name, const std::string& log_path,
                                      std::chrono::steady_clock::time_point deadline) {
  ProcessResult result;
  auto exited = WaitForExit(pid, deadline, name);
  if (!exited.ok() || !*exited) {
    result.timed_out = true;
    ::kill(-pid, SIGKILL);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  GE_RETURN_IF_ERROR(exited.status());
  if (!result.timed_out) result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream log(log_path);
  std::stringstream text;
  text << log.rdbuf();
  result.output = text.str();
  ::unlink(log_path.c_str());
  return result;
}

std::chrono::steady_clock::time_point DeadlineIn(int seconds) {
  return std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
}

Expected<ProcessResult> RunProcess(const std::vector<std::string>& argv, const std::string& log_path,
                                   int timeout_seconds) {
  GE_ASSIGN_OR_RETURN(pid_t pid, StartProcess(argv, log_path));
  return FinishProcess(pid, argv[0], log_path, DeadlineIn(timeout_seconds));
}

// Runs the commands side by side (the compiler is single-threaded; a library's units compile on
// as many cores), each under the same deadline; every started one is waited for, even after
// one fails to start.
Expected<std::vector<ProcessResult>> RunProcesses(const std::vector<std::vector<std::string>>& commands,
                                                  const std::vector<std::string>& log_paths, int timeout_seconds) {
  const auto deadline = DeadlineIn(timeout_seconds);
  std::vector<pid_t> started;
  Status start_error;
  for (size_t i = 0; i < commands.size() && start_error.ok(); ++i) {
    auto pid = StartProcess(commands[i], log_paths[i]);
    if (pid.ok())
      started.push_back(*pid);
    else
      start_error = pid.status();
  }
  std::vector<ProcessResult> results;
  Status wait_error;
  for (size_t i = 0; i < started.size(); ++i) {
    auto r = FinishProcess(started[i], commands[i][0], log_paths[i], start_error.ok() ? deadline : DeadlineIn(0));
    if (r.ok())
      results.push_back(std::move(r).value());
    else if (wait_error.ok())
      wait_error = r.status();
  }
  GE_RETURN_IF_ERROR(start_error);
  GE_RETURN_IF_ERROR(wait_error);
  return results;
}

// `c++ --version`, once per compiler path per process: part of the cache key.
Expected<std::string> CompilerVersion(const std::string& compiler, const std::string& scratch_dir,
                                      int timeout_seconds) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = versions.find(compiler); it != versions.end()) return it->second;
  GE_ASSIGN_OR_RETURN(
      ProcessResult r,
      RunProcess({compiler, "--version"}, fmt::format("{}/version.{}.log", scratch_dir, ::getpid()), timeout_seconds));
  if (r.timed_out) return Internal("{} --version did not finish within {} s", compiler, timeout_seconds);
  if (r.exit_code != 0) return Internal("{} --version failed (exit {}): {}", compiler, r.exit_code, r.output);
  versions[compiler] = r.output;
  return r.output;
}

Expected<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("{} does not exist", path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Keeps at most `max_entries` kernel libraries: the least recently used entries (by the .so's
// modification time, refreshed on every hit) go first, never `keep`. Best effort: a file another
// process removes first is fine.
void PruneCache(const std::string& dir, int max_entries, const std::string& keep) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<std::pair<fs::file_time_type, std::string>> entries;
  for (const auto& file : fs::directory_iterator(dir, error)) {
    if (file.path().extension() != ".so" || file.path().stem().string().find('.') != std::string::npos) continue;
    entries.emplace_back(fs::last_write_time(file.path(), error), file.path().stem().string());
  }
  if (static_cast<int>(entries.size()) <= max_entries) return;
  std::sort(entries.begin(), entries.end());
  const size_t drop = entries.size() - static_cast<size_t>(std::max(max_entries, 1));
  for (size_t i = 0; i < drop; ++i) {
    if (entries[i].second == keep) continue;
    for (const char* ext : {".so", ".mac", ".sum", ".cc"}) fs::remove(fs::path(dir) / (entries[i].second + ext), error);
  }
}

// What a cache entry (a kernel library, a precompiled prelude) is built from. -march=native code
// is only valid on a CPU like this one: the model name and feature flags of the first processor
// go into the key, so a cache shared between machines (a network home directory) never hands
// one machine another's instructions.
std::string CacheKey(const std::string& text, const std::vector<std::string>& flags, const std::string& compiler,
                     const std::string& version) {
  return Fingerprint(
      fmt::format("{}\n{}\n{}\n{}\n{}", text, fmt::join(flags, " "), compiler, version, HostCpuIdentity()));
}

// The cache a build uses: the configured root when it is safe to load code from (see
// trusted_dir.h), with its key; otherwise, after one warning per root, a private directory of
// this process, so kernels still compile and run, only without reuse across processes.
struct KernelCache {
  std::string dir;  // <root>/kernels
  CacheAuthenticator authenticator;
};

Expected<KernelCache> OpenCacheAt(const std::string& root, const TrustOptions& trust) {
  GE_ASSIGN_OR_RETURN(std::string checked, MakeTrustedDir(root, {"kernels"}, trust));
  GE_ASSIGN_OR_RETURN(CacheAuthenticator authenticator, CacheAuthenticator::ForRoot(checked));
  return KernelCache{checked + "/kernels", std::move(authenticator)};
}

Expected<KernelCache> OpenCache(const KernelCompilerOptions& options) {
  const std::string root = KernelCacheDir(options);
  auto cache = OpenCacheAt(root, options.trust);
  if (cache.ok()) return cache;
  static std::mutex mu;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (warned.insert(root).second)
      GE_LOGW(
          "kernel cache {} not used: {}; generated kernels go to a private directory of this process "
          "instead (the cache must be a directory only this user can write: docs/reliability.md)",
          root, cache.status().message());
  }
  GE_ASSIGN_OR_RETURN(std::string private_root, ProcessPrivateCacheDir());
  return OpenCacheAt(private_root, {});
}

// An authenticated entry: the library's tag verifies under the cache's key, and it loads.
Expected<std::shared_ptr<const KernelLibrary>> LoadEntry(const KernelCache& cache, const std::string& library,
                                                         const std::string& tag_path) {
  GE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(library));
  auto tag = ReadFile(tag_path);
  if (!tag.ok()) return FailedPrecondition("it has no tag");
  if (!cache.authenticator.Verify(bytes, *tag)) return FailedPrecondition("its tag does not verify");
  return KernelLibrary::Load(library);
}

// Whether the precompiled prelude may be used: the header holds the prelude and the .gch's tag
// verifies. Checked once per file version per process (a .gch is tens of MB).
bool PreludeIsAuthentic(const KernelCache& cache, const std::string& header, const std::string& prelude) {
  const std::string pch = header + ".gch";
  struct stat st {};
  if (::stat(pch.c_str(), &st) != 0) return false;
  const std::string version = fmt::format("{}:{}:{}:{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_nsec);
  static std::mutex mu;
  static std::unordered_map<std::string, std::string> verified;  // .gch -> version
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = verified.find(pch); it != verified.end() && it->second == version) return true;
  }
  auto text = ReadFile(header);
  auto bytes = ReadFile(pch);
  auto tag = ReadFile(pch + ".mac");
  if (!text.ok() || *text != prelude || !bytes.ok() || !tag.ok() || !cache.authenticator.Verify(*bytes, *tag))
    return false;
  std::lock_guard<std::mutex> lock(mu);
  verified[pch] = version;
  return true;
}

// GCC reads a precompiled header in a fraction of the time it parses one (xsimd's headers
// take longer to parse than a graph's kernels take to compile); clang's are another format.
bool Precompiles(const std::string& version) { return version.find("clang") == std::string::npos; }

// The prelude compiled once per text, flags, compiler and CPU into a precompiled header in the
// cache; returns the header to include (its .gch beside it). An error leaves the caller to
// compile the prelude as plain text.
Expected<std::string> PrecompiledPrelude(const KernelCache& cache, const std::string& compiler,
                                         const std::string& version, std::vector<std::string> flags,
                                         const std::string& prelude, int timeout_seconds) {
  const std::string key = CacheKey(prelude, flags, compiler, version);
  const std::string header = fmt::format("{}/prelude-{}.h", cache.dir, key), pch = header + ".gch";
  if (PreludeIsAuthentic(cache, header, prelude)) return header;
  GE_RETURN_IF_ERROR(WriteFileAtomic(header, prelude));
  flags.erase(std::remove(flags.begin(), flags.end(), "-shared"), flags.end());
  const std::string tmp =
      fmt::format("{}.{}.{}", pch, ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()));
  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", "-o", tmp, header});
  GE_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, tmp + ".log", timeout_seconds));
  auto bytes = r.timed_out || r.exit_code != 0 ? Expected<std::string>(Internal("no output")) : ReadFile(tmp);
  // The tag goes in first: a reader that sees the new .gch also sees its tag (a reader between
  // the two renames sees a tag that fails and compiles without the prelude once).
  if (!bytes.ok() || !WriteFileAtomic(pch + ".mac", cache.authenticator.Tag(*bytes)).ok() ||
      ::rename(tmp.c_str(), pch.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Internal("precompiling {} failed: {}", header, r.output.substr(0, 2000));
  }
  return header;
}

// What every unit starts with: an #include of the prelude's precompiled header, or where that
// is unavailable the prelude's text.
std::string UnitPrefix(const KernelCache& cache, const std::string& compiler, const std::string& version,
                       const std::vector<std::string>& flags, const std::string& prelude,
                       const KernelCompilerOptions& options) {
  if (!prelude.empty() && Precompiles(version)) {
    auto header = PrecompiledPrelude(cache, compiler, version, flags, prelude, options.timeout_seconds);
    if (header.ok()) return fmt::format("#include \"{}\"\n", *header);
    GE_LOGW("{}; compiling the kernels without it", header.status().message());
  }
  return prelude;
}

// The cores this process may run on (its affinity mask, as taskset or a container sets it).
size_t UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<size_t>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Compiler processes per library at most: each maps the ~75 MB precompiled prelude and needs
// a few hundred MB more while optimizing, so a many-core machine still builds in bounded memory.
constexpr size_t kMaxUnits = 8;

// The kernels split into one unit per usable core (at most one per kernel, at most kMaxUnits),
// each unit's text about as long as the others' (the longest kernels placed first, each on the
// shortest unit so far); a unit keeps its kernels in their order.
std::vector<std::string> SplitIntoUnits(const std::vector<std::string>& kernels) {
  const size_t count = std::clamp<size_t>(std::min({UsableCores(), kernels.size(), kMaxUnits}), 1, kMaxUnits);
  std::vector<size_t> order(kernels.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return kernels[a].size() > kernels[b].size(); });
  std::vector<std::vector<size_t>> members(count);
  std::vector<size_t> length(count, 0);
  for (size_t k : order) {
    const size_t u = static_cast<size_t>(std::min_element(length.begin(), length.end()) - length.begin());
    members[u].push_back(k);
    length[u] += kernels[k].size();
  }
  std::vector<std::string> units;
  for (std::vector<size_t>& m : members) {
    std::sort(m.begin(), m.end());
    std::string text;
    for (size_t k : m) text += kernels[k];
    if (!text.empty()) units.push_back(std::move(text));
  }
  if (units.empty()) units.emplace_back();
  return units;
}

Status CompilerFailed(const std::string& compiler, const ProcessResult& r, const std::string& source,
                      int timeout_seconds) {
  if (r.timed_out) return Internal("{} did not finish within {} s", compiler, timeout_seconds);
  return Internal("{} failed (exit {}) on {}:\n{}", compiler, r.exit_code, source, r.output.substr(0, 4000));
}

// Builds the library `out` from the units: one compiler run straight to the library for one
// unit; else the units' objects compiled side by side, then linked.
Status CompileUnits(const std::string& compiler, const std::vector<std::string>& flags,
                    const std::vector<std::string>& unit_files, const std::string& out, const std::string& tmp,
                    const std::string& source, int timeout_seconds) {
  if (unit_files.size() == 1) {
    std::vector<std::string> argv = {compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-o", out, unit_files[0]});
    GE_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, tmp + ".log", timeout_seconds));
    return r.timed_out || r.exit_code != 0 ? CompilerFailed(compiler, r, source, timeout_seconds) : Status();
  }
  std::vector<std::string> object_flags = flags;
  object_flags.erase(std::remove(object_flags.begin(), object_flags.end(), "-shared"), object_flags.end());
  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> logs, objects;
  for (size_t u = 0; u < unit_files.size(); ++u) {
    objects.push_back(fmt::format("{}.{}.o", tmp, u));
    logs.push_back(fmt::format("{}.{}.log", tmp, u));
    std::vector<std::string> argv = {compiler};
    argv.insert(argv.end(), object_flags.begin(), object_flags.end());
    argv.insert(argv.end(), {"-c", "-o", objects.back(), unit_files[u]});
    commands.push_back(std::move(argv));
  }
  auto compiled = RunProcesses(commands, logs, timeout_seconds);
  Status status = compiled.status();
  for (size_t u = 0; status.ok() && u < compiled->size(); ++u) {
    const ProcessResult& r = (*compiled)[u];
    if (r.timed_out || r.exit_code != 0) status = CompilerFailed(compiler, r, source, timeout_seconds);
  }
  if (status.ok()) {
    std::vector<std::string> argv = {compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-o", out});
    argv.insert(argv.end(), objects.begin(), objects.end());
    auto linked = RunProcess(argv, tmp + ".log", timeout_seconds);
    status = !linked.ok()                                  ? linked.status()
             : linked->timed_out || linked->exit_code != 0 ? CompilerFailed(compiler, *linked, source, timeout_seconds)
                                                           : Status();
  }
  for (const std::string& o : objects) ::unlink(o.c_str());
  return status;
}

// Compiles the entry `stem`.so and its tag. Private temp names: concurrent processes building
// the same entry each write their own files and the renames make whichever finishes last the
// entry (both are identical). The kernels compile in units side by side, one per usable core:
// the compiler is single-threaded and optimizing the kernels is most of a cold compile.
Status CompileEntry(const KernelCache& cache, const std::string& compiler, const std::string& version,
                    const std::vector<std::string>& flags, const std::string& prelude,
                    const std::vector<std::string>& kernels, const KernelCompilerOptions& options,
                    const std::string& stem, KernelBuildInfo* info) {
  const std::string tmp =
      fmt::format("{}.{}.{}", stem, ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()));
  GE_RETURN_IF_ERROR(WriteFileAtomic(info->source, prelude + fmt::format("{}", fmt::join(kernels, ""))));
  const auto start = std::chrono::steady_clock::now();
  const std::string prefix = UnitPrefix(cache, compiler, version, flags, prelude, options);
  std::vector<std::string> unit_files;
  Status status;
  for (const std::string& unit : SplitIntoUnits(kernels)) {
    unit_files.push_back(fmt::format("{}.{}.cc", tmp, unit_files.size()));
    status = WriteFileAtomic(unit_files.back(), prefix + unit);
    if (!status.ok()) break;
  }
  if (status.ok())
    status = CompileUnits(compiler, flags, unit_files, tmp + ".so", tmp, info->source, options.timeout_seconds);
  for (const std::string& u : unit_files) ::unlink(u.c_str());
  info->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!status.ok()) {
    ::unlink((tmp + ".so").c_str());
    return status;
  }
  GE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(tmp + ".so"));
  GE_RETURN_IF_ERROR(WriteFileAtomic(stem + ".mac", cache.authenticator.Tag(bytes)));
  if (::rename((tmp + ".so").c_str(), info->library.c_str()) != 0)
    return Internal("cannot move {} into the cache: {}", tmp + ".so", std::strerror(errno));
  return {};
}

// The libraries this process has loaded, by everything that decides their bytes: a graph
// compiled again (every instance of a graph with symbolic sizes builds the same source) takes
// the loaded library instead of reading and authenticating its cache entry once more.
class LoadedLibraries {
 public:
  static LoadedLibraries& Get() {
    static LoadedLibraries* loaded = new LoadedLibraries();  // never destroyed: used until exit
    return *loaded;
  }
  std::shared_ptr<const KernelLibrary> Find(const std::string& key, KernelBuildInfo* info) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    auto library = it->second.library.lock();
    if (library) *info = KernelBuildInfo{true, 0, it->second.path, it->second.source};
    return library;
  }
  void Add(const std::string& key, const std::shared_ptr<const KernelLibrary>& library, const KernelBuildInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();)
      it = it->second.library.expired() ? entries_.erase(it) : ++it;
    entries_[key] = {library, info.library, info.source};
  }

 private:
  struct Entry {
    std::weak_ptr<const KernelLibrary> library;
    std::string path, source;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace

std::vector<std::string> CompileFlags(const KernelCompilerOptions& options) {
  // -fno-math-errno lets sqrt become an instruction; it changes no value, only errno.
  // -ffp-contract=off: no a * b + c becomes one fused multiply-add behind our back, so fused
  // elementwise chains round exactly as the unfused ops do.
  // -fno-tree-loop-distribute-patterns: the blocks' load and store loops would otherwise become
  // memcpy calls (a call per 512-byte block, and a barrier to vectorizing around it): 8% of a
  // softmax kernel's time.
  std::vector<std::string> flags = {"-O3",
                                    "-march=native",
                                    "-std=c++17",
                                    "-fPIC",
                                    "-shared",
                                    "-fno-math-errno",
                                    "-ffp-contract=off",
                                    "-fno-tree-loop-distribute-patterns",
                                    "-fvisibility=hidden",
                                    "-w"};
  if (options.fast_math) flags.push_back("-ffast-math");
  return flags;
}

std::string KernelCacheDir(const KernelCompilerOptions& options) { return ge::KernelCacheDir(options.cache_dir); }

namespace {

Expected<std::shared_ptr<const KernelLibrary>> BuildOrLoad(const std::string& prelude,
                                                           const std::vector<std::string>& kernels,
                                                           const KernelCompilerOptions& options,
                                                           KernelBuildInfo* info) {
  const std::string source = prelude + fmt::format("{}", fmt::join(kernels, ""));
  GE_ASSIGN_OR_RETURN(KernelCache cache, OpenCache(options));
  GE_ASSIGN_OR_RETURN(std::string compiler, FindCompiler(options));
  GE_ASSIGN_OR_RETURN(std::string version, CompilerVersion(compiler, cache.dir, options.timeout_seconds));
  const std::vector<std::string> flags = CompileFlags(options);
  const std::string key = CacheKey(source, flags, compiler, version);
  const std::string stem = cache.dir + "/" + key;
  info->library = stem + ".so";
  info->source = stem + ".cc";
  if (Exists(info->library)) {
    auto loaded = LoadEntry(cache, info->library, stem + ".mac");
    if (loaded.ok()) {
      info->cache_hit = true;
      ::utime(info->library.c_str(), nullptr);  // recently used: kept longest by PruneCache
      return loaded;
    }
    // Never loaded: an entry whose tag fails was not written by this user's engine (or is torn).
    // One with the checksum file of versions before tags is only old: rebuilt quietly.
    if (!Exists(stem + ".mac") && Exists(stem + ".sum"))
      GE_LOGI("kernel cache entry {} predates authenticated entries; rebuilding it", info->library);
    else
      GE_LOGW("kernel cache entry {} is not usable ({}); rebuilding it", info->library, loaded.status().message());
    for (const char* ext : {".so", ".mac", ".sum"}) ::unlink((stem + ext).c_str());
  }
  GE_RETURN_IF_ERROR(CompileEntry(cache, compiler, version, flags, prelude, kernels, options, stem, info));
  PruneCache(cache.dir, options.max_entries, key);
  auto loaded = KernelLibrary::Load(info->library);
  if (!loaded.ok()) {  // a broken compiler's output must not stay in the cache
    for (const char* ext : {".so", ".mac"}) ::unlink((stem + ext).c_str());
    return Internal("{} wrote a library that does not load: {}", compiler, loaded.status().message());
  }
  return loaded;
}

}  // namespace

Expected<std::shared_ptr<const KernelLibrary>> BuildKernelLibrary(const std::string& prelude,
                                                                  const std::vector<std::string>& kernels,
                                                                  const KernelCompilerOptions& options,
                                                                  KernelBuildInfo* info) {
  const std::string key = fmt::format("{}\n{}\n{}\n{}\n{}{}", options.compiler, options.cache_dir, options.fast_math,
                                      options.trust.allow_symlinks, prelude, fmt::join(kernels, ""));
  if (auto loaded = LoadedLibraries::Get().Find(key, info)) return loaded;
  GE_ASSIGN_OR_RETURN(auto library, BuildOrLoad(prelude, kernels, options, info));
  LoadedLibraries::Get().Add(key, library, *info);
  return library;
}

}  // namespace ge::autofuse
