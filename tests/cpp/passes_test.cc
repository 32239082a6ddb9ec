// Optimizer passes: each builds a graph that needs the pass, runs it, checks what the graph
// became (node counts, attributes) and that it computes the same numbers as the unoptimized
// graph on the CPU device; and a case where the pass must not fire. Plus the pass manager.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string_view>

#include "devices/cpu/cpu_device.h"
#include "ge/base/half.h"
#include "ge/compiler/graph_compiler.h"
#include "ge/es/es_ops.h"
#include "ge/ops/op_registry.h"
#include "ge/passes/pass_manager.h"
#include "ge/passes/passes.h"
#include "ge/passes/rewrite_rules.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/session.h"

namespace ge {
namespace {

using Build = std::function<void(es::GraphBuilder&)>;

std::unique_ptr<Graph> Make(const Build& build) {
  es::GraphBuilder b("pass_test");
  build(b);
  auto graph = b.Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

// Engine options with every optimizer pass switched off: the reference.
Options NoOptimizer() {
  std::string spec;
  for (const std::string& name : OptimizerPassNames()) spec += name + ":off;";
  return Options{{"ge.optimizationSwitch", spec}};
}

int Count(const Graph& graph, const std::string& type) {
  int n = 0;
  for (Node* node : graph.nodes()) n += node->type() == type;
  return n;
}

// Seeded random inputs for the graph's Data nodes, of every dtype a pass test may use.
std::vector<std::vector<uint8_t>> MakeInputData(const Graph& graph, std::vector<Tensor>* inputs) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> small(-5, 5);
  std::vector<std::vector<uint8_t>> storage;
  for (Node* data : graph.DataNodes()) {
    const TensorDesc& d = data->output_desc(0);
    std::vector<uint8_t> bytes(static_cast<size_t>(d.ByteSize()));
    for (int64_t i = 0; i < d.NumElements(); ++i) {
      uint8_t* at = bytes.data() + static_cast<size_t>(i) * static_cast<size_t>(DataTypeSize(d.dtype));
      const float f = normal(rng);
      const int k = small(rng);
      switch (d.dtype) {
        case DataType::kFloat: std::memcpy(at, &f, 4); break;
        case DataType::kFloat16: *reinterpret_cast<uint16_t*>(at) = FloatToHalfBits(f); break;
        case DataType::kBFloat16: *reinterpret_cast<uint16_t*>(at) = FloatToBFloat16Bits(f); break;
        case DataType::kInt32: *reinterpret_cast<int32_t*>(at) = k; break;
        case DataType::kInt64: *reinterpret_cast<int64_t*>(at) = k; break;
        case DataType::kBool: *at = k > 0; break;
        default: ADD_FAILURE() << "no random input for " << DataTypeName(d.dtype);
      }
    }
    storage.push_back(std::move(bytes));
    inputs->emplace_back(d, storage.back().data(), nullptr);
  }
  return storage;
}

// One graph output: its dtype and its values as doubles (exact for every integer and bool).
struct Output {
  DataType dtype;
  std::vector<double> values;
};

std::vector<Output> RunGraphOnce(std::unique_ptr<Graph> graph, const Options& options) {
  static uint32_t next_id = 1;
  Session s(options);
  const uint32_t id = next_id++;
  std::vector<Tensor> inputs;
  auto storage = MakeInputData(*graph, &inputs);
  EXPECT_TRUE(s.AddGraph(id, std::move(graph)).ok());
  Status st = s.CompileGraph(id);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::vector<Tensor> outputs;
  st = s.RunGraph(id, inputs, &outputs);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::vector<Output> out;
  for (const Tensor& t : outputs) {
    Output o{t.desc().dtype, {}};
    for (int64_t i = 0; i < t.desc().NumElements(); ++i) {
      switch (o.dtype) {
        case DataType::kFloat: o.values.push_back(t.data_as<float>()[i]); break;
        case DataType::kFloat16: o.values.push_back(HalfBitsToFloat(t.data_as<uint16_t>()[i])); break;
        case DataType::kBFloat16: o.values.push_back(BFloat16BitsToFloat(t.data_as<uint16_t>()[i])); break;
        case DataType::kInt32: o.values.push_back(t.data_as<int32_t>()[i]); break;
        case DataType::kInt64: o.values.push_back(static_cast<double>(t.data_as<int64_t>()[i])); break;
        case DataType::kBool: o.values.push_back(t.data_as<uint8_t>()[i]); break;
        default: ADD_FAILURE() << "cannot compare outputs of " << DataTypeName(o.dtype);
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

// Integers and bools must match exactly; floats within their dtype's rounding.
void ExpectSameOutputs(const std::vector<Output>& got, const std::vector<Output>& want, std::string_view pass) {
  ASSERT_EQ(got.size(), want.size()) << pass;
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].dtype, want[k].dtype) << pass << " output " << k;
    ASSERT_EQ(got[k].values.size(), want[k].values.size()) << pass << " output " << k;
    const DataType t = want[k].dtype;
    const double rtol = t == DataType::kFloat      ? 1e-5
                        : t == DataType::kFloat16  ? 1e-3
                        : t == DataType::kBFloat16 ? 8e-3
                                                   : 0;
    for (size_t i = 0; i < want[k].values.size(); ++i) {
      const double w = want[k].values[i], g = got[k].values[i];
      if (rtol == 0) {
        EXPECT_EQ(g, w) << pass << " output " << k << "[" << i << "] (" << DataTypeName(t) << ")";
      } else {
        EXPECT_NEAR(g, w, rtol * (1 + std::fabs(w)))
            << pass << " output " << k << "[" << i << "] (" << DataTypeName(t) << ")";
      }
    }
  }
}

class PassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }

  // Runs one pass on a fresh graph; returns it after checking it is well typed and computes
  // what the unoptimized graph computes.
  std::unique_ptr<Graph> RunPass(const Build& build, std::unique_ptr<GraphPass> pass, bool expect_change,
                                 PassContext context = {}) {
    auto graph = Make(build);
    bool changed = false;
    Status st = pass->Run(*graph, context, &changed);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(changed, expect_change) << pass->name();
    st = VerifyGraphTypes(*graph);
    EXPECT_TRUE(st.ok()) << st.ToString();
    // Numbers: the rewritten graph (no further passes) against the original one.
    auto copy = Make(build);
    bool ignored = false;
    auto again = pass.get();
    EXPECT_TRUE(again->Run(*copy, context, &ignored).ok());
    ExpectSameOutputs(RunGraphOnce(std::move(copy), NoOptimizer()), RunGraphOnce(Make(build), NoOptimizer()),
                      pass->name());
    return graph;
  }
};

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

PassContext WithCpuDevice(int64_t limit = 1 << 20) {
  static std::shared_ptr<Device> cpu = *DeviceRegistry::Get("cpu");
  static DeviceGraphEvaluator evaluator(*cpu);
  PassContext context;
  context.evaluator = &evaluator;
  context.fold_limit_bytes = limit;
  return context;
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

TEST_F(PassTest, TransposeMatMulFoldUsesTheTransposeFlags) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {16, 8});
        b.SetOutputs({es::MatMulV2(x, es::Transpose(w, b.CreateVector({1, 0})))});
      },
      CreateTransposeMatMulFoldPass(), true);
  EXPECT_EQ(Count(*g, "Transpose"), 0);
  for (Node* n : g->nodes())
    if (n->type() == "MatMulV2") {
      EXPECT_TRUE(n->GetAttrOr<bool>("transpose_x2", false));
    }
}

TEST_F(PassTest, TransposeMatMulFoldLooksThroughPerMatrixReshapes) {
  // Attention scores: q @ k.transpose(-2, -1), with k expanded and reshaped to 3-D on the way.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 5, 4});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 3, 5, 4});
        auto kt = es::Transpose(k, b.CreateVector({0, 1, 3, 2}));  // [2,3,4,5]
        auto kb = es::Reshape(es::BroadcastTo(kt, b.CreateVector({2, 3, 4, 5})), b.CreateVector({6, 4, 5}));
        b.SetOutputs({es::BatchMatMulV2(es::Reshape(q, b.CreateVector({6, 5, 4})), kb)});
      },
      CreateTransposeMatMulFoldPass(), true);
  EXPECT_EQ(Count(*g, "Transpose"), 0);
  for (Node* n : g->nodes())
    if (n->type() == "BatchMatMulV2") {
      EXPECT_TRUE(n->GetAttrOr<bool>("adj_x2", false));
    }
}

TEST_F(PassTest, TransposeMatMulFoldLeavesLayoutTransposes) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto a = b.CreateInput(0, DataType::kFloat, {2, 3, 5, 4});
        auto w = b.CreateInput(1, DataType::kFloat, {12, 7});
        auto t = es::Transpose(a, b.CreateVector({0, 2, 1, 3}));  // heads -> sequence: real data movement
        auto shared = es::Transpose(w, b.CreateVector({1, 0}));   // two users: the copy is needed anyway
        auto ones = b.CreateConst(Tensor::FromVector(DataType::kFloat, {1, 7}, std::vector<float>(7, 1.0f)));
        b.SetOutputs(
            {es::MatMulV2(es::Reshape(t, b.CreateVector({10, 12})), w), es::MatMulV2(ones, shared), es::Neg(shared)});
      },
      CreateTransposeMatMulFoldPass(), false);
  EXPECT_EQ(Count(*g, "Transpose"), 2);
}

TEST_F(PassTest, MatMulBiasFoldMovesTheBiasIntoTheProduct) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {8, 16});
        auto bias = b.CreateInput(2, DataType::kFloat, {16});
        b.SetOutputs({es::Relu(es::Add(es::MatMulV2(x, w), bias))});
      },
      CreateMatMulBiasFoldPass(), true);
  EXPECT_EQ(Count(*g, "Add"), 0);
}

TEST_F(PassTest, MatMulBiasFoldLeavesFullMatrixAdds) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {8, 16});
        auto residual = b.CreateInput(2, DataType::kFloat, {4, 16});
        b.SetOutputs({es::Relu(es::Add(es::MatMulV2(x, w), residual))});
      },
      CreateMatMulBiasFoldPass(), false);
  EXPECT_EQ(Count(*g, "Add"), 1);
}

Tensor Ramp(Shape shape, float start, float step) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i % 7);
  return Tensor::FromVector(DataType::kFloat, std::move(shape), v);
}

TEST_F(PassTest, BatchNormFoldFoldsIntoConstantConvWeights) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 6, 6});
        auto w = b.CreateConst(Ramp({4, 3, 3, 3}, -0.5f, 0.2f));
        auto conv = es::Conv2D(x, w, {1, 1, 1, 1}, {1, 1, 1, 1}, b.CreateConst(Ramp({4}, 0.1f, 0.1f)));
        auto bn = es::BatchNorm(conv, b.CreateConst(Ramp({4}, 0.5f, 0.3f)), b.CreateConst(Ramp({4}, -0.2f, 0.1f)),
                                b.CreateConst(Ramp({4}, 0.05f, 0.1f)), b.CreateConst(Ramp({4}, 0.5f, 0.25f)), 1e-5);
        b.SetOutputs({es::Relu(bn)});
      },
      CreateBatchNormFoldPass(), true);
  EXPECT_EQ(Count(*g, "BatchNorm"), 0);
  EXPECT_EQ(Count(*g, "Const"), 2);  // the folded weight and bias
}

TEST_F(PassTest, BatchNormFoldFoldsIntoMatMulAndNeedsConstantWeights) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {5, 8});
        auto y = es::MatMulV2(x, b.CreateConst(Ramp({6, 8}, -0.3f, 0.1f)), {}, {}, false, true);
        b.SetOutputs(
            {es::BatchNorm(y, b.CreateConst(Ramp({6}, 0.5f, 0.3f)), b.CreateConst(Ramp({6}, -0.2f, 0.1f)),
                           b.CreateConst(Ramp({6}, 0.05f, 0.1f)), b.CreateConst(Ramp({6}, 0.5f, 0.25f)), 1e-5)});
      },
      CreateBatchNormFoldPass(), true);
  EXPECT_EQ(Count(*g, "BatchNorm"), 0);
  auto h = RunPass(
      [](es::GraphBuilder& b) {  // weights are a graph input: nothing to fold into
        auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 6, 6});
        auto w = b.CreateInput(1, DataType::kFloat, {4, 3, 3, 3});
        auto conv = es::Conv2D(x, w, {1, 1, 1, 1}, {1, 1, 1, 1});
        b.SetOutputs(
            {es::BatchNorm(conv, b.CreateConst(Ramp({4}, 0.5f, 0.3f)), b.CreateConst(Ramp({4}, -0.2f, 0.1f)),
                           b.CreateConst(Ramp({4}, 0.05f, 0.1f)), b.CreateConst(Ramp({4}, 0.5f, 0.25f)), 1e-5)});
      },
      CreateBatchNormFoldPass(), false);
  EXPECT_EQ(Count(*h, "BatchNorm"), 1);
}

void Attention(es::GraphBuilder& b, bool with_mask, bool divide) {
  auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 6, 8});
  auto k = b.CreateInput(1, DataType::kFloat, {2, 3, 5, 8});
  auto v = b.CreateInput(2, DataType::kFloat, {2, 3, 5, 8});
  auto scores = es::BatchMatMulV2(q, k, {}, {}, false, true);
  scores = divide ? es::RealDiv(scores, b.CreateScalar(2.0, DataType::kFloat))
                  : es::Mul(scores, b.CreateScalar(0.35, DataType::kFloat));
  if (with_mask) scores = es::Add(scores, b.CreateConst(Ramp({2, 1, 1, 5}, -1.0f, 0.4f)));
  b.SetOutputs({es::Relu(es::BatchMatMulV2(es::SoftmaxV2(scores, {-1}), v))});
}

TEST_F(PassTest, PatternRewriteFusesAttention) {
  for (bool with_mask : {false, true}) {
    for (bool divide : {false, true}) {
      auto g = RunPass([&](es::GraphBuilder& b) { Attention(b, with_mask, divide); }, CreatePatternRewritePass(), true);
      EXPECT_EQ(Count(*g, "FusedAttention"), 1);
      EXPECT_EQ(Count(*g, "SoftmaxV2") + Count(*g, "BatchMatMulV2"), 0);
      for (Node* n : g->nodes())
        if (n->type() == "FusedAttention") {
          EXPECT_NEAR(n->GetAttrOr<double>("scale", 0), divide ? 0.5 : 0.35, 1e-7);
        }
    }
  }
}

TEST_F(PassTest, PatternRewriteFusesAttentionOfOtherRanksWithALowRankMask) {
  for (const Shape& lead : {Shape{6}, Shape{2, 3}}) {  // 3-D and 4-D inputs, a 2-D [L, S] mask
    auto with = [&](int64_t a, int64_t b2) {
      Shape s = lead;
      s.push_back(a);
      s.push_back(b2);
      return s;
    };
    auto g = RunPass(
        [&](es::GraphBuilder& b) {
          auto q = b.CreateInput(0, DataType::kFloat, with(7, 8));
          auto k = b.CreateInput(1, DataType::kFloat, with(5, 8));
          auto v = b.CreateInput(2, DataType::kFloat, with(5, 8));
          auto scores = es::Add(es::BatchMatMulV2(q, k, {}, {}, false, true), b.CreateConst(Ramp({7, 5}, -2.0f, 0.5f)));
          b.SetOutputs({es::BatchMatMulV2(es::SoftmaxV2(scores, {-1}), v)});
        },
        CreatePatternRewritePass(), true);
    EXPECT_EQ(Count(*g, "FusedAttention"), 1);
  }
}

TEST_F(PassTest, PatternRewriteLeavesAttentionWhoseScoresAreReadElsewhere) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {2, 6, 8});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 5, 8});
        auto v = b.CreateInput(2, DataType::kFloat, {2, 5, 8});
        auto probs = es::SoftmaxV2(es::BatchMatMulV2(q, k, {}, {}, false, true), {-1});
        b.SetOutputs({es::BatchMatMulV2(probs, v), es::Neg(probs)});  // the probabilities are an output too
      },
      CreatePatternRewritePass(), false);
  EXPECT_EQ(Count(*g, "FusedAttention"), 0);
}

TEST_F(PassTest, UserRewriteRulesRegisterAndRun) {
  // A user rule: Neg(Neg(x)) -> x, registered at run time like a plugin library would.
  static bool registered = false;
  if (!registered) {
    RewriteRule rule{
        "TestDoubleNegation",
        {"Neg"},
        [](const Node& n) { return n.input(0).node->type() == "Neg" && CanBypass(&n, n.input(0).node->input(0)); },
        [](Graph& graph, Node* n) { return Bypass(graph, n, n->input(0).node->input(0)); }};
    ASSERT_TRUE(RewriteRuleRegistry::Global().Register(rule).ok());
    EXPECT_FALSE(RewriteRuleRegistry::Global().Register(rule).ok());  // names are unique
    registered = true;
  }
  EXPECT_FALSE(RewriteRuleRegistry::Global().Register(RewriteRule{"Incomplete", {}, nullptr, nullptr}).ok());
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {3});
        b.SetOutputs({es::Exp(es::Neg(es::Neg(x)))});
      },
      CreatePatternRewritePass(), true);
  EXPECT_EQ(Count(*g, "Neg"), 0);
}

TEST_F(PassTest, ManagerRecordsStatsAndHonoursLevelsAndSwitches) {
  auto build = [](es::GraphBuilder& b) {
    auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
    auto w = b.CreateInput(1, DataType::kFloat, {16, 8});
    b.SetOutputs({es::MatMulV2(es::Identity(x), es::Transpose(w, b.CreateVector({1, 0})))});
  };
  auto compile = [&](const Options& options) {
    Session s(options);
    EXPECT_TRUE(s.AddGraph(1, Make(build)).ok());
    Status st = s.CompileGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return *s.GetCompiledGraphSummary(1);
  };
  auto fired = [](const CompiledGraphSummary& s, const std::string& name) {
    for (const PassStat& p : s.passes)
      if (p.pass == name) return p.changed;
    return false;
  };
  auto o3 = compile({{"ge.oo.verifyEachPass", "true"}});
  EXPECT_TRUE(fired(o3, "TransposeMatMulFold"));
  EXPECT_TRUE(fired(o3, "NoOpElimination"));
  for (const PassStat& p : o3.passes) EXPECT_GE(p.milliseconds, 0);
  EXPECT_EQ(o3.task_num, 1);  // just the product
  auto o1 = compile({{"ge.oo.level", "O1"}});
  EXPECT_FALSE(fired(o1, "TransposeMatMulFold"));  // an O3 pass
  EXPECT_TRUE(fired(o1, "NoOpElimination"));
  auto off = compile({{"ge.optimizationSwitch", "NoOpElimination:off;TransposeMatMulFold:off"}});
  EXPECT_EQ(off.task_num, 2);  // Transpose + MatMulV2; the Identity is a zero-copy view (memory stage)

  Session bad(Options{{"ge.optimizationSwitch", "NoSuchPass:off"}});
  ASSERT_TRUE(bad.AddGraph(1, Make(build)).ok());
  Status st = bad.CompileGraph(1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown pass 'NoSuchPass'"), std::string::npos) << st.message();
  Session bad_level(Options{{"ge.oo.level", "O2"}});
  EXPECT_FALSE(bad_level.AddGraph(1, Make(build)).ok());
}

}  // namespace
}  // namespace ge
