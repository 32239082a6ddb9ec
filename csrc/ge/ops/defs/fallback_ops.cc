// TorchOp: a framework operator the engine has no IR op for, run by the device's host-fallback
// engine (on the CPU device: the torch dispatcher, boxed). Its output descs are what the
// framework's meta kernels computed, carried as attrs, since the engine cannot infer them.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Status InferTorchOp(InferContext& ctx) {
  GE_RETURN_IF_ERROR(InferOutputsFromAttrs(ctx));
  if (ctx.Attr<std::string>("op").empty()) return ctx.Error("attr 'op' names no operator");
  return {};
}

Status InferFusedKernel(InferContext& ctx) {
  GE_RETURN_IF_ERROR(InferOutputsFromAttrs(ctx));
  if (ctx.Attr<std::string>("kernel").empty()) return ctx.Error("attr 'kernel' names no generated kernel");
  return {};
}

// Any inputs and outputs of any dtype, output descs carried as attrs (InferOutputsFromAttrs).
OpDef OpaqueOp(const char* type) {
  OpDef def(type);
  def.TypeVar("T", dtypes::kAll, /*per_value=*/true)
      .DynamicInput("x", "T")
      .DynamicOutput("y", "T")
      .Attr("output_dtypes", AttrType::kListInt)
      .Attr("output_shapes", AttrType::kListInt)
      .Attr("output_ranks", AttrType::kListInt);
  return def;
}

}  // namespace

void RegisterFallbackOps(OpRegistry& r) {
  (void)r.Register(OpaqueOp("TorchOp")
                       .Attr("op", AttrType::kString)
                       .Attr("args", AttrType::kListString)
                       .Infer(InferTorchOp)
                       .Doc("runs framework operator `op` (e.g. \"aten::cumsum\") on the host; `args` gives every "
                            "schema argument in order: t:<input>, tl:<inputs>, otl:<inputs or -1>, none, i:, f:, b:, "
                            "s:, is:, fs:, bs:, dt:<DataType>, dev:, layout:, mf:")
                       .Build());
  (void)r.Register(
      OpaqueOp("FusedKernel")
          .Attr("kernel", AttrType::kString)
          .Attr("kernel_ir", AttrType::kString, std::string())
          .Attr("fused_ops", AttrType::kListString, std::vector<std::string>{})
          .Infer(InferFusedKernel)
          .Doc("a group of elementwise/reduction nodes made one generated C++ kernel by auto-fusion: "
               "`kernel` is its symbol in the graph's kernel library, `kernel_ir` its loop-level IR, "
               "`fused_ops` the nodes it replaced (type:name). The device receives the typed FusedKernelDef "
               "(ge/runtime/fused_kernel_def.h); these attrs (and the producer_* ones) describe it in "
               "dumps, and the output_* ones let InferShape check the node")
          .Build());
}

}  // namespace ge
