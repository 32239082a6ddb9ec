#pragma once
#include "ge/ir/annotations.h"
#include "ge/ir/graph.h"
#include "ge/runtime/device.h"

namespace ge {

inline constexpr const char* kEngineLocal = "local";                 // Data/Const/NetOutput: no kernel
inline constexpr const char* kEngineNative = "native";               // a prebuilt device kernel
inline constexpr const char* kEngineHostFallback = "host_fallback";  // TorchOp: the framework runs it

// Stage "partition": every node gets an engine (attr `_engine`): local, host_fallback
// (TorchOp), or native, and a stream (attr `_stream`; the CPU device has one). A node the device has no kernel for is
// an error naming the op.
Status PartitionGraph(Graph& graph, const KernelFactory& kernels, const std::string& device_name);

bool IsLocalOp(const std::string& type);

}  // namespace ge
