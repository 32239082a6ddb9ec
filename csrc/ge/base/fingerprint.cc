#include "ge/base/fingerprint.h"

#include <fmt/format.h>

#include <cstdint>
#include <fstream>

namespace ge {

std::string Fingerprint(std::string_view data) {
  uint64_t a = 1469598103934665603ull, b = 0x6c62272e07bb0142ull;
  for (unsigned char c : data) {
    a = (a ^ c) * 1099511628211ull;
    b = (b ^ c) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  return fmt::format("{:016x}{:016x}", a, b);
}

const std::string& HostCpuIdentity() {
  static const std::string identity = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
    }
    return model + "\n" + flags;
  }();
  return identity;
}

}  // namespace ge
