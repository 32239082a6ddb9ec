// A shared library of generated kernels, loaded with dlopen and kept open while any Model
// that runs its kernels is alive.
#pragma once

#include <memory>
#include <string>

#include "ge/base/status.h"
#include "ge/runtime/fused_kernel_abi.h"

namespace ge {

class KernelLibrary {
 public:
  // Fails with the loader's message when `path` is not a loadable library.
  static Expected<std::shared_ptr<const KernelLibrary>> Load(const std::string& path);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // The kernel named `symbol`, or an error naming it and the library.
  Expected<GeFusedKernelFn> Find(const std::string& symbol) const;
  const std::string& path() const { return path_; }

 private:
  KernelLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

}  // namespace ge
