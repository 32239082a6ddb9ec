// Graph texts (the `txt` dumps, serialize/ge_ir_text.h): read, then verify and infer shapes.
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>
#include <string>

#include "ge/compiler/prepare.h"
#include "ge/serialize/ge_ir_text.h"

// Protobuf logs every malformed string it rejects; the fuzzer makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = ge::GraphFromText(std::string(reinterpret_cast<const char*>(data), size), true);
  if (graph.ok()) (void)ge::PrepareGraph(**graph);
  return 0;
}
