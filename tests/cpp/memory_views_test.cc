// Zero-copy views: reshapes of arena values, inputs and constants read their source's bytes (no
// task); a view that is a graph output, or of a value updated in place, stays a copy.
#include <gtest/gtest.h>

#include <cmath>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/ir/annotations.h"
#include "ge/session.h"

namespace ge {
namespace {

class MemoryViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }
  // Compiles and runs; returns the output values and fills `views` / `tasks`.
  // Constant folding off: it would fold the reshape of a constant away before memory sees it.
  std::vector<std::vector<float>> Run(std::unique_ptr<Graph> graph, std::vector<std::vector<float>> inputs, int* views,
                                      int* tasks) {
    Session s(Options{{"ge.oo.constantFolding", "false"}});
    std::vector<Tensor> in;
    const auto data_nodes = graph->DataNodes();
    for (size_t i = 0; i < inputs.size(); ++i) in.emplace_back(data_nodes[i]->output_desc(0), inputs[i].data(), nullptr);
    EXPECT_TRUE(s.AddGraph(1, std::move(graph)).ok());
    Status st = s.CompileGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto summary = *s.GetCompiledGraphSummary(1);
    *views = static_cast<int>(summary.view_values);
    *tasks = static_cast<int>(summary.task_num);
    std::vector<Tensor> out;
    st = s.RunGraph(1, in, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<std::vector<float>> values;
    for (const Tensor& t : out) values.emplace_back(t.data_as<float>(), t.data_as<float>() + t.desc().NumElements());
    return values;
  }
};

TEST_F(MemoryViewsTest, ReshapesOfArenaInputAndConstantValuesAreViews) {
  es::GraphBuilder b("views");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto c = b.CreateConst(Tensor::FromVector(DataType::kFloat, {6}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto of_input = es::Reshape(x, b.CreateVector({6}));                 // view of the caller's tensor
  auto of_const = es::Reshape(c, b.CreateVector({3, 2}));              // view of the model's constant
  auto hidden = es::Relu(of_input);                                     // arena
  auto of_arena = es::Reshape(hidden, b.CreateVector({3, 2}));         // view of an arena value
  b.SetOutputs({es::Add(of_arena, of_const)});
  int views = 0, tasks = 0;
  auto out = Run(std::move(b.Build()).value(), {{-1, 2, -3, 4, -5, 6}}, &views, &tasks);
  EXPECT_EQ(views, 3);
  EXPECT_EQ(tasks, 2);  // Relu and Add only
  EXPECT_EQ(out[0], (std::vector<float>{1, 4, 3, 8, 5, 12}));
}

TEST_F(MemoryViewsTest, GraphOutputsAndUpdatedValuesStayCopies) {
  es::GraphBuilder b("copies");
  auto cache = b.CreateInput(0, DataType::kFloat, {4, 2});
  auto pos = b.CreateInput(1, DataType::kInt64, {1});
  auto row = b.CreateInput(2, DataType::kFloat, {1, 2});
  auto before = es::Reshape(cache, b.CreateVector({8}));  // reads the old cache: must be a copy
  auto updated = es::InplaceIndexCopy(cache, pos, row, 0);
  auto flat_row = es::Reshape(es::Neg(row), b.CreateVector({2}));  // a graph output: its own memory
  b.SetOutputs({es::ReduceSum(before, b.CreateVector({}), false), flat_row, es::ReduceSum(updated, b.CreateVector({}), false)});
  auto graph = std::move(b.Build()).value();
  Session s;
  std::vector<float> cache_data(8, 1.0f), row_data = {5, 7};
  std::vector<int64_t> pos_data = {0};
  ASSERT_TRUE(s.AddGraph(1, std::move(graph)).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->view_values, 0);
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {4, 2}), cache_data.data(), nullptr),
                             Tensor(TensorDesc(DataType::kInt64, {1}), pos_data.data(), nullptr),
                             Tensor(TensorDesc(DataType::kFloat, {1, 2}), row_data.data(), nullptr)}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].data_as<float>()[0], 8);   // the old cache
  EXPECT_FLOAT_EQ(out[1].data_as<float>()[1], -7);
  EXPECT_FLOAT_EQ(out[2].data_as<float>()[0], 18);  // the updated cache
}

TEST_F(MemoryViewsTest, ElementwiseOpsWriteOverInputsThatDieThere) {
  auto chain = [](bool keep_first) {
    es::GraphBuilder b("chain");
    auto x = b.CreateInput(0, DataType::kFloat, {256});
    auto a = es::Exp(x);                 // arena
    auto c = es::Neg(es::Relu(a));       // Relu over a, Neg over that: one buffer
    auto out = es::Add(c, keep_first ? a : c);  // with keep_first, `a` is read after the Relu: no reuse of it
    b.SetOutputs({out});
    return std::move(b.Build()).value();
  };
  int views = 0, tasks = 0;
  Session s;
  ASSERT_TRUE(s.AddGraph(1, chain(false)).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  auto summary = *s.GetCompiledGraphSummary(1);
  EXPECT_EQ(summary.inplace_values, 2);                 // Relu over Exp's output, Neg over Relu's
  EXPECT_EQ(summary.feature_memory_size, 1024);         // one 256-float buffer for the whole chain
  Session t;
  ASSERT_TRUE(t.AddGraph(1, chain(true)).ok());
  ASSERT_TRUE(t.CompileGraph(1).ok());
  EXPECT_EQ(t.GetCompiledGraphSummary(1)->inplace_values, 1);  // only Neg over Relu's output
  std::vector<float> data(256);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 9) - 4.0f;
  auto out = Run(chain(true), {data}, &views, &tasks);
  for (size_t i = 0; i < data.size(); ++i) {
    const float a = std::exp(data[i]);
    EXPECT_FLOAT_EQ(out[0][i], -std::max(a, 0.0f) + a);
  }
}

}  // namespace
}  // namespace ge
