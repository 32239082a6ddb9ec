// Execution orders: every strategy is topological (data and control edges), and they differ
// where they should (depth first finishes a branch before starting the next).
#include <gtest/gtest.h>

#include <map>

#include "ge/compiler/schedule.h"
#include "ge/es/es_ops.h"

namespace ge {
namespace {

// Two independent branches a1 -> a2 and b1 -> b2 joined by an Add; a control edge b1 -> a2.
std::unique_ptr<Graph> TwoBranches() {
  es::GraphBuilder b("branches");
  auto x = b.CreateInput(0, DataType::kFloat, {4});
  auto a1 = es::Relu(x);
  auto b1 = es::Neg(x);
  auto a2 = es::Exp(a1);
  auto b2 = es::Abs(b1);
  b.SetOutputs({es::Add(a2, b2)});
  auto graph = std::move(b.Build()).value();
  graph->AddControlEdge(b1.value().node, a2.value().node);
  return graph;
}

std::map<std::string, size_t> Positions(const std::vector<Node*>& order) {
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]->type()] = i;
  return pos;
}

TEST(ScheduleTest, EveryStrategyIsTopological) {
  auto graph = TwoBranches();
  for (const char* name : {"BFS", "DFS", "RDFS", "StableRDFS"}) {
    auto strategy = ParseTopoStrategy(name);
    ASSERT_TRUE(strategy.ok());
    auto order = ScheduleNodes(*graph, *strategy);
    ASSERT_TRUE(order.ok()) << name;
    ASSERT_EQ(order->size(), static_cast<size_t>(graph->num_nodes()));
    std::map<const Node*, size_t> at;
    for (size_t i = 0; i < order->size(); ++i) at[(*order)[i]] = i;
    for (Node* n : *order) {
      for (Value v : n->inputs()) EXPECT_LT(at[v.node], at[n]) << name;
      for (Node* c : n->control_inputs()) EXPECT_LT(at[c], at[n]) << name;
    }
  }
  EXPECT_FALSE(ParseTopoStrategy("Random").ok());
  EXPECT_EQ(*ParseTopoStrategy(""), kDefaultTopoStrategy);
}

TEST(ScheduleTest, DepthFirstFinishesABranchBreadthFirstInterleaves) {
  es::GraphBuilder b("branches");
  auto x = b.CreateInput(0, DataType::kFloat, {4});
  auto relu = es::Relu(x);
  auto neg = es::Neg(x);
  auto exp = es::Exp(relu);
  auto abs = es::Abs(neg);
  b.SetOutputs({es::Add(exp, abs)});
  auto graph = std::move(b.Build()).value();
  auto bfs = Positions(*ScheduleNodes(*graph, TopoStrategy::kBFS));
  auto dfs = Positions(*ScheduleNodes(*graph, TopoStrategy::kDFS));
  auto rdfs = Positions(*ScheduleNodes(*graph, TopoStrategy::kRDFS));
  EXPECT_LT(bfs["Neg"], bfs["Exp"]);       // both first ops before either second op
  EXPECT_EQ(dfs["Relu"] + 1, dfs["Exp"]);  // the Relu branch runs to its end first
  EXPECT_EQ(dfs["Exp"] + 1, dfs["Neg"]);
  EXPECT_EQ(rdfs["Relu"] + 1, rdfs["Exp"]);  // each value made just before it is needed
  EXPECT_EQ(rdfs["Neg"] + 1, rdfs["Abs"]);
}

}  // namespace
}  // namespace ge
