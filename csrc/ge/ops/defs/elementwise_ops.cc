// Elementwise Ascend IR ops: unary math, binary arithmetic with broadcasting, Cast.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {

void RegisterUnary(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc) {
  (void)r.Register(OpDef(type)
                       .TypeVar("T", allowed)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc(doc)
                       .Build());
}

void RegisterBinary(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc) {
  (void)r.Register(OpDef(type)
                       .TypeVar("T", allowed)
                       .Input("x1", "T")
                       .Input("x2", "T")
                       .Output("y", "T")
                       .Infer(InferBroadcast)
                       .InferSymbolic(InferSymbolicBroadcast)
                       .Doc(doc)
                       .Build());
}

void RegisterElementwiseOps(OpRegistry& r) {
  using namespace dtypes;
  RegisterUnary(r, "Identity", kAll, "y = x (a copy)");
  RegisterUnary(r, "Neg", kNumeric, "y = -x");
  RegisterUnary(r, "Relu", kNumeric, "y = max(x, 0)");
  RegisterUnary(r, "Sigmoid", kFloat, "y = 1 / (1 + exp(-x))");
  RegisterUnary(r, "Tanh", kFloat, "y = tanh(x)");
  RegisterUnary(r, "Exp", kFloat, "y = exp(x)");
  RegisterUnary(r, "Log", kFloat, "y = ln(x)");
  RegisterUnary(r, "Sqrt", kFloat, "y = sqrt(x)");
  RegisterUnary(r, "Rsqrt", kFloat, "y = 1 / sqrt(x)");
  (void)r.Register(OpDef("Gelu")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("approximate", AttrType::kString, std::string("none"))
                       .Infer([](InferContext& ctx) -> Status {
                         const auto mode = ctx.Attr<std::string>("approximate");
                         if (mode != "none" && mode != "tanh")
                           return ctx.Error("approximate must be 'none' or 'tanh', got '{}'", mode);
                         return InferSameAsFirstInput(ctx);
                       })
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("Gaussian error linear unit; approximate = 'none' (erf) or 'tanh'")
                       .Build());

  RegisterBinary(r, "Add", kAll, "y = x1 + x2 (broadcasting)");
  RegisterBinary(r, "Sub", kNumeric, "y = x1 - x2 (broadcasting)");
  RegisterBinary(r, "Mul", kAll, "y = x1 * x2 (broadcasting)");
  RegisterBinary(r, "RealDiv", kFloat, "y = x1 / x2, true division (broadcasting)");
  RegisterBinary(r, "Maximum", kNumeric, "y = max(x1, x2), NaN-propagating (broadcasting)");
  RegisterBinary(r, "Minimum", kNumeric, "y = min(x1, x2), NaN-propagating (broadcasting)");
  RegisterBinary(r, "Pow", kNumeric, "y = x1 ** x2 (broadcasting)");

  (void)r.Register(OpDef("Cast")
                       .TypeVar("T1", kAll)
                       .TypeVar("T2", kAll)
                       .Input("x", "T1")
                       .Output("y", "T2")
                       .Attr("dst_type", AttrType::kDataType)
                       .Infer([](InferContext& ctx) -> Status {
                         ctx.Output(0).dtype = ctx.Attr<DataType>("dst_type");
                         return InferSameAsFirstInput(ctx);
                       })
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = x converted to dst_type (round to nearest even; float->int truncates)")
                       .Build());
}

}  // namespace ge
