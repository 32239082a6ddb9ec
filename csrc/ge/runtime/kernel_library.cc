#include "ge/runtime/kernel_library.h"

#include <dlfcn.h>

namespace ge {

Expected<std::shared_ptr<const KernelLibrary>> KernelLibrary::Load(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    return Internal("cannot load kernel library {}: {}", path, error ? error : "unknown error");
  }
  return std::shared_ptr<const KernelLibrary>(new KernelLibrary(handle, path));
}

KernelLibrary::~KernelLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

Expected<GeFusedKernelFn> KernelLibrary::Find(const std::string& symbol) const {
  ::dlerror();
  void* fn = ::dlsym(handle_, symbol.c_str());
  if (fn == nullptr) return Internal("kernel library {} has no kernel '{}'", path_, symbol);
  return reinterpret_cast<GeFusedKernelFn>(fn);
}

}  // namespace ge
