// The kernel builder builds each distinct op once: lowerings that spell the same terms share
// them (a softmax and the log-sum-exp of the same row: one max, one exp, one sum).
#include <gtest/gtest.h>

#include <cmath>

#include "ge/autofuse/fusible_ops.h"
#include "ge/autofuse/kernel_builder.h"
#include "ge/es/es_ops.h"

namespace ge::autofuse {
namespace {

int Count(const KernelIR& k, OpKind kind, KFn fn) {
  int n = 0;
  for (const KOp& op : k.ops) n += op.kind == kind && op.fn == fn;
  return n;
}

const Node* Find(const Graph& g, const std::string& type) {
  for (const Node* n : g.nodes())
    if (n->type() == type) return n;
  return nullptr;
}

TEST(KernelBuilderTest, ASoftmaxAndTheLogSumExpOfItsRowShareTheirTerms) {
  es::GraphBuilder gb("softmax_lse");
  auto x = gb.CreateInput(0, DataType::kFloat, {3, 17});
  gb.SetOutputs({es::SoftmaxV2(x), es::ReduceLogSumExp(x, gb.CreateVector({-1}), false)});
  auto graph = std::move(gb.Build()).value();
  const Node* softmax = Find(*graph, "SoftmaxV2");
  const Node* lse = Find(*graph, "ReduceLogSumExp");
  ASSERT_NE(softmax, nullptr);
  ASSERT_NE(lse, nullptr);

  KernelBuilder b("k", {3, 17}, 1);
  auto load = b.External(softmax->input(0));
  ASSERT_TRUE(load.ok());
  ASSERT_TRUE(LowerNode(b, softmax, {*load}).ok());
  ASSERT_TRUE(LowerNode(b, lse, {*load}).ok());
  EXPECT_EQ(Count(b.ir(), OpKind::kUnary, KFn::kExp), 1);
  EXPECT_EQ(Count(b.ir(), OpKind::kReduce, KFn::kMax), 1);
  EXPECT_EQ(Count(b.ir(), OpKind::kReduce, KFn::kSum), 1);
}

TEST(KernelBuilderTest, EqualOpsAreOneOpAndConstantsKeepTheirSign) {
  es::GraphBuilder gb("x");
  auto x = gb.CreateInput(0, DataType::kFloat, {4});
  gb.SetOutputs({es::Neg(x)});
  auto graph = std::move(gb.Build()).value();
  KernelBuilder b("k", {4}, 0);
  const int in = *b.External(Find(*graph, "Neg")->input(0));
  EXPECT_EQ(b.Binary(KFn::kMul, in, b.Const(2.0)), b.Binary(KFn::kMul, in, b.Const(2.0)));
  EXPECT_NE(b.Binary(KFn::kMul, in, b.Const(2.0)), b.Binary(KFn::kMul, b.Const(2.0), in));
  EXPECT_NE(b.Const(0.0), b.Const(-0.0));
  EXPECT_NE(b.Const(1.0), b.Const(1.0, ScalarType::kInt64));
  EXPECT_NE(b.Unary(KFn::kExp, in), b.Unary(KFn::kLog, in));
}

}  // namespace
}  // namespace ge::autofuse
