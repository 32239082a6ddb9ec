// Execution orders: every strategy is topological (data and control edges), and they differ
// where they should (depth first finishes a branch before starting the next).
#include <gtest/gtest.h>

#include <map>

#include "ge/compiler/schedule.h"
#include "ge/es/es_ops.h"

namespace ge {
namespace {

// Two independent branches Relu -> Exp and Neg -> Abs joined by an Add (made in that order);
// optionally a control edge Neg -> Exp.
std::unique_ptr<Graph> TwoBranches(bool control_edge) {
  es::GraphBuilder b("branches");
  auto x = b.CreateInput(0, DataType::kFloat, {4});
  auto relu = es::Relu(x);
  auto neg = es::Neg(x);
  auto exp = es::Exp(relu);
  auto abs = es::Abs(neg);
  b.SetOutputs({es::Add(exp, abs)});
  auto graph = std::move(b.Build()).value();
  if (control_edge) graph->AddControlEdge(neg.value().node, exp.value().node);
  return graph;
}

std::map<std::string, size_t> Positions(const std::vector<Node*>& order) {
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]->type()] = i;
  return pos;
}

TEST(ScheduleTest, EveryStrategyIsTopological) {
  auto graph = TwoBranches(/*control_edge=*/true);
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
  auto graph = TwoBranches(/*control_edge=*/false);
  auto bfs = Positions(*ScheduleNodes(*graph, TopoStrategy::kBFS));
  auto dfs = Positions(*ScheduleNodes(*graph, TopoStrategy::kDFS));
  auto rdfs = Positions(*ScheduleNodes(*graph, TopoStrategy::kRDFS));
  EXPECT_LT(bfs["Neg"], bfs["Exp"]);       // both first ops before either second op
  EXPECT_EQ(dfs["Relu"] + 1, dfs["Exp"]);  // the Relu branch runs to its end first
  EXPECT_EQ(dfs["Exp"] + 1, dfs["Neg"]);
  EXPECT_EQ(rdfs["Relu"] + 1, rdfs["Exp"]);  // each value made just before it is needed
  EXPECT_EQ(rdfs["Neg"] + 1, rdfs["Abs"]);
}

TEST(ScheduleTest, LaterInstancesTakeTheFirstInstancesOrderOnlyUnderMemoryAware) {
  const std::string key = option::kTopoSortingMode;
  // Unset or MemoryAware: the order the first instance kept; other options pass through.
  const Options unset{{"ge.other", "x"}};
  EXPECT_EQ(OptionsForLaterInstance(unset, TopoStrategy::kBFS).at(key), "BFS");
  EXPECT_EQ(OptionsForLaterInstance(unset, TopoStrategy::kBFS).at("ge.other"), "x");
  EXPECT_EQ(OptionsForLaterInstance({{key, "MemoryAware"}}, TopoStrategy::kRDFS).at(key), "RDFS");
  // A strategy the user named is used as it is.
  EXPECT_EQ(OptionsForLaterInstance({{key, "DFS"}}, TopoStrategy::kBFS).at(key), "DFS");
  EXPECT_EQ(OptionsForLaterInstance({{key, "2"}}, TopoStrategy::kBFS).at(key), "2");
}

}  // namespace
}  // namespace ge
