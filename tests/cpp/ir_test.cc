// IR: graph edits keep user lists consistent; topological order; verification; logging levels.
#include <gtest/gtest.h>

#include <cmath>

#include "ge/base/logging.h"
#include "ge/ir/graph.h"
#include "ge/ir/tensor.h"

namespace ge {
namespace {

TEST(GraphTest, UserListsFollowEdits) {
  Graph g("g");
  Node* a = g.AddNode("Data", "a", {}, 1);
  Node* b = g.AddNode("Data", "b", {}, 1);
  Node* add = g.AddNode("Add", "add", {a->output(0), a->output(0)}, 1);
  ASSERT_EQ(a->users(0).size(), 2u);
  g.SetInput(add, 1, b->output(0));
  EXPECT_EQ(a->users(0).size(), 1u);
  EXPECT_EQ(b->users(0).size(), 1u);
  g.ReplaceAllUsesWith(a->output(0), b->output(0));
  EXPECT_TRUE(a->users(0).empty());
  EXPECT_EQ(b->users(0).size(), 2u);
  EXPECT_EQ(add->input(0), b->output(0));
  EXPECT_TRUE(g.RemoveNode(a).ok());
  EXPECT_EQ(g.FindNode("a"), nullptr);
  EXPECT_FALSE(g.RemoveNode(b).ok()) << "b still has a user";
}

TEST(GraphTest, NamesAreMadeUnique) {
  Graph g;
  Node* n1 = g.AddNode("Relu", "r", {}, 1);
  Node* n2 = g.AddNode("Relu", "r", {}, 1);
  EXPECT_EQ(n1->name(), "r");
  EXPECT_NE(n2->name(), "r");
  EXPECT_EQ(g.FindNode(n2->name()), n2);
}

TEST(GraphTest, TopologicalOrderRespectsDataAndControlEdges) {
  Graph g;
  Node* x = g.AddNode("Data", "x", {}, 1);
  x->SetAttr("index", int64_t{0});
  Node* late = g.AddNode("Relu", "late", {x->output(0)}, 1);
  Node* early = g.AddNode("Relu", "early", {x->output(0)}, 1);
  g.AddControlEdge(early, late);  // forces early before late despite creation order
  Node* out = g.AddNode("NetOutput", "out", {late->output(0), early->output(0)}, 0);
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok());
  auto pos = [&](Node* n) { return std::find(order->begin(), order->end(), n) - order->begin(); };
  EXPECT_LT(pos(x), pos(early));
  EXPECT_LT(pos(early), pos(late));
  EXPECT_EQ(pos(out), 3);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(GraphTest, VerifyRejectsCyclesAndMissingNetOutput) {
  Graph g;
  Node* a = g.AddNode("Relu", "a", {}, 1);
  Node* b = g.AddNode("Relu", "b", {a->output(0)}, 1);
  g.AppendInput(a, b->output(0));
  Status no_output = g.Verify();
  EXPECT_FALSE(no_output.ok());
  EXPECT_NE(no_output.message().find("NetOutput"), std::string::npos);
  g.AddNode("NetOutput", "out", {b->output(0)}, 0);
  Status cycle = g.Verify();
  EXPECT_FALSE(cycle.ok());
  EXPECT_NE(cycle.message().find("cycle"), std::string::npos);
}

TEST(GraphTest, VerifyRejectsGapsInDataIndices) {
  Graph g;
  Node* d = g.AddNode("Data", "d", {}, 1);
  d->SetAttr("index", int64_t{1});
  g.AddNode("NetOutput", "out", {d->output(0)}, 0);
  EXPECT_FALSE(g.Verify().ok());
}

TEST(TensorDescTest, SizesAndNames) {
  TensorDesc d(DataType::kFloat16, {2, 3, 4});
  EXPECT_EQ(d.NumElements(), 24);
  EXPECT_EQ(d.ByteSize(), 48);
  EXPECT_EQ(d.ToString(), "DT_FLOAT16[2,3,4]");
  EXPECT_EQ(TensorDesc(DataType::kFloat, {2, -1}).ByteSize(), -1);
  EXPECT_EQ(*ParseDataType("DT_BF16"), DataType::kBFloat16);
  EXPECT_FALSE(ParseDataType("DT_NOPE").ok());
}

TEST(TensorTest, SizeElementReadsIntegersOfEveryDtypeThatHoldsThem) {
  EXPECT_EQ(*Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {7, -3}).SizeElement(1), -3);
  EXPECT_EQ(*Tensor::FromVector<int32_t>(DataType::kInt32, {1}, {12}).SizeElement(0), 12);
  const Tensor floats = Tensor::FromVector<float>(DataType::kFloat, {4}, {8.f, 2.5f, NAN, 1e16f});
  EXPECT_EQ(*floats.SizeElement(0), 8);
  EXPECT_FALSE(floats.SizeElement(1).ok());  // not an integer
  EXPECT_FALSE(floats.SizeElement(2).ok());
  EXPECT_FALSE(floats.SizeElement(3).ok());  // beyond what a double holds exactly
  EXPECT_EQ(*Tensor::FromVector<double>(DataType::kDouble, {1}, {-64.0}).SizeElement(0), -64);
  Expected<int64_t> flag = Tensor::FromVector<uint8_t>(DataType::kBool, {1}, {1}).SizeElement(0);
  ASSERT_FALSE(flag.ok());
  EXPECT_NE(flag.status().message().find("holds no sizes"), std::string::npos);
}

TEST(StatusTest, ContextPrefixesMessages) {
  Status s = InvalidArgument("bad shape {}", "[2]");
  EXPECT_EQ(s.WithContext("node 'x'").message(), "node 'x': bad shape [2]");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Status().ok());
  Expected<int> e = NotFound("nope");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ge

namespace ge {
namespace {

TEST(LoggingTest, LevelsParseFromNumbersAndNames) {
  EXPECT_EQ(ParseLogLevel("0", LogLevel::kError), LogLevel::kDebug);
  EXPECT_EQ(ParseLogLevel("INFO", LogLevel::kError), LogLevel::kInfo);
  EXPECT_EQ(ParseLogLevel("3", LogLevel::kDebug), LogLevel::kError);
  EXPECT_EQ(ParseLogLevel("loud", LogLevel::kWarning), LogLevel::kWarning);
  const LogLevel before = CurrentLogLevel();
  SetLogLevel(LogLevel::kError);
  EXPECT_FALSE(LogEnabled(LogLevel::kWarning));
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  SetLogLevel(before);
}

}  // namespace
}  // namespace ge
