// Op-plugin metadata (ops/op_plugin.h): a plugin's type, input, output and attr strings, here
// the input split at NUL bytes, parsed into a prototype.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ge/ops/op_plugin.h"

namespace {
int Infer(const TgeTensorDesc*, int, const TgeAttrs*, const TgeApi*, TgeTensorDesc*, int, char*, size_t) { return 1; }
int Compute(const TgeTensor*, int, TgeTensor*, int, const TgeAttrs*, const TgeApi*, char*, size_t) { return 1; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> fields(4);
  size_t field = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      if (++field == fields.size()) break;
    } else {
      fields[field] += static_cast<char>(data[i]);
    }
  }
  const TgeOpDef def{
      fields[0].c_str(), fields[1].c_str(), fields[2].c_str(), fields[3].c_str(), "fuzz", Infer, Compute};
  (void)ge::PluginOpProto("fuzz", &def);
  return 0;
}
