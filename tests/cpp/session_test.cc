// Session: the error contract, numerics on the CPU device, concurrent runs, summaries.
#include <gtest/gtest.h>

#include <ATen/ops/allclose.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/randn.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/session.h"

namespace ge {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }
};

// y = x * w + b (elementwise), 2x3 floats.
std::unique_ptr<Graph> AffineGraph() {
  es::GraphBuilder b("affine");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto w = b.CreateConst(Tensor::FromVector(DataType::kFloat, {3}, std::vector<float>{1, 2, 3}));
  auto bias = b.CreateScalar(0.5, DataType::kFloat);
  b.SetOutputs({x * w + bias});
  return std::move(b.Build()).value();
}

Tensor FloatInput(std::vector<float>& data, Shape shape) {
  return Tensor(TensorDesc(DataType::kFloat, std::move(shape)), data.data(), nullptr);
}

TEST_F(SessionTest, RunsAndMatchesReference) {
  Session s(Options{{option::kAutofuse, "false"}});  // two library kernels, counted below
  ASSERT_TRUE(s.AddGraph(1, AffineGraph()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {FloatInput(x, {2, 3})}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> want = {1.5f, 4.5f, 9.5f, 4.5f, 10.5f, 18.5f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(out[0].data_as<float>()[i], want[i]);
  auto summary = s.GetCompiledGraphSummary(1);
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary->is_static);
  EXPECT_EQ(summary->task_num, 2);
  EXPECT_EQ(summary->output_descs[0], TensorDesc(DataType::kFloat, {2, 3}));
  EXPECT_EQ(summary->engine_counts.at("native"), 2);
}

TEST_F(SessionTest, BadCallsReturnClearErrors) {
  Session s;
  std::vector<Tensor> out;
  std::vector<float> x(6);
  auto expect_error = [](const Status& st, const std::string& needle) {
    ASSERT_FALSE(st.ok()) << "expected an error mentioning '" << needle << "'";
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  };
  expect_error(s.RunGraph(7, {}, &out), "graph 7 was not added");
  expect_error(s.CompileGraph(7), "graph 7 was not added");
  expect_error(s.RemoveGraph(7), "graph 7 was not added");
  expect_error(s.GetCompiledGraphSummary(7).status(), "graph 7 was not added");
  expect_error(s.AddGraph(2, nullptr), "null");
  ASSERT_TRUE(s.AddGraph(1, AffineGraph()).ok());
  expect_error(s.AddGraph(1, AffineGraph()), "already");
  expect_error(s.RunGraph(1, {FloatInput(x, {2, 3})}, &out), "must be compiled");
  expect_error(s.GetCompiledGraphSummary(1).status(), "not been compiled");
  ASSERT_TRUE(s.CompileGraph(1).ok());
  expect_error(s.RunGraph(1, {}, &out), "takes 1 inputs, 0 given");
  expect_error(s.RunGraph(1, {FloatInput(x, {3, 2})}, &out), "expected shape [2,3], got [3,2]");
  std::vector<int64_t> ints(6);
  Tensor int_input(TensorDesc(DataType::kInt64, {2, 3}), ints.data(), nullptr);
  expect_error(s.RunGraph(1, {int_input}, &out), "expected dtype DT_FLOAT, got DT_INT64");
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  expect_error(s.RunGraph(1, {FloatInput(x, {2, 3})}, &out), "was not added");
}

TEST_F(SessionTest, UninitializedEngineIsAnError) {
  ASSERT_TRUE(GEFinalize().ok());
  Session s;
  Status st = s.AddGraph(1, AffineGraph());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("GEInitialize"), std::string::npos);
  Options bad = {{option::kDevice, "npu9"}};
  Status unknown = GEInitialize(bad);
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("npu9"), std::string::npos);
}

TEST_F(SessionTest, UnsupportedGraphFailsAtCompileNamingTheNode) {
  es::GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {1, 1, 5, 5});
  auto y =
      b.Op1("MaxPoolV3", {x}, {{"ksize", std::vector<int64_t>{1, 1, 2, 2}}, {"pads", std::vector<int64_t>{1, 0, 0, 0}}},
            "asym_pool");
  b.SetOutputs({y});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  Status st = s.CompileGraph(1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("asym_pool"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("asymmetric"), std::string::npos) << st.message();
}

TEST_F(SessionTest, ConvolutionMatchesATen) {
  at::Tensor x = at::randn({2, 3, 11, 11});
  at::Tensor w = at::randn({8, 3, 3, 3});
  at::Tensor bias = at::randn({8});
  es::GraphBuilder b;
  auto xin = b.CreateInput(0, DataType::kFloat, {2, 3, 11, 11});
  auto y = b.Op1("Conv2D", {xin, b.CreateConst(*cpu::ToGeTensor(w)), b.CreateConst(*cpu::ToGeTensor(bias))},
                 {{"strides", std::vector<int64_t>{1, 1, 2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.SetOutputs({es::Relu(y)});
  Session s;
  ASSERT_TRUE(s.AddGraph(3, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(3).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(3, {*cpu::ToGeTensor(x)}, &out).ok());
  at::Tensor got = *cpu::ToAtenTensor(out[0]);
  at::Tensor want = at::convolution(x, w, bias, {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1).clamp_min(0);
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-6));
}

TEST_F(SessionTest, TorchOpRunsThroughTheDispatcherOnTheFallbackEngine) {
  es::GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  AttrMap attrs = {{"op", std::string("aten::cumsum")},
                   {"args", std::vector<std::string>{"t:0", "i:1", "dt:11"}},  // dtype=DT_DOUBLE
                   {"output_dtypes", std::vector<int64_t>{static_cast<int64_t>(DataType::kDouble)}},
                   {"output_shapes", std::vector<int64_t>{2, 3}},
                   {"output_ranks", std::vector<int64_t>{2}}};
  auto sums = b.Op("TorchOp", {std::vector<es::EsTensor>{es::Relu(x)}}, attrs, "cumsum", 1);
  b.SetOutputs({sums.at(0)});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->engine_counts.at("host_fallback"), 1);
  std::vector<float> in = {1, -2, 3, 4, 5, -6};
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {FloatInput(in, {2, 3})}, &out).ok());
  const std::vector<double> want = {1, 1, 4, 4, 9, 9};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(out[0].data_as<double>()[i], want[i]);
}

// Compiles a graph of one TorchOp running `op` with argument spec `args` over a float [2] input;
// returns the compile's status.
Status CompileOneTorchOp(const std::string& op, const std::vector<std::string>& args) {
  es::GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {2});
  AttrMap attrs = {{"op", op},
                   {"args", args},
                   {"output_dtypes", std::vector<int64_t>{static_cast<int64_t>(DataType::kFloat)}},
                   {"output_shapes", std::vector<int64_t>{2}},
                   {"output_ranks", std::vector<int64_t>{1}}};
  b.SetOutputs({b.Op("TorchOp", {std::vector<es::EsTensor>{x}}, attrs, "torch_op", 1).at(0)});
  Session s;
  GE_RETURN_IF_ERROR(s.AddGraph(1, std::move(b.Build()).value()));
  return s.CompileGraph(1);
}

TEST_F(SessionTest, TorchOpWithABadSpecFailsAtLoadNamingTheArgument) {
  const Status st = CompileOneTorchOp("aten::cumsum", {"t:0", "i:zero", "none"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("argument 'dim'"), std::string::npos) << st.message();
}

// A collective's output is valid only after its wait; the fallback engine would copy it before.
// A graph that reaches the engine with one anyway (say, read from a dump) is refused at load.
TEST_F(SessionTest, TorchOpRefusesTorchDistributedCollectives) {
  for (const char* op : {"_c10d_functional::all_reduce", "_c10d_functional::wait_tensor", "c10d::allreduce_"}) {
    const Status st = CompileOneTorchOp(op, {"t:0"});
    ASSERT_FALSE(st.ok()) << op;
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st.message();
    EXPECT_NE(st.message().find(std::string(op) + " is a torch.distributed collective"), std::string::npos)
        << st.message();
  }
}

TEST_F(SessionTest, InplaceUpdatesWriteTheCallersMemoryAfterItsReaders) {
  // cache[pos] = row, in the caller's tensor; `before` reads the old cache and must run first.
  es::GraphBuilder b;
  auto cache = b.CreateInput(0, DataType::kFloat, {4, 2});
  auto pos = b.CreateInput(1, DataType::kInt64, {1});
  auto row = b.CreateInput(2, DataType::kFloat, {1, 2});
  auto updated = es::InplaceIndexCopy(cache, pos, row, /*dim=*/0);
  auto after = es::ReduceSum(updated, b.CreateVector({}));  // sees the new row
  auto before = es::ReduceSum(cache, b.CreateVector({}));   // sees the old cache
  b.SetOutputs({before, after});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::vector<float> cache_data = {1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<int64_t> pos_data = {2};
  std::vector<float> row_data = {5, 7};
  std::vector<Tensor> out;
  ASSERT_TRUE(
      s.RunGraph(1,
                 {FloatInput(cache_data, {4, 2}), Tensor(TensorDesc(DataType::kInt64, {1}), pos_data.data(), nullptr),
                  FloatInput(row_data, {1, 2})},
                 &out)
          .ok());
  EXPECT_FLOAT_EQ(out[0].data_as<float>()[0], 8);                       // old contents
  EXPECT_FLOAT_EQ(out[1].data_as<float>()[0], 18);                      // 6 ones + 5 + 7
  EXPECT_EQ(cache_data, (std::vector<float>{1, 1, 1, 1, 5, 7, 1, 1}));  // written in place
  EXPECT_EQ(s.GetCompiledGraphSummary(1)->feature_memory_size, 0) << "no arena copy of the cache";
}

TEST_F(SessionTest, InplaceUpdateConflictsAreRefused) {
  es::GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {3});
  auto updated = es::Assign(x, es::Relu(x));
  b.SetOutputs({es::Add(x, updated)});  // needs the old and the new x at once
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  Status st = s.CompileGraph(1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("depends on that update"), std::string::npos) << st.message();
}

TEST_F(SessionTest, OutputsMayBeInputsConstantsAndDuplicates) {
  es::GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {2});
  auto c = b.CreateConst(Tensor::FromVector(DataType::kFloat, {2}, std::vector<float>{7, 8}));
  auto y = es::Relu(x);
  b.SetOutputs({x, c, y, y});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::vector<float> in = {-1, 3};
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {FloatInput(in, {2})}, &out).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data(), in.data());
  EXPECT_FLOAT_EQ(out[1].data_as<float>()[1], 8);
  out[1].data_as<float>()[1] = 0;  // the caller's copy; the model's constant must not change
  std::vector<Tensor> again;
  ASSERT_TRUE(s.RunGraph(1, {FloatInput(in, {2})}, &again).ok());
  EXPECT_FLOAT_EQ(again[1].data_as<float>()[1], 8);
  EXPECT_EQ(out[2].data(), out[3].data());
  EXPECT_FLOAT_EQ(out[2].data_as<float>()[0], 0);
  EXPECT_FLOAT_EQ(out[2].data_as<float>()[1], 3);
}

TEST_F(SessionTest, ConcurrentRunsGetIndependentResults) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AffineGraph()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 200; ++iter) {
        std::vector<float> x(6, static_cast<float>(t * 1000 + iter));
        std::vector<Tensor> out;
        if (!s.RunGraph(1, {FloatInput(x, {2, 3})}, &out).ok()) ++failures;
        for (int i = 0; i < 6; ++i)
          if (out[0].data_as<float>()[i] != x[i] * static_cast<float>(i % 3 + 1) + 0.5f) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// 8 threads run one compiled graph while another thread adds, compiles, runs and removes graphs
// (make test-tsan runs this under ThreadSanitizer).
TEST_F(SessionTest, ConcurrentRunsWhileGraphsAreCompiledAndRemoved) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AffineGraph()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::thread churn([&] {
    for (uint32_t id = 2; id < 22; ++id) {
      if (!s.AddGraph(id, AffineGraph()).ok() || !s.CompileGraph(id).ok()) ++failures;
      std::vector<float> x(6, 1.0f);
      std::vector<Tensor> out;
      if (!s.RunGraph(id, {FloatInput(x, {2, 3})}, &out).ok()) ++failures;
      if (!s.RemoveGraph(id).ok()) ++failures;
    }
    done = true;
  });
  std::vector<std::thread> runners;
  for (int t = 0; t < 8; ++t) {
    runners.emplace_back([&, t] {
      for (int iter = 0; iter < 100 || !done; ++iter) {
        std::vector<float> x(6, static_cast<float>(t * 1000 + iter));
        std::vector<Tensor> out;
        if (!s.RunGraph(1, {FloatInput(x, {2, 3})}, &out).ok()) ++failures;
        for (int i = 0; i < 6; ++i)
          if (out[0].data_as<float>()[i] != x[i] * static_cast<float>(i % 3 + 1) + 0.5f) ++failures;
      }
    });
  }
  churn.join();
  for (auto& th : runners) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace ge
