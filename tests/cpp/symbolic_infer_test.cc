// Symbolic shape inference: the ops' rules name every value's shape as size expressions, which
// must give the shapes InferShape computes when the same graph is built at other sizes.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "ge/es/graph_builder.h"
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/symbolic_infer.h"

namespace ge {
namespace {

const std::vector<std::string> kNames = {"s0", "s1"};
using Op = SymExpr::Op;

TEST(SymExprTest, CombineFoldsConstantsAndUndoesScaling) {
  const SymExpr s0 = SymExpr::Symbol(0);
  EXPECT_EQ(SymExpr::Combine(Op::kMul, SymExpr::Constant(6), SymExpr::Constant(7)).ConstantValue(), 42);
  EXPECT_EQ(SymExpr::Combine(Op::kAdd, s0, SymExpr::Constant(0)), s0);
  EXPECT_EQ(SymExpr::Combine(Op::kMul, SymExpr::Constant(1), s0), s0);
  EXPECT_EQ(SymExpr::Combine(Op::kMul, s0, SymExpr::Constant(0)).ConstantValue(), 0);
  EXPECT_EQ(SymExpr::Combine(Op::kMax, s0, s0), s0);
  // (s0*8*4)//32 = s0, (s0*12)//4 = s0*3: a reshape's inferred dim.
  const SymExpr scaled =
      SymExpr::Combine(Op::kMul, SymExpr::Combine(Op::kMul, s0, SymExpr::Constant(8)), SymExpr::Constant(4));
  EXPECT_EQ(SymExpr::Combine(Op::kFloorDiv, scaled, SymExpr::Constant(32)), s0);
  EXPECT_EQ(SymExpr::Combine(Op::kFloorDiv, SymExpr::Combine(Op::kMul, SymExpr::Constant(12), s0), SymExpr::Constant(4))
                .ToString(kNames),
            "s0*3");
  // Not simplified where the value could change: (s0*6)//4 stays a division.
  const SymExpr kept =
      SymExpr::Combine(Op::kFloorDiv, SymExpr::Combine(Op::kMul, s0, SymExpr::Constant(6)), SymExpr::Constant(4));
  EXPECT_EQ(*kept.Evaluate({3}), 4);
  // A fold that would overflow stays an expression that reports the overflow when evaluated.
  const SymExpr big = SymExpr::Combine(Op::kMul, SymExpr::Constant(INT64_MAX), SymExpr::Constant(2));
  EXPECT_FALSE(big.IsConstant());
  EXPECT_FALSE(big.Evaluate({}).ok());
}

// Sites by (node, kind, index): kind 'd' a Data dim, 'c' a constant's element.
class MapSizeExprs final : public SizeExprs {
 public:
  std::map<std::tuple<std::string, char, int64_t>, SymExpr> sites;
  const SymExpr* InputDim(const Node& data, int64_t dim) const override { return Find(data, 'd', dim); }
  const SymExpr* ConstElement(const Node& c, int64_t index) const override { return Find(c, 'c', index); }
  bool HasAttrSizes(const Node&) const override { return false; }
  bool HasConstSizes(const Node& c) const override {
    for (const auto& [key, expr] : sites)
      if (std::get<0>(key) == c.name() && std::get<1>(key) == 'c') return true;
    return false;
  }

 private:
  const SymExpr* Find(const Node& node, char kind, int64_t index) const {
    auto it = sites.find({node.name(), kind, index});
    return it == sites.end() ? nullptr : &it->second;
  }
};

// x[s0, 8], y[s1, 8], idx[s1] through the ops the zoo's graphs use; `limit` holds s0.
std::unique_ptr<Graph> BuildAt(int64_t s0, int64_t s1) {
  es::GraphBuilder b("sym");
  auto vec = [&](std::vector<int64_t> v) { return b.CreateVector(v); };
  auto scalar = [&](int64_t v, const char* name) {
    return b.CreateConst(Tensor::FromVector(DataType::kInt64, {}, std::vector<int64_t>{v}), name);
  };
  auto weights = [&](Shape shape) {
    return b.CreateConst(Tensor::FromVector(DataType::kFloat, shape, std::vector<float>(NumElements(shape), 0.5f)));
  };
  auto x = b.CreateInput(0, DataType::kFloat, {s0, 8}, Format::kND, "x");
  auto y = b.CreateInput(1, DataType::kFloat, {s1, 8}, Format::kND, "y");
  auto idx = b.CreateInput(2, DataType::kInt64, {s1}, Format::kND, "idx");
  std::vector<es::EsTensor> outs;
  auto add = [&](const char* name, const std::string& type, const std::vector<es::OpInput>& inputs,
                 AttrMap attrs = {}) {
    outs.push_back(b.Op1(type, inputs, std::move(attrs), name));
    return outs.back();
  };
  add("transpose", "Transpose", {x, vec({1, 0})});
  auto cat = add("concat", "ConcatV2", {std::vector<es::EsTensor>{x, y}, vec({0})}, {{"N", int64_t{2}}});
  auto mm = add("matmul", "MatMulV2", {cat, weights({8, 3}), std::monostate{}});
  auto split = add("reshape_split", "Reshape", {cat, vec({-1, 2, 4})});
  add("batch_matmul", "BatchMatMulV2", {split, weights({4, 5}), std::monostate{}});
  auto sum = add("reduce", "ReduceSum", {mm, vec({1})}, {{"keep_dims", true}});
  auto biased = add("add", "Add", {sum, weights({3})});
  add("flatten", "Reshape", {biased, vec({-1})});
  add("gather", "GatherV2", {weights({10, 4}), idx, vec({0})});
  add("range", "Range", {scalar(0, "start"), scalar(s0, "limit"), scalar(1, "delta")});
  add("slice", "StridedSliceV2", {x, vec({1}), vec({-1}), vec({0}), vec({2})});
  add("tail", "StridedSliceV2", {cat, vec({-3}), vec({INT64_MAX}), vec({0}), vec({1})});
  add("pack", "Pack", {std::vector<es::EsTensor>{x, x}}, {{"N", int64_t{2}}, {"axis", int64_t{1}}});
  add("fixed", "Relu", {weights({2, 2})});
  add("index", "Index", {x, std::vector<es::EsTensor>{idx}},
      {{"indexed_dims", std::vector<int64_t>{1}}, {"N", int64_t{1}}});
  add("histc", "Histc", {x}, {{"bins", int64_t{7}}, {"min", 0.0}, {"max", 1.0}});
  add("gather_elements", "GatherElements",
      {cat, b.Op1("Cast", {b.Op1("Relu", {cat})}, {{"dst_type", DataType::kInt64}})}, {{"dim", int64_t{0}}});
  add("argmax", "ArgMaxV2", {cat, vec({1})}, {{"keep_dims", false}});
  auto second = [&](std::vector<es::EsTensor> results) {  // multi-output ops: their second output
    EXPECT_EQ(results.size(), 2u + (results.size() > 2)) << b.status().ToString();
    if (results.size() > 1) outs.push_back(results[1]);
  };
  second(b.Op("TopKV2", {cat, vec({2})}, {{"dim", int64_t{1}}}, "topk"));
  second(b.Op("Sort", {cat}, {{"axis", int64_t{0}}}, "sort"));
  auto image = add("image", "Reshape", {cat, vec({-1, 2, 2, 2})});
  auto norm =
      b.Op("GroupNorm", {image, std::monostate{}, std::monostate{}}, {{"num_groups", int64_t{2}}}, "group_norm");
  outs.push_back(norm[1]);
  add("adaptive_pool", "AdaptiveAvgPool2d", {image}, {{"output_size", std::vector<int64_t>{1, 1}}});
  b.SetOutputs(outs);
  auto graph = b.Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

MapSizeExprs Sites() {
  MapSizeExprs sizes;
  sizes.sites.emplace(std::make_tuple("x", 'd', 0), SymExpr::Symbol(0));
  sizes.sites.emplace(std::make_tuple("y", 'd', 0), SymExpr::Symbol(1));
  sizes.sites.emplace(std::make_tuple("idx", 'd', 0), SymExpr::Symbol(1));
  sizes.sites.emplace(std::make_tuple("limit", 'c', 0), SymExpr::Symbol(0));
  return sizes;
}

std::string Spelled(const Graph& g, const std::string& node) {
  std::string out;
  for (const SymExpr& d : g.FindNode(node)->output_desc(0).symbolic)
    out += (out.empty() ? "" : ", ") + d.ToString(kNames);
  return "[" + out + "]";
}

TEST(SymbolicInferTest, RulesNameShapesThatHoldAtOtherSizes) {
  auto at = BuildAt(5, 3);
  ASSERT_TRUE(InferSymbolicShapes(*at, Sites(), {5, 3}, kNames).ok());
  EXPECT_EQ(Spelled(*at, "transpose"), "[8, s0]");
  EXPECT_EQ(Spelled(*at, "concat"), "[s0+s1, 8]");
  EXPECT_EQ(Spelled(*at, "matmul"), "[s0+s1, 3]");
  EXPECT_EQ(Spelled(*at, "reshape_split"), "[s0+s1, 2, 4]");  // ((s0+s1)*8)//8
  EXPECT_EQ(Spelled(*at, "batch_matmul"), "[s0+s1, 2, 5]");
  EXPECT_EQ(Spelled(*at, "reduce"), "[s0+s1, 1]");
  EXPECT_EQ(Spelled(*at, "add"), "[s0+s1, 3]");
  EXPECT_EQ(Spelled(*at, "flatten"), "[(s0+s1)*3]");
  EXPECT_EQ(Spelled(*at, "gather"), "[s1, 4]");
  EXPECT_EQ(Spelled(*at, "range"), "[s0]");
  EXPECT_EQ(Spelled(*at, "tail"), "[min(3, s0+s1), 8]");  // x[-3:]
  EXPECT_EQ(Spelled(*at, "pack"), "[s0, 2, 8]");
  EXPECT_EQ(Spelled(*at, "fixed"), "[2, 2]");  // fixed inputs, no size held: constants
  EXPECT_EQ(Spelled(*at, "index"), "[s0, s1]");
  EXPECT_EQ(Spelled(*at, "histc"), "[7]");
  EXPECT_EQ(Spelled(*at, "argmax"), "[s0+s1]");
  EXPECT_EQ(Spelled(*at, "image"), "[s0+s1, 2, 2, 2]");
  EXPECT_EQ(Spelled(*at, "adaptive_pool"), "[s0+s1, 2, 1, 1]");
  // Every expression gives the shape InferShape computes for a build at other sizes.
  for (auto [s0, s1] : {std::pair<int64_t, int64_t>{9, 4}, {2, 7}, {64, 1}}) {
    auto other = BuildAt(s0, s1);
    for (const Node* node : at->nodes()) {
      for (int o = 0; o < node->num_outputs(); ++o) {
        const TensorDesc& desc = node->output_desc(o);
        ASSERT_EQ(desc.symbolic.size(), desc.shape.size()) << node->name() << " is not named";
        const Shape& expected = other->FindNode(node->name())->output_desc(o).shape;
        for (size_t d = 0; d < expected.size(); ++d)
          EXPECT_EQ(*desc.symbolic[d].Evaluate({s0, s1}), expected[d])
              << node->name() << " dim " << d << " = " << desc.symbolic[d].ToString(kNames) << " at " << s0 << ","
              << s1;
      }
    }
  }
}

TEST(SymbolicInferTest, AWrongRuleIsAnErrorNamingTheNode) {
  static const bool registered = [] {
    return OpRegistry::Global()
        .Register(OpDef("SymbolicTestWrongRule")
                      .TypeVar("T", dtypes::kFloat)
                      .Input("x", "T")
                      .Output("y", "T")
                      .Infer(InferSameAsFirstInput)
                      .InferSymbolic([](SymbolicInferContext& ctx) {
                        SymDims dims = ctx.Dims(0);
                        dims[0] = SymExpr::Combine(Op::kAdd, dims[0], SymExpr::Constant(1));
                        ctx.SetOutput(0, dims);
                      })
                      .Doc("a shape rule that is wrong, for this test")
                      .Build())
        .ok();
  }();
  ASSERT_TRUE(registered);
  es::GraphBuilder b("wrong");
  auto x = b.CreateInput(0, DataType::kFloat, {5, 8}, Format::kND, "x");
  auto y = b.Op1("SymbolicTestWrongRule", {x}, {}, "wrong_rule");
  b.SetOutputs({y});
  auto graph = b.Build();
  ASSERT_TRUE(graph.ok());
  Status status = InferSymbolicShapes(**graph, Sites(), {5, 3}, kNames);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("wrong_rule"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("s0+1 = 6"), std::string::npos) << status.message();
}

TEST(SymbolicInferTest, OpsWithoutARuleLeaveTheirOutputsUnknown) {
  es::GraphBuilder b("norule");
  auto x = b.CreateInput(0, DataType::kFloat, {5, 8}, Format::kND, "x");
  static const bool registered = OpRegistry::Global()
                                     .Register(OpDef("SymbolicTestNoRule")
                                                   .TypeVar("T", dtypes::kFloat)
                                                   .Input("x", "T")
                                                   .Output("y", "T")
                                                   .Infer(InferSameAsFirstInput)
                                                   .Doc("an op without a symbolic rule, for this test")
                                                   .Build())
                                     .ok();
  ASSERT_TRUE(registered);
  auto unruled = b.Op1("SymbolicTestNoRule", {x});
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  auto relu = b.Op1("Relu", {unruled});
  b.SetOutputs({relu});
  auto graph = b.Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_TRUE(InferSymbolicShapes(**graph, Sites(), {5, 3}, kNames).ok());
  EXPECT_TRUE(relu.value().node->output_desc(0).symbolic.empty());
  EXPECT_EQ(relu.value().node->output_desc(0).FixedDims(), (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace ge
