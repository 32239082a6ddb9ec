// GE's copy-insertion rules for collectives that work in their input's memory: one case per
// rule, plus the case no rule covers, where the compiled all-reduce runs in its input's bytes.
#include <gtest/gtest.h>

#include "devices/cpu/cpu_device.h"
#include "ge/compiler/collective_copies.h"
#include "ge/compiler/graph_compiler.h"
#include "ge/compiler/prepare.h"
#include "ge/es/es_ops.h"
#include "ge/session.h"

namespace ge {
namespace {

using Build = std::function<void(es::GraphBuilder&, es::EsTensor x)>;

std::unique_ptr<Graph> GraphWith(const Build& build) {
  es::GraphBuilder b("copies");
  build(b, b.CreateInput(0, DataType::kFloat, {2, 4}));
  auto graph = std::move(b.Build()).value();
  EXPECT_TRUE(PrepareGraph(*graph).ok());
  return graph;
}

// The rules that asked for a copy, and checks each copy feeds its collective.
std::vector<std::string> RulesFor(Graph& graph) {
  auto copies = InsertCollectiveCopies(graph);
  EXPECT_TRUE(copies.ok()) << copies.status().ToString();
  std::vector<std::string> rules;
  for (const CollectiveCopy& c : *copies) {
    rules.push_back(c.rule);
    const Node* collective = graph.FindNode(c.collective);
    EXPECT_EQ(collective->input(0).node->type(), "TensorMove") << c.collective;
  }
  EXPECT_TRUE(graph.Verify().ok());
  return rules;
}

using Rules = std::vector<std::string>;

TEST(CollectiveCopiesTest, AGraphInputIsCopiedAlsoThroughAView) {
  auto direct =
      GraphWith([](es::GraphBuilder& b, es::EsTensor x) { b.SetOutputs({es::HcomAllReduce(x, "g", "sum")}); });
  EXPECT_EQ(RulesFor(*direct), Rules{"graph_input"});
  auto viewed = GraphWith([](es::GraphBuilder& b, es::EsTensor x) {
    b.SetOutputs({es::HcomBroadcast(es::Reshape(x, b.CreateVector({8})), "g", 0)});
  });
  EXPECT_EQ(RulesFor(*viewed), Rules{"graph_input"});
}

TEST(CollectiveCopiesTest, AConstantIsCopied) {
  auto graph = GraphWith([](es::GraphBuilder& b, es::EsTensor) {
    auto w = b.CreateConst(Tensor::FromVector<float>(DataType::kFloat, {2}, {1.0f, 2.0f}));
    b.SetOutputs({es::HcomAllReduce(w, "g", "sum")});
  });
  EXPECT_EQ(RulesFor(*graph), Rules{"constant"});
}

TEST(CollectiveCopiesTest, AValueAnotherNodeOrAnOutputReadsIsCopied) {
  auto read_later = GraphWith([](es::GraphBuilder& b, es::EsTensor x) {
    auto h = es::Relu(x);
    b.SetOutputs({es::Add(es::HcomAllReduce(h, "g", "sum"), h)});
  });
  EXPECT_EQ(RulesFor(*read_later), Rules{"other_reader"});
  auto returned = GraphWith([](es::GraphBuilder& b, es::EsTensor x) {
    auto h = es::Relu(x);
    b.SetOutputs({es::HcomAllReduce(h, "g", "sum"), h});
  });
  EXPECT_EQ(RulesFor(*returned), Rules{"other_reader"});
  auto view_read = GraphWith([](es::GraphBuilder& b, es::EsTensor x) {  // the viewed value is read
    auto h = es::Relu(x);
    b.SetOutputs({es::HcomAllReduce(es::Reshape(h, b.CreateVector({8})), "g", "sum"), es::Neg(h)});
  });
  EXPECT_EQ(RulesFor(*view_read), Rules{"other_reader"});
}

TEST(CollectiveCopiesTest, AValueUpdatedInPlaceIsCopied) {
  auto graph = GraphWith([](es::GraphBuilder& b, es::EsTensor x) {
    auto h = es::Relu(x);
    auto reduced = es::HcomAllReduce(h, "g", "sum");
    auto updated = es::Assign(h, es::Neg(x));
    b.SetOutputs({reduced, updated});
  });
  EXPECT_EQ(RulesFor(*graph), Rules{"in_place"});
}

TEST(CollectiveCopiesTest, APrivateDyingValueIsReducedInItsOwnBytes) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  auto device = *DeviceRegistry::Get("cpu");
  auto graph = GraphWith([](es::GraphBuilder& b, es::EsTensor x) {
    auto reduced = es::HcomAllReduce(es::MatMulV2(x, x, {}, {}, false, true), "g", "sum");
    b.SetOutputs({es::Relu(reduced)});
  });
  auto compiled = CompileGraph(*graph, *device, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_TRUE(compiled->collective_copies.empty());
  const Model& m = *compiled->model;
  int found = 0;
  for (const TaskDef& task : m.tasks) {
    if (task.type != "HcomAllReduce") continue;
    ++found;
    const ValueInfo& in = m.values[static_cast<size_t>(task.inputs[0])];
    const ValueInfo& out = m.values[static_cast<size_t>(task.outputs[0])];
    EXPECT_EQ(in.placement, Placement::kArena);
    EXPECT_EQ(out.placement, Placement::kArena);
    EXPECT_EQ(in.offset, out.offset) << "the all-reduce did not run in its input's bytes";
  }
  EXPECT_EQ(found, 1);
}

}  // namespace
}  // namespace ge
