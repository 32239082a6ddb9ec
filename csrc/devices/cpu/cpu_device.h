// The CPU reference device: ATen-backed kernels, the torch allocator for outputs.
#pragma once

#include "ge/runtime/device.h"

namespace ge::cpu {

inline constexpr const char* kCpuDeviceName = "cpu";

// Adds the "cpu" device to the DeviceRegistry (idempotent). Called by the Python module at
// import and by C++ programs before GEInitialize.
void RegisterCpuDevice();

}  // namespace ge::cpu
