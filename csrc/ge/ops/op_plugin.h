// Op plugins: new IR ops -- prototype, shape inference and a CPU kernel -- from a user's shared
// library loaded at run time, through the plain C ABI of torchair_ge/include/torchair_ge/op_plugin.h
// (no torch or engine headers needed to build one). The prototype goes into the OpRegistry like
// any built-in's; devices look the kernel up with FindPluginKernel.
#pragma once

#include <string>
#include <vector>

#include "ge/ops/op_registry.h"
#include "torchair_ge/op_plugin.h"

namespace ge {

struct PluginKernel {
  TgeComputeFn compute = nullptr;
  std::string library;  // the file it came from, for error messages
};

// Loads `path` (once; a second load returns the same op types) and registers every op its
// torchair_ge_op_plugin_init registers. Errors name the library and the op.
Expected<std::vector<std::string>> LoadOpPlugin(const std::string& path);

// The prototype an op definition describes (its strings are the plugin's, untrusted: every name
// and type is checked). LoadOpPlugin registers it; the fuzzer drives it alone.
Expected<OpProto> PluginOpProto(const std::string& library, const TgeOpDef* def);

// The kernel a plugin registered for `type`, or nullptr.
const PluginKernel* FindPluginKernel(const std::string& type);

// Attribute access for plugin callbacks: `attrs` is read through TgeApi.
const TgeApi& PluginApi();
inline const TgeAttrs* AsPluginAttrs(const AttrMap& attrs) { return reinterpret_cast<const TgeAttrs*>(&attrs); }

}  // namespace ge
