// Elementwise Ascend IR ops: unary math, binary arithmetic with broadcasting, Cast.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

void Unary(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc) {
  (void)r.Register(
      OpDef(type).TypeVar("T", allowed).Input("x", "T").Output("y", "T").Infer(InferSameAsFirstInput).Doc(doc).Build());
}

void Binary(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc) {
  (void)r.Register(OpDef(type)
                       .TypeVar("T", allowed)
                       .Input("x1", "T")
                       .Input("x2", "T")
                       .Output("y", "T")
                       .Infer(InferBroadcast)
                       .Doc(doc)
                       .Build());
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  using namespace dtypes;
  Unary(r, "Identity", kAll, "y = x (a copy)");
  Unary(r, "Neg", kNumeric, "y = -x");
  Unary(r, "Relu", kNumeric, "y = max(x, 0)");
  Unary(r, "Sigmoid", kFloat, "y = 1 / (1 + exp(-x))");
  Unary(r, "Tanh", kFloat, "y = tanh(x)");
  Unary(r, "Exp", kFloat, "y = exp(x)");
  Unary(r, "Log", kFloat, "y = ln(x)");
  Unary(r, "Sqrt", kFloat, "y = sqrt(x)");
  Unary(r, "Rsqrt", kFloat, "y = 1 / sqrt(x)");
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
                       .Doc("Gaussian error linear unit; approximate = 'none' (erf) or 'tanh'")
                       .Build());

  Binary(r, "Add", kAll, "y = x1 + x2 (broadcasting)");
  Binary(r, "Sub", kNumeric, "y = x1 - x2 (broadcasting)");
  Binary(r, "Mul", kAll, "y = x1 * x2 (broadcasting)");
  Binary(r, "RealDiv", kFloat, "y = x1 / x2, true division (broadcasting)");
  Binary(r, "Maximum", kNumeric, "y = max(x1, x2), NaN-propagating (broadcasting)");
  Binary(r, "Minimum", kNumeric, "y = min(x1, x2), NaN-propagating (broadcasting)");
  Binary(r, "Pow", kNumeric, "y = x1 ** x2 (broadcasting)");

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
                       .Doc("y = x converted to dst_type (round to nearest even; float->int truncates)")
                       .Build());
}

}  // namespace ge
