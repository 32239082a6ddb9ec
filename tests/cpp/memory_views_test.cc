// Zero-copy views: reshapes, and slices/selects of one contiguous block, of arena values, inputs
// and constants read their source's bytes (no task); a graph output that reshapes a computed
// value has the value computed in the output's memory; a view of a value updated in place, or
// of a value that is itself a graph output, stays a copy.
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
    Session s(Options{{"ge.oo.constantFolding", "false"}, {option::kAutofuse, "false"}});
    std::vector<Tensor> in;
    const auto data_nodes = graph->DataNodes();
    for (size_t i = 0; i < inputs.size(); ++i)
      in.emplace_back(data_nodes[i]->output_desc(0), inputs[i].data(), nullptr);
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
  auto of_input = es::Reshape(x, b.CreateVector({6}));          // view of the caller's tensor
  auto of_const = es::Reshape(c, b.CreateVector({3, 2}));       // view of the model's constant
  auto hidden = es::Relu(of_input);                             // arena
  auto of_arena = es::Reshape(hidden, b.CreateVector({3, 2}));  // view of an arena value
  b.SetOutputs({es::Add(of_arena, of_const)});
  int views = 0, tasks = 0;
  auto out = Run(std::move(b.Build()).value(), {{-1, 2, -3, 4, -5, 6}}, &views, &tasks);
  EXPECT_EQ(views, 3);
  EXPECT_EQ(tasks, 2);  // Relu and Add only
  EXPECT_EQ(out[0], (std::vector<float>{1, 4, 3, 8, 5, 12}));
}

TEST_F(MemoryViewsTest, UpdatedValuesStayCopiesAndAnOutputReshapeIsAView) {
  es::GraphBuilder b("copies");
  auto cache = b.CreateInput(0, DataType::kFloat, {4, 2});
  auto pos = b.CreateInput(1, DataType::kInt64, {1});
  auto row = b.CreateInput(2, DataType::kFloat, {1, 2});
  auto before = es::Reshape(cache, b.CreateVector({8}));  // reads the old cache: must be a copy
  auto updated = es::InplaceIndexCopy(cache, pos, row, 0);
  auto flat_row = es::Reshape(es::Neg(row), b.CreateVector({2}));  // Neg computes into the output's memory
  b.SetOutputs(
      {es::ReduceSum(before, b.CreateVector({}), false), flat_row, es::ReduceSum(updated, b.CreateVector({}), false)});
  auto graph = std::move(b.Build()).value();
  Session s(Options{{option::kAutofuse, "false"}});  // these elementwise chains would fuse
  std::vector<float> cache_data(8, 1.0f), row_data = {5, 7};
  std::vector<int64_t> pos_data = {0};
  ASSERT_TRUE(s.AddGraph(1, std::move(graph)).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->view_values, 1);  // flat_row only
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1,
                         {Tensor(TensorDesc(DataType::kFloat, {4, 2}), cache_data.data(), nullptr),
                          Tensor(TensorDesc(DataType::kInt64, {1}), pos_data.data(), nullptr),
                          Tensor(TensorDesc(DataType::kFloat, {1, 2}), row_data.data(), nullptr)},
                         &out)
                  .ok());
  EXPECT_FLOAT_EQ(out[0].data_as<float>()[0], 8);  // the old cache
  EXPECT_FLOAT_EQ(out[1].data_as<float>()[1], -7);
  EXPECT_FLOAT_EQ(out[2].data_as<float>()[0], 18);  // the updated cache
}

TEST_F(MemoryViewsTest, AValueReshapedIntoAnOutputIsComputedInTheOutputsMemory) {
  es::GraphBuilder b("in_output");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto a = es::Neg(x);                                           // computed in output 0's memory
  auto flat = es::Reshape(a, b.CreateVector({6}));               // output 0: a view, no task
  auto relu = es::Relu(es::Reshape(a, b.CreateVector({3, 2})));  // reads output 0's memory through a view
  auto e = es::Exp(x);                                           // output 3 itself
  auto flat_e = es::Reshape(e, b.CreateVector({6}));             // two outputs may not share bytes: a copy
  b.SetOutputs({flat, relu, flat_e, e});
  Session s(Options{{option::kAutofuse, "false"}});
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->view_values, 2);
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->task_num, 4);  // Neg, Relu, Exp and the copy of e
  auto run = [&](std::vector<float> data) {
    std::vector<Tensor> out;
    EXPECT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {2, 3}), data.data(), nullptr)}, &out).ok());
    std::vector<std::vector<float>> values;
    for (const Tensor& t : out) values.emplace_back(t.data_as<float>(), t.data_as<float>() + t.desc().NumElements());
    return std::make_pair(out, values);
  };
  auto [first, first_values] = run({1, -2, 3, -4, 5, -6});
  auto [second, second_values] = run({-1, 0, 2, 0, 0, 0});  // each run writes into its own outputs
  EXPECT_EQ(first_values[0], (std::vector<float>{-1, 2, -3, 4, -5, 6}));
  EXPECT_EQ(first_values[1], (std::vector<float>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(std::vector<float>(first[0].data_as<float>(), first[0].data_as<float>() + 6), first_values[0]);
  EXPECT_EQ(second_values[0], (std::vector<float>{1, 0, -2, 0, 0, 0}));
  EXPECT_EQ(second_values[1], (std::vector<float>{1, 0, 0, 0, 0, 0}));
  EXPECT_FLOAT_EQ(second_values[2][2], std::exp(2.0f));
  EXPECT_EQ(second_values[2], second_values[3]);
  EXPECT_NE(second[2].data(), second[3].data());
}

TEST_F(MemoryViewsTest, ElementwiseOpsWriteOverInputsThatDieThere) {
  auto chain = [](bool keep_first) {
    es::GraphBuilder b("chain");
    auto x = b.CreateInput(0, DataType::kFloat, {256});
    auto a = es::Exp(x);                        // arena
    auto c = es::Neg(es::Relu(a));              // Relu over a, Neg over that: one buffer
    auto out = es::Add(c, keep_first ? a : c);  // with keep_first, `a` is read after the Relu: no reuse of it
    b.SetOutputs({out});
    return std::move(b.Build()).value();
  };
  int views = 0, tasks = 0;
  Session s(Options{{option::kAutofuse, "false"}});  // these elementwise chains would fuse
  ASSERT_TRUE(s.AddGraph(1, chain(false)).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  auto summary = *s.GetCompiledGraphSummary(1);
  EXPECT_EQ(summary.inplace_values, 2);          // Relu over Exp's output, Neg over Relu's
  EXPECT_EQ(summary.feature_memory_size, 1024);  // one 256-float buffer for the whole chain
  Session t(Options{{option::kAutofuse, "false"}});
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

TEST_F(MemoryViewsTest, SlicesOfOneContiguousBlockAreViewsAtTheirOffset) {
  es::GraphBuilder b("slices");
  auto x = b.CreateInput(0, DataType::kFloat, {4, 3});
  auto c = b.CreateConst(Tensor::FromVector(DataType::kFloat, {2, 3}, std::vector<float>{1, 2, 3, 10, 20, 30}));
  auto slice = [&](es::EsTensor t, int64_t begin, int64_t end, int64_t axis) {
    return es::StridedSliceV2(t, b.CreateVector({begin}), b.CreateVector({end}), b.CreateVector({axis}),
                              b.CreateVector({1}));
  };
  auto rows = slice(x, 1, 3, 0);  // view: x bytes 12..36
  auto cols = slice(x, 0, 2, 1);  // strided view (Neg takes strides)
  auto picked = es::GatherV2(x, b.CreateScalar(2, DataType::kInt64), b.CreateVector({0}));  // view: row 2
  auto const_row = slice(c, 1, 2, 0);                                                       // view into the constant
  auto hidden = es::Exp(x);
  auto hidden_rows = slice(hidden, 2, 4, 0);  // view of an arena value
  b.SetOutputs({es::Add(rows, hidden_rows), es::Mul(picked, const_row), es::Neg(cols)});
  int views = 0, tasks = 0;
  std::vector<float> in(12);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.25f * static_cast<float>(i) - 1.0f;
  auto out = Run(std::move(b.Build()).value(), {in}, &views, &tasks);
  EXPECT_EQ(views, 5);
  EXPECT_EQ(tasks, 4);  // Exp, Add, Mul, Neg
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(out[0][r * 3 + k], in[(1 + r) * 3 + k] + std::exp(in[(2 + r) * 3 + k]));
  const float tens[] = {10, 20, 30};
  for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(out[1][k], in[6 + k] * tens[k]);
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 2; ++k) EXPECT_FLOAT_EQ(out[2][r * 2 + k], -in[r * 3 + k]);
}

TEST_F(MemoryViewsTest, LeadingUnitDimsLetAnInnerSliceBeAView) {
  es::GraphBuilder b("inner");
  auto x = b.CreateInput(0, DataType::kFloat, {1, 2, 8});
  auto slice = [&](es::EsTensor t, int64_t begin, int64_t end, int64_t axis) {
    return es::StridedSliceV2(t, b.CreateVector({begin}), b.CreateVector({end}), b.CreateVector({axis}),
                              b.CreateVector({1}));
  };
  auto hidden = es::Exp(x);
  auto second = slice(hidden, 1, 2, 1);  // [1, 1, 8]: the second row, contiguous
  auto part = slice(second, 2, 6, 2);    // [1, 1, 4]: leading dims are 1, so contiguous too
  auto last = slice(hidden, 4, 8, 2);    // [1, 2, 4]: two runs, a strided view (Neg takes strides)
  b.SetOutputs({es::Relu(part), es::Neg(last)});
  int views = 0, tasks = 0;
  std::vector<float> in(16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.1f * static_cast<float>(i);
  auto out = Run(std::move(b.Build()).value(), {in}, &views, &tasks);
  EXPECT_EQ(views, 3);
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out[0][k], std::exp(in[8 + 2 + k]));
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out[1][r * 4 + k], -std::exp(in[r * 8 + 4 + k]));
}

TEST_F(MemoryViewsTest, AnOpMayWriteOverASliceViewThatDiesThere) {
  es::GraphBuilder b("over_slice");
  auto x = b.CreateInput(0, DataType::kFloat, {4, 16});
  auto slice = [&](es::EsTensor t, int64_t begin, int64_t end) {
    return es::StridedSliceV2(t, b.CreateVector({begin}), b.CreateVector({end}), b.CreateVector({0}),
                              b.CreateVector({1}));
  };
  auto hidden = es::Exp(x);
  auto head = es::Neg(slice(hidden, 0, 2));   // reads rows 0-1 first
  auto tail = es::Relu(slice(hidden, 2, 4));  // the last reader of `hidden`: may write over rows 2-3
  b.SetOutputs({es::Add(head, tail)});
  Session s(Options{{option::kAutofuse, "false"}});  // these elementwise chains would fuse
  ASSERT_TRUE(s.AddGraph(1, [&] { return std::move(b.Build()).value(); }()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  EXPECT_GE(s.GetCompiledGraphSummary(1)->inplace_values, 1);
  std::vector<float> in(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.05f * static_cast<float>(i) - 1.0f;
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {4, 16}), in.data(), nullptr)}, &out).ok());
  for (int i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(out[0].data_as<float>()[i], -std::exp(in[i]) + std::exp(in[32 + i]));
}

}  // namespace
}  // namespace ge

namespace ge {
namespace {

// A column of a matrix (select on axis 1) or a stepped slice is a strided view when every
// reader's kernel takes strides (GatherV2's 1-D indices, elementwise ops); otherwise a copy.
TEST(MemoryStridedViewsTest, ColumnsAndSteppedSlicesAreStridedViewsForReadersThatTakeStrides) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  es::GraphBuilder b("strided");
  auto ids = b.CreateInput(0, DataType::kInt64, {6, 3});  // three id columns
  auto table = b.CreateInput(1, DataType::kFloat, {10, 4});
  auto x = b.CreateInput(2, DataType::kFloat, {6, 8});
  auto column = es::GatherV2(ids, b.CreateScalar(2, DataType::kInt64), b.CreateVector({1}));  // ids[:, 2]
  auto rows = es::GatherV2(table, column, b.CreateVector({0}));                               // embedding lookup
  auto every_other = es::StridedSliceV2(x, b.CreateVector({1}), b.CreateVector({8}), b.CreateVector({1}),
                                        b.CreateVector({2}));  // x[:, 1::2]
  auto moved = es::Transpose(
      es::StridedSliceV2(x, b.CreateVector({0}), b.CreateVector({8}), b.CreateVector({1}), b.CreateVector({2})),
      b.CreateVector({1, 0}));  // a copy: Transpose takes dense input
  b.SetOutputs({rows, es::Neg(every_other), moved});
  Session s(Options{{option::kAutofuse, "false"}});
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->view_values, 2);  // the column and x[:, 1::2]
  std::vector<int64_t> id_data(18);
  for (size_t i = 0; i < id_data.size(); ++i) id_data[i] = static_cast<int64_t>((i * 7) % 10);
  std::vector<float> table_data(40), x_data(48);
  for (size_t i = 0; i < table_data.size(); ++i) table_data[i] = 0.5f * static_cast<float>(i);
  for (size_t i = 0; i < x_data.size(); ++i) x_data[i] = static_cast<float>(i) - 20.0f;
  std::vector<Tensor> out;
  for (int run = 0; run < 2; ++run) {  // a second run through rebound inputs reads them again
    for (auto& v : x_data) v += 1.0f;
    ASSERT_TRUE(s.RunGraph(1,
                           {Tensor(TensorDesc(DataType::kInt64, {6, 3}), id_data.data(), nullptr),
                            Tensor(TensorDesc(DataType::kFloat, {10, 4}), table_data.data(), nullptr),
                            Tensor(TensorDesc(DataType::kFloat, {6, 8}), x_data.data(), nullptr)},
                           &out)
                    .ok());
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 4; ++c)
        EXPECT_FLOAT_EQ(out[0].data_as<float>()[r * 4 + c],
                        table_data[static_cast<size_t>(id_data[r * 3 + 2] * 4 + c)]);
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 4; ++c) {
        EXPECT_FLOAT_EQ(out[1].data_as<float>()[r * 4 + c], -x_data[static_cast<size_t>(r * 8 + 1 + 2 * c)]);
        EXPECT_FLOAT_EQ(out[2].data_as<float>()[c * 6 + r], x_data[static_cast<size_t>(r * 8 + 2 * c)]);
      }
  }
}

}  // namespace
}  // namespace ge
