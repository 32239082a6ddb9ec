// Every registered op: one case whose inferred outputs are checked, one that must be rejected.
// A final test fails when an op is registered without cases here.
#include <gtest/gtest.h>

#include "ge/es/es_ops.h"

#include <functional>
#include <set>

#include "ge/es/graph_builder.h"
#include "ge/ops/op_plugin.h"
#include "ge/ops/op_registry.h"

#include "op_cases.h"

namespace ge {
namespace {

using namespace op_cases;  // NOLINT(google-build-using-namespace): the cases' vocabulary

std::vector<OpCase> Cases() {
  std::vector<OpCase> cases = MathAndShapeCases();
  for (OpCase& c : NnAndOtherCases()) cases.push_back(std::move(c));
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

namespace ge {
namespace {

// Sizes beyond what int64 offsets can address are refused when inferred, naming the node, so
// every later size computation may multiply freely (found by the model-file fuzzer: a reshape to
// a huge target overflowed in InferShape).
TEST(OpRegistryTest, UnaddressableShapesAreClearErrors) {
  for (const std::vector<int64_t>& target :
       {std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40, -1}, std::vector<int64_t>{int64_t{1} << 62, 4}}) {
    es::GraphBuilder b("huge");
    auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
    auto shape = b.CreateConst(Tensor::FromVector(DataType::kInt64, {static_cast<int64_t>(target.size())}, target));
    b.SetOutputs({es::BroadcastTo(x, shape)});
    auto graph = b.Build();
    ASSERT_FALSE(graph.ok());
    EXPECT_TRUE(graph.status().message().find("BroadcastTo") != std::string::npos) << graph.status().ToString();
  }
  es::GraphBuilder b("huge_reshape");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  const std::vector<int64_t> target = {int64_t{1} << 40, int64_t{1} << 40, -1};
  auto shape = b.CreateConst(Tensor::FromVector(DataType::kInt64, {3}, target));
  b.SetOutputs({es::Reshape(x, shape)});
  auto graph = b.Build();
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("more elements than int64 can count"), std::string::npos)
      << graph.status().ToString();
}

}  // namespace
}  // namespace ge
