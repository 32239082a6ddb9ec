// ATen's oneDNN operators (mkldnn::*), found through the dispatcher. They are registered by
// libtorch_cpu when it was built with oneDNN; a build without it (or with another signature)
// returns nullopt and the kernels that would use them keep their ATen forms.
#pragma once

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace ge::cpu {

template <typename Fn>
std::optional<c10::TypedOperatorHandle<Fn>> FindOneDnnOp(const char* name) {
  if (!at::hasMKLDNN()) return std::nullopt;
  auto handle = c10::Dispatcher::singleton().findSchema({name, ""});
  if (!handle) return std::nullopt;
  try {
    return handle->template typed<Fn>();
  } catch (const c10::Error&) {
    return std::nullopt;
  }
}

}  // namespace ge::cpu
