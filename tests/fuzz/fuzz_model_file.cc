// Model files (serialize/model_file.h): parse, then verify and infer shapes as LoadModel does
// before anything runs. The input is read as a whole file (header checks) and, past the header,
// as a payload (a mutated payload rarely keeps its checksum, so the checksum would otherwise
// shield the parser from the fuzzer). The input doubles as its own weights file.
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>
#include <string_view>

#include "ge/compiler/prepare.h"
#include "ge/serialize/model_file.h"

// Protobuf logs every malformed string it rejects; the fuzzer makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const ge::WeightsOpener weights = [bytes](const std::string&) -> ge::Expected<ge::MappedBytes> {
    return ge::MappedBytes{bytes.data(), static_cast<int64_t>(bytes.size()), nullptr};
  };
  auto file = ge::ParseModelFile(bytes, weights);
  if (file.ok()) (void)ge::PrepareGraph(*file->graph);
  if (bytes.size() < static_cast<size_t>(ge::kModelHeaderBytes)) return 0;
  auto payload = ge::ParseModelPayload(bytes.substr(static_cast<size_t>(ge::kModelHeaderBytes)), weights);
  if (payload.ok()) (void)ge::PrepareGraph(*payload->graph);
  return 0;
}
