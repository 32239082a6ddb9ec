// Optimizer passes that clean up and evaluate: each builds a graph that needs the pass, runs it,
// checks what the graph became and that it computes the same numbers as the unoptimized graph
// on the CPU device; and a case where the pass must not fire. (Folds and rewrites:
// rewrite_passes_test.cc.)
#include "pass_test_util.h"

namespace ge {
namespace {

using namespace pass_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

TEST_F(PassTest, DeadCodeEliminationRemovesWhatNoOutputNeeds) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
        es::Exp(es::Relu(x));  // nobody reads it
        b.SetOutputs({es::Neg(x)});
      },
      CreateDeadCodeEliminationPass(), true);
  EXPECT_EQ(Count(*g, "Relu") + Count(*g, "Exp"), 0);
  EXPECT_EQ(Count(*g, "Neg"), 1);
}

TEST_F(PassTest, DeadCodeEliminationKeepsInPlaceUpdates) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto cache = b.CreateInput(0, DataType::kFloat, {4, 2});
        auto pos = b.CreateInput(1, DataType::kInt64, {1});
        auto row = b.CreateInput(2, DataType::kFloat, {1, 2});
        es::InplaceIndexCopy(cache, pos, row, 0);  // output unused: the write is the point
        b.SetOutputs({es::Neg(row)});
      },
      CreateDeadCodeEliminationPass(), false);
  EXPECT_EQ(Count(*g, "InplaceIndexCopy"), 1);
}

TEST_F(PassTest, ConstantMergeJoinsEqualConstants) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {3});
        auto c1 = b.CreateConst(Tensor::FromVector(DataType::kFloat, {3}, std::vector<float>{1, 2, 3}));
        auto c2 = b.CreateConst(Tensor::FromVector(DataType::kFloat, {3}, std::vector<float>{1, 2, 3}));
        auto c3 = b.CreateConst(Tensor::FromVector(DataType::kFloat, {3}, std::vector<float>{1, 2, 4}));  // differs
        b.SetOutputs({es::Mul(x, c1) + es::Add(x, c2) + c3});
      },
      CreateConstantMergePass(), true);
  EXPECT_EQ(Count(*g, "Const"), 2);
}

TEST_F(PassTest, ConstantMergeKeepsConstantsThatDifferInTypeOrShape) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 2});
        auto flat = b.CreateConst(Tensor::FromVector(DataType::kFloat, {4}, std::vector<float>{1, 2, 3, 4}));
        auto square = b.CreateConst(Tensor::FromVector(DataType::kFloat, {2, 2}, std::vector<float>{1, 2, 3, 4}));
        auto ints = b.CreateConst(Tensor::FromVector(DataType::kInt32, {2, 2}, std::vector<int32_t>{1, 2, 3, 4}));
        b.SetOutputs(
            {es::Mul(x, es::Reshape(flat, b.CreateVector({2, 2}))) + square + es::Cast(ints, DataType::kFloat)});
      },
      CreateConstantMergePass(), false);
  EXPECT_EQ(Count(*g, "Const"), 4);
}

TEST_F(PassTest, InferShapeAcceptsConsistentGraphsAndNamesABadDesc) {
  RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
        b.SetOutputs({es::Relu(x)});
      },
      CreateInferShapePass(), false);
  es::GraphBuilder b("bad");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto y = es::Relu(x);
  b.SetOutputs({es::Neg(y)});
  auto graph = std::move(b.Build()).value();
  y.value().node->output_desc(0).shape = {3, 2};  // what a buggy pass might leave behind
  bool changed = false;
  Status st = CreateInferShapePass()->Run(*graph, PassContext{}, &changed);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Relu"), std::string::npos) << st.message();
}

TEST_F(PassTest, CommonSubexpressionEliminationMergesEqualNodes) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
        b.SetOutputs({es::Mul(es::Sigmoid(x), es::Sigmoid(x)) + es::Tanh(x)});
      },
      CreateCommonSubexpressionEliminationPass(), true);
  EXPECT_EQ(Count(*g, "Sigmoid"), 1);
}

// Every dtype a graph carries is compared: int32/int64 sums and bool predicates exactly, f16 and
// bf16 within their rounding (the inputs are random values of each dtype).
TEST_F(PassTest, CommonSubexpressionEliminationOnEveryDtype) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto i32 = b.CreateInput(0, DataType::kInt32, {3, 4});
        auto i64 = b.CreateInput(1, DataType::kInt64, {4});
        auto f16 = b.CreateInput(2, DataType::kFloat16, {3, 4});
        auto bf16 = b.CreateInput(3, DataType::kBFloat16, {3, 4});
        auto mask = b.CreateInput(4, DataType::kBool, {3, 4});
        auto sum = es::Add(i32, i32) + es::Add(i32, i32);
        auto wide = es::Mul(i64, i64) - es::Mul(i64, i64);
        auto greater = es::LogicalAnd(es::Greater(f16, es::Neg(f16)), es::Greater(f16, es::Neg(f16)));
        b.SetOutputs(
            {sum, wide, es::LogicalOr(greater, mask), es::Relu(bf16) * es::Relu(bf16), es::Exp(f16) + es::Exp(f16)});
      },
      CreateCommonSubexpressionEliminationPass(), true);
  EXPECT_EQ(Count(*g, "Add"), 3);  // i32 + i32 once, the sum of the two, the sum of the exps
  EXPECT_EQ(Count(*g, "Relu"), 1);
  EXPECT_EQ(Count(*g, "Exp"), 1);
}

TEST_F(PassTest, CommonSubexpressionEliminationKeepsDistinctGraphOutputs) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
        b.SetOutputs(
            {es::Sigmoid(x), es::Sigmoid(x), es::Sigmoid(es::Neg(x))});  // two outputs must not become one tensor
      },
      CreateCommonSubexpressionEliminationPass(), false);
  EXPECT_EQ(Count(*g, "Sigmoid"), 3);
}

TEST_F(PassTest, NoOpEliminationRemovesExactNoOps) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 3, 4});
        auto h = es::Identity(es::Relu(x));
        h = es::Reshape(h, b.CreateVector({2, 3, 4}));                                        // same shape
        h = es::Reshape(es::Reshape(h, b.CreateVector({6, 4})), b.CreateVector({4, 6}));      // chain
        h = es::Transpose(es::Transpose(h, b.CreateVector({1, 0})), b.CreateVector({1, 0}));  // cancels
        h = h * b.CreateScalar(1, DataType::kFloat);
        h = es::Add(h, b.CreateScalar(-0.0, DataType::kFloat));
        auto half = es::Cast(es::Cast(es::Cast(h, DataType::kFloat16), DataType::kFloat),
                             DataType::kFloat16);  // f16 -> f32 -> f16
        b.SetOutputs({es::Neg(h), es::Neg(half)});
      },
      CreateNoOpEliminationPass(), true);
  EXPECT_EQ(Count(*g, "Identity"), 0);
  EXPECT_EQ(Count(*g, "Reshape"), 1);
  EXPECT_EQ(Count(*g, "Transpose"), 0);
  EXPECT_EQ(Count(*g, "Mul") + Count(*g, "Add"), 0);
  EXPECT_EQ(Count(*g, "Cast"), 1);
}

TEST_F(PassTest, NoOpEliminationKeepsInexactOnes) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
        auto rounded = es::Cast(es::Cast(x, DataType::kFloat16), DataType::kFloat);  // f32 -> f16 -> f32 rounds
        auto plus_zero = es::Add(x, b.CreateScalar(0.0, DataType::kFloat));          // -0.0 + 0.0 is +0.0
        auto shuffled = es::Transpose(es::Transpose(x, b.CreateVector({1, 0})), b.CreateVector({1, 0}));
        b.SetOutputs({rounded, plus_zero, es::Identity(x), shuffled});  // outputs never alias inputs
      },
      CreateNoOpEliminationPass(), false);
  EXPECT_EQ(Count(*g, "Cast"), 2);
  EXPECT_EQ(Count(*g, "Add"), 1);
  EXPECT_EQ(Count(*g, "Identity"), 1);
}

TEST_F(PassTest, NoOpEliminationBypassesOutputsOnlyOverPrivateComputedValues) {
  // A weight gradient as AOT autograd returns it: t(t(mm)). The product becomes the output; an
  // output that would alias an input, a constant or another output keeps its own node.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 3});
        auto y = b.CreateInput(1, DataType::kFloat, {4, 5});
        auto twice = [&](const es::EsTensor& t) {
          return es::Transpose(es::Transpose(t, b.CreateVector({1, 0})), b.CreateVector({1, 0}));
        };
        auto grad = es::MatMulV2(x, y, {}, {}, /*transpose_x1=*/true);
        auto shared = es::Relu(y);
        b.SetOutputs({twice(grad), twice(x), shared, es::Identity(shared)});
      },
      CreateNoOpEliminationPass(), true);
  EXPECT_EQ(Count(*g, "Transpose"), 2);  // t(t(x)) stays: the output must not be the input itself
  EXPECT_EQ(Count(*g, "Identity"), 1);
  EXPECT_EQ(g->NetOutputNode()->input(0).node->type(), "MatMulV2");
}

void ConstantChain(es::GraphBuilder& b) {
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto c = b.CreateConst(Tensor::FromVector(DataType::kInt64, {3}, std::vector<int64_t>{1, -2, 3}));
  auto scale = es::Exp(es::Neg(es::Cast(c, DataType::kFloat)));  // all constant: folds to one Const
  b.SetOutputs({es::Mul(x, scale), es::Relu(x)});
}

TEST_F(PassTest, ConstantFoldingEvaluatesConstantSubgraphsWithTheDeviceKernels) {
  auto g = RunPass(ConstantChain, CreateConstantFoldingPass(), true, WithCpuDevice());
  EXPECT_EQ(Count(*g, "Cast") + Count(*g, "Neg") + Count(*g, "Exp"), 0);
  EXPECT_EQ(Count(*g, "Const"), 1);
  EXPECT_EQ(Count(*g, "Mul"), 1);
}

TEST_F(PassTest, ConstantFoldingRespectsTheSizeLimitAndNeedsADevice) {
  auto g = RunPass(ConstantChain, CreateConstantFoldingPass(), false, WithCpuDevice(/*limit=*/4));
  EXPECT_EQ(Count(*g, "Exp"), 1);  // 12 output bytes > 4
  auto h = RunPass(ConstantChain, CreateConstantFoldingPass(), false, PassContext{});
  EXPECT_EQ(Count(*h, "Cast"), 1);
}

// A kernel that asks for workspaces (MaxPoolV3: channels-last copies and argmax indices) must
// fold too: folding runs the back end the compile runs, workspaces planned.
TEST_F(PassTest, ConstantFoldingPlansKernelWorkspaces) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {1, 2, 2, 3});
        std::vector<float> image(1 * 2 * 4 * 6);
        for (size_t i = 0; i < image.size(); ++i) image[i] = std::sin(static_cast<float>(i));
        auto c = b.CreateConst(Tensor::FromVector(DataType::kFloat, {1, 2, 4, 6}, image));
        auto pooled = es::MaxPoolV3(c, {1, 1, 2, 2}, {1, 1, 2, 2});  // [1, 2, 2, 3], all constant
        b.SetOutputs({es::Add(x, pooled)});
      },
      CreateConstantFoldingPass(), true, WithCpuDevice());
  EXPECT_EQ(Count(*g, "MaxPoolV3"), 0);
  EXPECT_EQ(Count(*g, "Add"), 1);
}

}  // namespace
}  // namespace ge
