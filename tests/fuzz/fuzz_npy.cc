// .npy files (ge_run's inputs, serialize/npy.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ge/serialize/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)ge::DecodeNpy(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
