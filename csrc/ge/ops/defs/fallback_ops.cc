// TorchOp: a framework operator the engine has no IR op for, run by the device's host-fallback
// engine (on the CPU device: the torch dispatcher, boxed). Its output descs are what the
// framework's meta kernels computed, carried as attrs, since the engine cannot infer them.
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Status InferTorchOp(InferContext& ctx) {
  const auto dtypes = ctx.Attr<std::vector<int64_t>>("output_dtypes");
  const auto ranks = ctx.Attr<std::vector<int64_t>>("output_ranks");
  const auto dims = ctx.Attr<std::vector<int64_t>>("output_shapes");
  const int n = ctx.node().num_outputs();
  if (static_cast<int>(dtypes.size()) != n || static_cast<int>(ranks.size()) != n)
    return ctx.Error("output_dtypes/output_ranks describe {}/{} outputs, the node has {}", dtypes.size(), ranks.size(), n);
  size_t next = 0;
  for (int o = 0; o < n; ++o) {
    if (ranks[o] < 0 || next + static_cast<size_t>(ranks[o]) > dims.size())
      return ctx.Error("output_shapes is too short for output {}", o);
    Shape shape(dims.begin() + static_cast<std::ptrdiff_t>(next), dims.begin() + static_cast<std::ptrdiff_t>(next + ranks[o]));
    next += static_cast<size_t>(ranks[o]);
    ctx.Output(o).dtype = static_cast<DataType>(dtypes[o]);
    ctx.Output(o).SetShape(std::move(shape));
  }
  if (next != dims.size()) return ctx.Error("output_shapes has {} values, the ranks need {}", dims.size(), next);
  if (ctx.Attr<std::string>("op").empty()) return ctx.Error("attr 'op' names no operator");
  return {};
}

}  // namespace

void RegisterFallbackOps(OpRegistry& r) {
  (void)r.Register(OpDef("TorchOp")
                       .TypeVar("T", dtypes::kAll, /*per_value=*/true)
                       .DynamicInput("x", "T")
                       .DynamicOutput("y", "T")
                       .Attr("op", AttrType::kString)
                       .Attr("args", AttrType::kListString)
                       .Attr("output_dtypes", AttrType::kListInt)
                       .Attr("output_shapes", AttrType::kListInt)
                       .Attr("output_ranks", AttrType::kListInt)
                       .Infer(InferTorchOp)
                       .Doc("runs framework operator `op` (e.g. \"aten::cumsum\") on the host; `args` gives every "
                            "schema argument in order: t:<input>, tl:<inputs>, otl:<inputs or -1>, none, i:, f:, b:, "
                            "s:, is:, fs:, bs:, dt:<DataType>, dev:, layout:, mf:")
                       .Build());
}

}  // namespace ge
