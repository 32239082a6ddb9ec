// Every registered op: one case whose inferred outputs are checked, one that must be rejected.
// A final test fails when an op is registered without cases here.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "ge/es/graph_builder.h"
#include "ge/ops/op_plugin.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

using es::EsTensor;
using es::GraphBuilder;
using IntList = std::vector<int64_t>;
constexpr DataType F32 = DataType::kFloat;

struct OpCase {
  std::string op;
  // Builds the op on `b`; returns its outputs (empty when building failed).
  std::function<std::vector<EsTensor>(GraphBuilder& b)> build;
  std::vector<TensorDesc> expected;  // empty: the case must fail
};

EsTensor In(GraphBuilder& b, Shape s, DataType dt = F32) {
  static int64_t next = 0;
  return b.CreateInput(next++, dt, std::move(s));
}

std::vector<OpCase> Cases() {
  auto unary = [](const char* op, DataType dt = F32) {
    return OpCase{op, [op, dt](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}, dt)}); }, {TensorDesc(dt, {2, 3})}};
  };
  auto binary = [](const char* op) {
    return OpCase{op,
                  [op](GraphBuilder& b) {
                    return b.Op(op, {In(b, {4, 1, 3}), In(b, {5, 1})});
                  },
                  {TensorDesc(F32, {4, 5, 3})}};
  };
  auto binary_bad = [](const char* op) {
    return OpCase{op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), In(b, {4})}); }, {}};
  };
  std::vector<OpCase> cases;
  for (const char* op : {"Identity", "Neg", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Gelu"})
    cases.push_back(unary(op));
  // Float-only math rejects integers; numeric ops reject bool; every unary op rejects two inputs.
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt"})
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kInt64)}); }, {}});
  for (const char* op : {"Neg", "Relu"})
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kBool)}); }, {}});
  cases.push_back({"Identity", [](GraphBuilder& b) { return b.Op("Identity", {In(b, {2}), In(b, {2})}); }, {}});
  cases.push_back({"Gelu",
                   [](GraphBuilder& b) {
                     return b.Op("Gelu", {In(b, {2})}, {{"approximate", std::string("cubic")}});
                   },
                   {}});
  for (const char* op : {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow"}) {
    cases.push_back(binary(op));
    cases.push_back(binary_bad(op));
  }
  cases.push_back({"Add", [](GraphBuilder& b) { return b.Op("Add", {In(b, {2}), In(b, {2}, DataType::kInt64)}); }, {}});
  cases.push_back({"Cast",
                   [](GraphBuilder& b) {
                     return b.Op("Cast", {In(b, {2, 2})}, {{"dst_type", DataType::kFloat16}});
                   },
                   {TensorDesc(DataType::kFloat16, {2, 2})}});
  cases.push_back({"Cast", [](GraphBuilder& b) { return b.Op("Cast", {In(b, {2})}); }, {}});  // dst_type missing

  cases.push_back({"MatMulV2",
                   [](GraphBuilder& b) {
                     return b.Op("MatMulV2", {In(b, {5, 3}), In(b, {4, 5}), In(b, {4})},
                                 {{"transpose_x1", true}, {"transpose_x2", true}});
                   },
                   {TensorDesc(F32, {3, 4})}});
  cases.push_back({"MatMulV2", [](GraphBuilder& b) { return b.Op("MatMulV2", {In(b, {2, 3}), In(b, {4, 5})}); }, {}});
  cases.push_back({"FusedMatMul",
                   [](GraphBuilder& b) {
                     return b.Op("FusedMatMul", {In(b, {5, 3}), In(b, {4, 3}), In(b, {4})},
                                 {{"transpose_x2", true}, {"fused_op_type", std::string("gelu")}});
                   },
                   {TensorDesc(F32, {5, 4})}});
  cases.push_back({"FusedMatMul",
                   [](GraphBuilder& b) {
                     return b.Op("FusedMatMul", {In(b, {5, 3}), In(b, {3, 4}), es::OpInput{}},
                                 {{"fused_op_type", std::string("swish")}});
                   },
                   {}});  // not an activation FusedMatMul applies
  cases.push_back({"BatchMatMulV2",
                   [](GraphBuilder& b) {
                     return b.Op("BatchMatMulV2", {In(b, {2, 1, 3, 4}), In(b, {5, 6, 4})}, {{"adj_x2", true}});
                   },
                   {TensorDesc(F32, {2, 5, 3, 6})}});
  cases.push_back({"BatchMatMulV2",
                   [](GraphBuilder& b) {
                     return b.Op("BatchMatMulV2", {In(b, {3}), In(b, {3, 2})});
                   },
                   {}});
  for (const char* op : {"ReduceSum", "ReduceMean"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3, 4}), b.CreateVector({-1, 0})}, {{"keep_dims", true}});
                     },
                     {TensorDesc(F32, {1, 3, 1})}});
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3}), b.CreateVector({})});
                     },
                     {TensorDesc(F32, {})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), b.CreateVector({2})}); }, {}});
  }

  const IntList ones = {1, 1, 1, 1};
  cases.push_back({"Conv2D",
                   [ones](GraphBuilder& b) {
                     return b.Op("Conv2D", {In(b, {2, 4, 9, 9}), In(b, {6, 2, 3, 3}), In(b, {6})},
                                 {{"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"dilations", ones},
                                  {"groups", int64_t{2}}});
                   },
                   {TensorDesc(F32, {2, 6, 5, 5}, Format::kNCHW)}});
  cases.push_back({"Conv2D",
                   [](GraphBuilder& b) {
                     return b.Op("Conv2D", {In(b, {2, 4, 9, 9}), In(b, {6, 3, 3, 3})},
                                 {{"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{0, 0, 0, 0}}});
                   },
                   {}});
  cases.push_back({"Conv2DTranspose",
                   [ones](GraphBuilder& b) {
                     return b.Op("Conv2DTranspose", {In(b, {1, 4, 5, 5}), In(b, {4, 3, 3, 3})},
                                 {{"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"output_padding", IntList{0, 0, 1, 1}}});
                   },
                   {TensorDesc(F32, {1, 3, 10, 10})}});
  cases.push_back({"Conv2DTranspose",
                   [](GraphBuilder& b) {
                     return b.Op("Conv2DTranspose", {In(b, {1, 4, 5, 5}), In(b, {3, 3, 3, 3})},
                                 {{"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{0, 0, 0, 0}}});
                   },
                   {}});
  cases.push_back({"MaxPoolV3",
                   [](GraphBuilder& b) {
                     return b.Op("MaxPoolV3", {In(b, {1, 2, 7, 7})},
                                 {{"ksize", IntList{1, 1, 3, 3}},
                                  {"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"ceil_mode", true}});
                   },
                   {TensorDesc(F32, {1, 2, 4, 4})}});
  cases.push_back({"MaxPoolV3",
                   [](GraphBuilder& b) {
                     return b.Op("MaxPoolV3", {In(b, {1, 2, 7})}, {{"ksize", IntList{1, 1, 3, 3}}});
                   },
                   {}});
  cases.push_back({"AvgPoolV2",
                   [](GraphBuilder& b) {
                     return b.Op("AvgPoolV2", {In(b, {1, 2, 8, 6})},
                                 {{"ksize", IntList{1, 1, 2, 2}}, {"strides", IntList{1, 1, 2, 2}}});
                   },
                   {TensorDesc(F32, {1, 2, 4, 3})}});
  cases.push_back({"AvgPoolV2",
                   [](GraphBuilder& b) {
                     return b.Op("AvgPoolV2", {In(b, {1, 2, 8, 6})},
                                 {{"ksize", IntList{1, 1, 2, 2}}, {"padding_mode", std::string("SAME")}});
                   },
                   {}});
  cases.push_back({"AdaptiveAvgPool2d",
                   [](GraphBuilder& b) {
                     return b.Op("AdaptiveAvgPool2d", {In(b, {2, 3, 9, 7})}, {{"output_size", IntList{2, 3}}});
                   },
                   {TensorDesc(F32, {2, 3, 2, 3})}});
  cases.push_back({"AdaptiveAvgPool2d",
                   [](GraphBuilder& b) {
                     return b.Op("AdaptiveAvgPool2d", {In(b, {2, 3, 9, 7})}, {{"output_size", IntList{0, 3}}});
                   },
                   {}});
  cases.push_back({"BatchNorm",
                   [](GraphBuilder& b) {
                     return b.Op("BatchNorm", {In(b, {2, 3, 4, 4}), In(b, {3}), In(b, {3}), In(b, {3}), In(b, {3})});
                   },
                   {TensorDesc(F32, {2, 3, 4, 4})}});
  cases.push_back({"BatchNorm",
                   [](GraphBuilder& b) {
                     return b.Op("BatchNorm", {In(b, {2, 3, 4, 4}), In(b, {4}), In(b, {3}), In(b, {3}), In(b, {3})});
                   },
                   {}});
  cases.push_back({"FusedAttention",
                   [](GraphBuilder& b) {
                     return b.Op("FusedAttention",
                                 {In(b, {2, 4, 6, 8}), In(b, {2, 4, 5, 8}), In(b, {2, 4, 5, 8}), In(b, {2, 1, 1, 5})},
                                 {{"scale", 0.125}});
                   },
                   {TensorDesc(F32, {2, 4, 6, 8})}});
  cases.push_back({"FusedAttention",
                   [](GraphBuilder& b) {  // key's feature dim differs from the query's
                     return b.Op("FusedAttention", {In(b, {2, 4, 6, 8}), In(b, {2, 4, 5, 7}), In(b, {2, 4, 5, 3})},
                                 {{"scale", 0.125}});
                   },
                   {}});
  cases.push_back({"SoftmaxV2",
                   [](GraphBuilder& b) {
                     return b.Op("SoftmaxV2", {In(b, {2, 5})});
                   },
                   {TensorDesc(F32, {2, 5})}});
  cases.push_back({"SoftmaxV2",
                   [](GraphBuilder& b) {
                     return b.Op("SoftmaxV2", {In(b, {2, 5})}, {{"axes", IntList{2}}});
                   },
                   {}});
  cases.push_back(
      {"LayerNorm",
       [](GraphBuilder& b) {
         return b.Op("LayerNorm", {In(b, {2, 3, 8}), In(b, {8}), In(b, {8})}, {{"begin_norm_axis", int64_t{-1}}});
       },
       {TensorDesc(F32, {2, 3, 8}), TensorDesc(F32, {2, 3, 1}), TensorDesc(F32, {2, 3, 1})}});
  cases.push_back({"LayerNorm",
                   [](GraphBuilder& b) {
                     return b.Op("LayerNorm", {In(b, {2, 3, 8}), In(b, {3})}, {{"begin_norm_axis", int64_t{2}}});
                   },
                   {}});

  cases.push_back({"Data",
                   [](GraphBuilder& b) { return std::vector<EsTensor>{b.CreateInput(0, F32, {3})}; },
                   {TensorDesc(F32, {3})}});
  cases.push_back({"Data", [](GraphBuilder& b) { return b.Op("Data", {}); }, {}});  // index attr missing
  cases.push_back({"Const",
                   [](GraphBuilder& b) { return std::vector<EsTensor>{b.CreateScalar(2.5, DataType::kFloat16)}; },
                   {TensorDesc(DataType::kFloat16, {})}});
  cases.push_back({"Const", [](GraphBuilder& b) { return b.Op("Const", {}); }, {}});
  cases.push_back({"NetOutput",
                   [](GraphBuilder& b) {
                     auto outs = b.Op("NetOutput", {std::vector<EsTensor>{In(b, {2}), In(b, {3}, DataType::kInt64)}});
                     return b.status().ok() ? std::vector<EsTensor>{EsTensor(&b, Value{})} : outs;
                   },
                   {TensorDesc()}});
  cases.push_back(
      {"NetOutput", [](GraphBuilder& b) { return b.Op("NetOutput", {std::vector<EsTensor>{EsTensor()}}); }, {}});
  cases.push_back({"Reshape",
                   [](GraphBuilder& b) {
                     return b.Op("Reshape", {In(b, {2, 3, 4}), b.CreateVector({4, -1})});
                   },
                   {TensorDesc(F32, {4, 6})}});
  cases.push_back({"Reshape",
                   [](GraphBuilder& b) {
                     return b.Op("Reshape", {In(b, {2, 3}), b.CreateVector({4, 2})});
                   },
                   {}});
  cases.push_back({"Transpose",
                   [](GraphBuilder& b) {
                     return b.Op("Transpose", {In(b, {2, 3, 4}), b.CreateVector({2, 0, 1}, DataType::kInt32)});
                   },
                   {TensorDesc(F32, {4, 2, 3})}});
  cases.push_back({"Transpose",
                   [](GraphBuilder& b) {
                     return b.Op("Transpose", {In(b, {2, 3}), b.CreateVector({0, 0})});
                   },
                   {}});
  cases.push_back({"ConcatV2",
                   [](GraphBuilder& b) {
                     return b.Op("ConcatV2",
                                 {std::vector<EsTensor>{In(b, {2, 3}), In(b, {2, 5})}, b.CreateVector({-1})},
                                 {{"N", int64_t{2}}});
                   },
                   {TensorDesc(F32, {2, 8})}});
  cases.push_back({"ConcatV2",
                   [](GraphBuilder& b) {
                     return b.Op("ConcatV2", {std::vector<EsTensor>{In(b, {2, 3}), In(b, {3, 5})}, b.CreateVector({1})},
                                 {{"N", int64_t{2}}});
                   },
                   {}});
  cases.push_back({"Flatten",
                   [](GraphBuilder& b) {
                     return b.Op("Flatten", {In(b, {2, 3, 4, 5})}, {{"axis", int64_t{2}}});
                   },
                   {TensorDesc(F32, {6, 20})}});
  cases.push_back({"Flatten",
                   [](GraphBuilder& b) {
                     return b.Op("Flatten", {In(b, {2, 3})}, {{"axis", int64_t{5}}});
                   },
                   {}});
  constexpr DataType B8 = DataType::kBool;
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {3, 1}), In(b, {4})});
                     },
                     {TensorDesc(B8, {3, 4})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {3}), In(b, {3}, DataType::kInt64)}); }, {}});
  }
  for (const char* op : {"LogicalAnd", "LogicalOr"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 1}, B8), In(b, {3}, B8)});
                     },
                     {TensorDesc(B8, {2, 3})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}), In(b, {2})}); }, {}});  // not bool
  }
  cases.push_back(
      {"LogicalNot", [](GraphBuilder& b) { return b.Op("LogicalNot", {In(b, {5}, B8)}); }, {TensorDesc(B8, {5})}});
  cases.push_back({"LogicalNot", [](GraphBuilder& b) { return b.Op("LogicalNot", {In(b, {5})}); }, {}});
  cases.push_back({"MaskedFill",
                   [](GraphBuilder& b) {
                     return b.Op("MaskedFill", {In(b, {2, 3}), In(b, {3}, B8), b.CreateScalar(-1, F32)});
                   },
                   {TensorDesc(F32, {2, 3})}});
  cases.push_back({"MaskedFill",
                   [](GraphBuilder& b) {
                     return b.Op("MaskedFill", {In(b, {3}), In(b, {2, 3}, B8), b.CreateScalar(-1, F32)});
                   },
                   {}});  // the mask may not grow x
  cases.push_back({"SelectV2",
                   [](GraphBuilder& b) {
                     return b.Op("SelectV2", {In(b, {2, 1}, B8), In(b, {3}), In(b, {1})});
                   },
                   {TensorDesc(F32, {2, 3})}});
  cases.push_back({"SelectV2",
                   [](GraphBuilder& b) {
                     return b.Op("SelectV2", {In(b, {2}, B8), In(b, {3}), In(b, {3})});
                   },
                   {}});
  cases.push_back({"BroadcastTo",
                   [](GraphBuilder& b) {
                     return b.Op("BroadcastTo", {In(b, {3, 1}), b.CreateVector({2, 3, 4})});
                   },
                   {TensorDesc(F32, {2, 3, 4})}});
  cases.push_back({"BroadcastTo",
                   [](GraphBuilder& b) {
                     return b.Op("BroadcastTo", {In(b, {3, 2}), b.CreateVector({3, 4})});
                   },
                   {}});
  cases.push_back({"GatherV2",
                   [](GraphBuilder& b) {
                     return b.Op("GatherV2", {In(b, {10, 4}), In(b, {2, 3}, DataType::kInt64),
                                              b.CreateScalar(0, DataType::kInt64)});
                   },
                   {TensorDesc(F32, {2, 3, 4})}});
  cases.push_back(
      {"GatherV2",
       [](GraphBuilder& b) {
         return b.Op("GatherV2", {In(b, {10, 4}), b.CreateScalar(1, DataType::kInt64), b.CreateVector({-1})});
       },
       {TensorDesc(F32, {10})}});  // a 0-d index drops the axis
  cases.push_back({"GatherV2",
                   [](GraphBuilder& b) {
                     return b.Op("GatherV2", {In(b, {10, 4}), In(b, {2}, DataType::kInt64), b.CreateVector({2})});
                   },
                   {}});
  cases.push_back({"StridedSliceV2",
                   [](GraphBuilder& b) {
                     return b.Op("StridedSliceV2", {In(b, {10, 8}), b.CreateVector({1, -3}), b.CreateVector({9, 1000}),
                                                    b.CreateVector({0, 1}), b.CreateVector({3, 1})});
                   },
                   {TensorDesc(F32, {3, 3})}});
  cases.push_back({"StridedSliceV2",
                   [](GraphBuilder& b) {
                     return b.Op("StridedSliceV2", {In(b, {10}), b.CreateVector({0}), b.CreateVector({5}),
                                                    b.CreateVector({0}), b.CreateVector({-1})});
                   },
                   {}});
  cases.push_back({"Pack",
                   [](GraphBuilder& b) {
                     return b.Op("Pack", {std::vector<EsTensor>{In(b, {2, 3}), In(b, {2, 3})}},
                                 {{"axis", int64_t{-1}}, {"N", int64_t{2}}});
                   },
                   {TensorDesc(F32, {2, 3, 2})}});
  cases.push_back({"Pack",
                   [](GraphBuilder& b) {
                     return b.Op("Pack", {std::vector<EsTensor>{In(b, {2, 3}), In(b, {3, 2})}}, {{"N", int64_t{2}}});
                   },
                   {}});
  // math_extra_ops.cc: numeric unary ops reject bool, float-only ones reject integers.
  for (const char* op : {"Abs", "Sign", "Floor", "Ceil", "Round", "Trunc"}) {
    cases.push_back(unary(op));
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kBool)}); }, {}});
  }
  for (const char* op : {"Reciprocal", "Expm1", "Log1p", "Log2", "Sin", "Cos", "Tan", "Atan", "Erf", "HardSigmoid",
                         "HardSwish", "Mish", "LeakyRelu", "Elu", "Softplus", "Swish"}) {
    cases.push_back(unary(op));
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kInt64)}); }, {}});
  }
  for (const char* op : {"FloorDiv", "FloorMod"}) {
    cases.push_back(binary(op));
    cases.push_back(binary_bad(op));
  }
  cases.push_back({"ClipByValue",
                   [](GraphBuilder& b) {
                     return b.Op("ClipByValue", {In(b, {2, 3}), b.CreateScalar(-1, F32), In(b, {3})});
                   },
                   {TensorDesc(F32, {2, 3})}});
  cases.push_back({"ClipByValue",
                   [](GraphBuilder& b) {
                     return b.Op("ClipByValue", {In(b, {3}), In(b, {2, 3}), b.CreateScalar(1, F32)});
                   },
                   {}});
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceProd"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3, 4}), b.CreateVector({1})}, {{"keep_dims", true}});
                     },
                     {TensorDesc(F32, {2, 1, 4})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), b.CreateVector({3})}); }, {}});
  }
  for (const char* op : {"ArgMaxV2", "ArgMin"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3, 4}), b.CreateVector({-1})});
                     },
                     {TensorDesc(DataType::kInt64, {2, 3})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), b.CreateVector({2})}); }, {}});
  }
  cases.push_back({"LogSoftmaxV2",
                   [](GraphBuilder& b) {
                     return b.Op("LogSoftmaxV2", {In(b, {2, 5})});
                   },
                   {TensorDesc(F32, {2, 5})}});
  cases.push_back({"LogSoftmaxV2",
                   [](GraphBuilder& b) {
                     return b.Op("LogSoftmaxV2", {In(b, {2, 5})}, {{"axes", IntList{3}}});
                   },
                   {}});
  cases.push_back({"Cumsum",
                   [](GraphBuilder& b) {
                     return b.Op("Cumsum", {In(b, {2, 5})}, {{"axis", int64_t{1}}});
                   },
                   {TensorDesc(F32, {2, 5})}});
  cases.push_back({"Cumsum",
                   [](GraphBuilder& b) {
                     return b.Op("Cumsum", {In(b, {2, 5})}, {{"axis", int64_t{1}}, {"reverse", true}});
                   },
                   {}});
  // selection_ops.cc
  constexpr DataType I64 = DataType::kInt64;
  cases.push_back({"GatherElements",
                   [](GraphBuilder& b) {
                     return b.Op("GatherElements", {In(b, {4, 5}), In(b, {2, 5}, I64)}, {{"dim", int64_t{0}}});
                   },
                   {TensorDesc(F32, {2, 5})}});
  cases.push_back({"GatherElements",
                   [](GraphBuilder& b) {
                     return b.Op("GatherElements", {In(b, {4, 5}), In(b, {2}, I64)}, {{"dim", int64_t{0}}});
                   },
                   {}});
  cases.push_back({"ScatterElements",
                   [](GraphBuilder& b) {
                     return b.Op("ScatterElements", {In(b, {4, 5}), In(b, {2, 5}, I64), In(b, {2, 5})},
                                 {{"axis", int64_t{0}}, {"reduction", std::string("add")}});
                   },
                   {TensorDesc(F32, {4, 5})}});
  cases.push_back({"ScatterElements",
                   [](GraphBuilder& b) {
                     return b.Op("ScatterElements", {In(b, {4, 5}), In(b, {2, 5}, I64), In(b, {2, 5})},
                                 {{"axis", int64_t{0}}, {"reduction", std::string("mul")}});
                   },
                   {}});
  cases.push_back({"TopKV2",
                   [](GraphBuilder& b) {
                     return b.Op("TopKV2", {In(b, {3, 8}), b.CreateVector({2})}, {{"dim", int64_t{1}}});
                   },
                   {TensorDesc(F32, {3, 2}), TensorDesc(I64, {3, 2})}});
  cases.push_back({"TopKV2", [](GraphBuilder& b) { return b.Op("TopKV2", {In(b, {3, 8}), b.CreateVector({9})}); }, {}});
  cases.push_back({"Sort",
                   [](GraphBuilder& b) {
                     return b.Op("Sort", {In(b, {3, 8})}, {{"axis", int64_t{0}}});
                   },
                   {TensorDesc(F32, {3, 8}), TensorDesc(I64, {3, 8})}});
  cases.push_back({"Sort", [](GraphBuilder& b) { return b.Op("Sort", {In(b, {3, 8})}, {{"axis", int64_t{2}}}); }, {}});
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {3, 1}, I64), In(b, {4}, I64)});
                     },
                     {TensorDesc(I64, {3, 4})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {3}), In(b, {3})}); }, {}});  // floats
  }
  for (const char* op : {"ReduceAny", "ReduceAll"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3}, B8), b.CreateVector({1})});
                     },
                     {TensorDesc(B8, {2})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), b.CreateVector({1})}); }, {}});
  }
  for (const char* op : {"ReduceLogSumExp", "ReduceVar", "ReduceStd"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3}), b.CreateVector({0})});
                     },
                     {TensorDesc(F32, {3})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}, I64), b.CreateVector({0})}); }, {}});
  }
  cases.push_back({"GroupNorm",
                   [](GraphBuilder& b) {
                     return b.Op("GroupNorm", {In(b, {2, 6, 5}), In(b, {6}), In(b, {6})}, {{"num_groups", int64_t{3}}});
                   },
                   {TensorDesc(F32, {2, 6, 5}), TensorDesc(F32, {2, 3}), TensorDesc(F32, {2, 3})}});
  cases.push_back({"GroupNorm",
                   [](GraphBuilder& b) {
                     return b.Op("GroupNorm", {In(b, {2, 6, 5})}, {{"num_groups", int64_t{4}}});
                   },
                   {}});
  cases.push_back({"Assign",
                   [](GraphBuilder& b) {
                     return b.Op("Assign", {In(b, {2, 3}), In(b, {3})});
                   },
                   {TensorDesc(F32, {2, 3})}});
  cases.push_back({"Assign", [](GraphBuilder& b) { return b.Op("Assign", {In(b, {3}), In(b, {2, 3})}); }, {}});
  cases.push_back({"InplaceIndexCopy",
                   [](GraphBuilder& b) {
                     return b.Op("InplaceIndexCopy",
                                 {In(b, {1, 4, 16, 8}), In(b, {1}, DataType::kInt64), In(b, {1, 4, 1, 8})},
                                 {{"dim", int64_t{2}}});
                   },
                   {TensorDesc(F32, {1, 4, 16, 8})}});
  cases.push_back({"InplaceIndexCopy",
                   [](GraphBuilder& b) {
                     return b.Op("InplaceIndexCopy",
                                 {In(b, {1, 4, 16, 8}), In(b, {2}, DataType::kInt64), In(b, {1, 4, 1, 8})},
                                 {{"dim", int64_t{2}}});
                   },
                   {}});
  auto torch_op = [](std::vector<int64_t> ranks) {
    return [ranks](GraphBuilder& b) {
      AttrMap attrs = {{"op", std::string("aten::cumsum")},
                       {"args", std::vector<std::string>{"t:0", "i:0", "none"}},
                       {"output_dtypes", std::vector<int64_t>{static_cast<int64_t>(DataType::kFloat)}},
                       {"output_shapes", std::vector<int64_t>{2, 3}},
                       {"output_ranks", ranks}};
      return b.Op("TorchOp", {std::vector<EsTensor>{In(b, {2, 3})}}, attrs, "", 1);
    };
  };
  cases.push_back({"TorchOp", torch_op({2}), {TensorDesc(F32, {2, 3})}});
  cases.push_back({"TorchOp", torch_op({3}), {}});  // ranks ask for more dims than output_shapes holds
  auto fused_kernel = [](std::string kernel) {
    return [kernel](GraphBuilder& b) {
      AttrMap attrs = {{"kernel", kernel},
                       {"output_dtypes", std::vector<int64_t>{static_cast<int64_t>(DataType::kFloat16)}},
                       {"output_shapes", std::vector<int64_t>{4}},
                       {"output_ranks", std::vector<int64_t>{1}}};
      return b.Op("FusedKernel", {std::vector<EsTensor>{In(b, {4}), In(b, {4}, DataType::kBool)}}, attrs, "", 1);
    };
  };
  cases.push_back({"FusedKernel", fused_kernel("ge_fused_0"), {TensorDesc(DataType::kFloat16, {4})}});
  cases.push_back({"FusedKernel", fused_kernel(""), {}});  // names no kernel
  return cases;
}

class OpCaseTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpCaseTest, InfersOrRejects) {
  const OpCase& c = GetParam();
  GraphBuilder b;
  auto outs = c.build(b);
  if (c.expected.empty()) {
    EXPECT_FALSE(b.status().ok()) << c.op << " accepted an invalid node";
    EXPECT_NE(b.status().message(), "") << c.op;
    return;
  }
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  if (c.op == "NetOutput") return;  // no outputs to check
  ASSERT_EQ(outs.size(), c.expected.size()) << c.op;
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_EQ(outs[i].dtype(), c.expected[i].dtype) << c.op << " output " << i;
    EXPECT_EQ(outs[i].shape(), c.expected[i].shape)
        << c.op << " output " << i << " got " << ShapeToString(outs[i].shape());
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpCaseTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.op + "_" + std::to_string(info.index);
                         });

TEST(OpRegistryTest, EveryOpHasAValidAndAnInvalidCase) {
  std::set<std::string> valid, invalid;
  for (const auto& c : Cases()) (c.expected.empty() ? invalid : valid).insert(c.op);
  for (const auto& type : OpRegistry::Global().OpTypes()) {
    // Users' ops (derived from custom operators, or from op plugins other tests load) are not ours.
    if (!OpRegistry::Global().Find(type)->framework_op.empty() || FindPluginKernel(type) != nullptr) continue;
    EXPECT_TRUE(valid.count(type)) << type << " has no valid-case test";
    EXPECT_TRUE(invalid.count(type)) << type << " has no invalid-case test";
  }
}

TEST(OpRegistryTest, IssueOpListIsRegistered) {
  for (const char* op : {"Data",       "Const",         "NetOutput",
                         "Identity",   "Add",           "Sub",
                         "Mul",        "RealDiv",       "Neg",
                         "Maximum",    "Minimum",       "Relu",
                         "Gelu",       "Sigmoid",       "Tanh",
                         "Exp",        "Log",           "Sqrt",
                         "Rsqrt",      "Pow",           "Cast",
                         "MatMulV2",   "BatchMatMulV2", "Conv2D",
                         "MaxPoolV3",  "AvgPoolV2",     "AdaptiveAvgPool2d",
                         "BatchNorm",  "SoftmaxV2",     "LayerNorm",
                         "Reshape",    "Transpose",     "ConcatV2",
                         "ReduceMean", "ReduceSum",     "Flatten"})
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << op;
}

TEST(OpRegistryTest, UnknownAttrsAreRejectedPrivateOnesAllowed) {
  GraphBuilder b;
  b.Op("Relu", {In(b, {2})}, {{"_fx_node", std::string("relu_1")}});
  EXPECT_TRUE(b.status().ok()) << b.status().ToString();
  b.Op("Relu", {In(b, {2})}, {{"alpha", 0.5}});
  EXPECT_FALSE(b.status().ok());
  EXPECT_NE(b.status().message().find("unknown attribute 'alpha'"), std::string::npos) << b.status().message();
}

TEST(OpRegistryTest, DuplicateRegistrationFails) {
  EXPECT_FALSE(OpRegistry::Global().Register(OpDef("Add").TypeVar("T", {}).Build()).ok());
}

}  // namespace
}  // namespace ge
