// Forged model files for the loader's tests: valid header and checksum, one field changed.
// Built without torch's include paths (torch bundles another protobuf's headers).
#pragma once

#include <string>

#include "ge/base/status.h"

namespace ge::testing {

enum class Forgery {
  kWeightsPath,    // the weights file named "../../etc/passwd"
  kWeightOffset,   // an external constant at offset 2^40
  kWeightShape,    // an external constant whose desc says 1000 rows
  kPlanOffset,     // the first task output or workspace in the arena 64 bytes further on
  kKernelIr,       // the first kernel's IR replaced
  kForeignOption,  // a recorded option that does not shape plans (the kernel compiler)
  kDanglingInput,  // the first op with inputs reads a node that does not exist
  kMatMulShape,    // MatMulV2's output desc claims 7 columns
};

// Rewrites the model file at `path` with one forgery.
Status ForgeModelFile(const std::string& path, Forgery forgery);

}  // namespace ge::testing
