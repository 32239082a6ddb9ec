// Registry cases: comparisons, selection, NN, indexing, the opaque ops.
#include "op_cases.h"

#include <cstdint>
#include "ge/ops/op_plugin.h"
#include "ge/ops/op_registry.h"

namespace ge::op_cases {

std::vector<OpCase> NnAndOtherCases() {
  std::vector<OpCase> cases;
  constexpr DataType B8 = DataType::kBool;
  constexpr DataType I64 = DataType::kInt64;
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
  cases.push_back(
      {"Range",
       [](GraphBuilder& b) {
         return b.Op("Range", {b.CreateScalar(0.5, F32), b.CreateScalar(3.5, F32), b.CreateScalar(0.5, F32)});
       },
       {TensorDesc(F32, {6})}});
  cases.push_back({"Range",
                   [](GraphBuilder& b) {  // a limit that the delta moves away from
                     return b.Op("Range", {b.CreateScalar(0, DataType::kInt64), b.CreateScalar(-4, DataType::kInt64),
                                           b.CreateScalar(1, DataType::kInt64)});
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
  // Advanced indexing: adjacent indexed dims keep their place, separated ones move to the front.
  using Dims = std::vector<int64_t>;
  cases.push_back({"Index",
                   [](GraphBuilder& b) {
                     return b.Op("Index",
                                 {In(b, {4, 6, 5}), std::vector<EsTensor>{In(b, {2, 1}, I64), In(b, {3}, I64)}},
                                 {{"indexed_dims", Dims{1, 2}}, {"N", int64_t{2}}});
                   },
                   {TensorDesc(F32, {4, 2, 3})}});
  cases.push_back({"Index",
                   [](GraphBuilder& b) {
                     return b.Op("Index", {In(b, {4, 6, 5}), std::vector<EsTensor>{In(b, {3}, I64), In(b, {3}, I64)}},
                                 {{"indexed_dims", Dims{0, 2}}, {"N", int64_t{2}}});
                   },
                   {TensorDesc(F32, {3, 6})}});
  cases.push_back({"Index",
                   [](GraphBuilder& b) {
                     return b.Op("Index", {In(b, {4, 6}), std::vector<EsTensor>{In(b, {2}, I64), In(b, {3}, I64)}},
                                 {{"indexed_dims", Dims{0, 1}}, {"N", int64_t{2}}});
                   },
                   {}});  // index shapes do not broadcast
  cases.push_back({"IndexPut",
                   [](GraphBuilder& b) {
                     return b.Op("IndexPut", {In(b, {4, 6}), In(b, {2, 6}), std::vector<EsTensor>{In(b, {2}, I64)}},
                                 {{"indexed_dims", Dims{0}}, {"N", int64_t{1}}, {"accumulate", true}});
                   },
                   {TensorDesc(F32, {4, 6})}});
  cases.push_back({"IndexPut",
                   [](GraphBuilder& b) {
                     return b.Op("IndexPut", {In(b, {4, 6}), In(b, {2, 6}), std::vector<EsTensor>{In(b, {2}, I64)}},
                                 {{"indexed_dims", Dims{2}}, {"N", int64_t{1}}});
                   },
                   {}});  // dim 2 of a rank-2 input
  cases.push_back({"Histc",
                   [](GraphBuilder& b) {
                     return b.Op("Histc", {In(b, {10})}, {{"bins", int64_t{4}}, {"min", 0.0}, {"max", 1.0}});
                   },
                   {TensorDesc(F32, {4})}});
  cases.push_back({"Histc",
                   [](GraphBuilder& b) {
                     return b.Op("Histc", {In(b, {10})}, {{"bins", int64_t{4}}, {"min", 2.0}, {"max", 1.0}});
                   },
                   {}});
  // math_extra_ops.cc: numeric unary ops reject bool, float-only ones reject integers.
  for (const char* op : {"Abs", "Sign", "Floor", "Ceil", "Round", "Trunc"}) {
    cases.push_back(Unary(op));
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kBool)}); }, {}});
  }
  for (const char* op : {"Reciprocal", "Expm1", "Log1p", "Log2", "Sin", "Cos", "Tan", "Atan", "Erf", "HardSigmoid",
                         "HardSwish", "Mish", "LeakyRelu", "Elu", "Softplus", "Swish"}) {
    cases.push_back(Unary(op));
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kInt64)}); }, {}});
  }
  for (const char* op : {"FloorDiv", "FloorMod"}) {
    cases.push_back(Binary(op));
    cases.push_back(BinaryBad(op));
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
  // Collectives: shapes only (tests/python/test_distributed.py runs them on two ranks).
  const std::string world = "0";
  auto collective = [world](const char* op, Shape x, AttrMap attrs) {
    return [=](GraphBuilder& b) mutable {
      attrs["group"] = world;
      return b.Op(op, {In(b, x)}, attrs);
    };
  };
  cases.push_back({"HcomAllReduce",
                   collective("HcomAllReduce", {4, 3}, {{"reduction", std::string("max")}}),
                   {TensorDesc(F32, {4, 3})}});
  cases.push_back({"HcomAllReduce", collective("HcomAllReduce", {4, 3}, {{"reduction", std::string("mean")}}), {}});
  cases.push_back(
      {"HcomAllGather", collective("HcomAllGather", {4, 3}, {{"rank_size", int64_t{2}}}), {TensorDesc(F32, {8, 3})}});
  cases.push_back({"HcomAllGather", collective("HcomAllGather", {}, {{"rank_size", int64_t{2}}}), {}});
  cases.push_back({"HcomReduceScatter",
                   collective("HcomReduceScatter", {4, 3}, {{"rank_size", int64_t{2}}}),
                   {TensorDesc(F32, {2, 3})}});
  cases.push_back({"HcomReduceScatter", collective("HcomReduceScatter", {5, 3}, {{"rank_size", int64_t{2}}}), {}});
  cases.push_back(
      {"HcomBroadcast", collective("HcomBroadcast", {4, 3}, {{"root_rank", int64_t{1}}}), {TensorDesc(F32, {4, 3})}});
  cases.push_back({"HcomBroadcast", collective("HcomBroadcast", {4, 3}, {}), {}});  // no root_rank
  cases.push_back(
      {"HcomAllToAllV",
       collective("HcomAllToAllV", {4, 3}, {{"send_counts", IntList{1, 3}}, {"recv_counts", IntList{2, 2}}}),
       {TensorDesc(F32, {4, 3})}});
  cases.push_back(
      {"HcomAllToAllV",
       collective("HcomAllToAllV", {4, 3}, {{"send_counts", IntList{1, 2}}, {"recv_counts", IntList{2, 2}}}),
       {}});
  cases.push_back({"TensorMove",
                   [](GraphBuilder& b) {
                     return b.Op("TensorMove", {In(b, {2, 3})});
                   },
                   {TensorDesc(F32, {2, 3})}});
  cases.push_back({"TensorMove", [](GraphBuilder& b) { return b.Op("TensorMove", {In(b, {2}), In(b, {2})}); }, {}});
  return cases;
}

}  // namespace ge::op_cases
