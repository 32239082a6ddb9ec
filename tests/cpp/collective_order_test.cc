// Collectives keep their program order and are never optimized away: every rank must run the
// same collectives in the same order (ranks that disagreed would each wait for the other).
#include <gtest/gtest.h>

#include "ge/compiler/prepare.h"
#include "ge/es/es_ops.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/passes/passes.h"

namespace ge {
namespace {

std::unique_ptr<Graph> TwoIndependentCollectives() {
  es::GraphBuilder b("collectives");
  auto x = b.CreateInput(0, DataType::kFloat, {4});
  auto first = es::HcomAllReduce(x, "0", "sum");
  auto second = es::HcomBroadcast(x, "0", 1);
  auto unused = es::HcomAllGather(x, "0", 2);  // its result is dropped: it must still run
  (void)unused;
  b.SetOutputs({second, first});  // outputs listed in the other order
  return std::move(b.Build()).value();
}

TEST(CollectiveOrderTest, CollectivesAreChainedInProgramOrderAndNeverRemoved) {
  auto graph = TwoIndependentCollectives();
  ASSERT_TRUE(PrepareGraph(*graph).ok());
  std::vector<Node*> collectives;
  for (Node* n : graph->nodes())
    if (n->type().rfind("Hcom", 0) == 0) collectives.push_back(n);
  ASSERT_EQ(collectives.size(), 3u);
  for (size_t i = 0; i + 1 < collectives.size(); ++i) {
    const auto& after = collectives[i]->control_outputs();
    EXPECT_NE(std::find(after.begin(), after.end(), collectives[i + 1]), after.end()) << collectives[i]->ToString();
    EXPECT_TRUE(HasSideEffects(collectives[i]));
  }
  bool changed = false;
  ASSERT_TRUE(CreateDeadCodeEliminationPass()->Run(*graph, {}, &changed).ok());
  EXPECT_NE(graph->FindNode(collectives[2]->name()), nullptr) << "the unused all-gather was removed";
}

}  // namespace
}  // namespace ge
