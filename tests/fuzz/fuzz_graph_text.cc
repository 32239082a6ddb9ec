// Graph texts (the `txt` dumps, serialize/ge_ir_text.h): read, then verify and infer shapes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ge/compiler/prepare.h"
#include "ge/serialize/ge_ir_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = ge::GraphFromText(std::string(reinterpret_cast<const char*>(data), size), true);
  if (graph.ok()) (void)ge::PrepareGraph(**graph);
  return 0;
}
