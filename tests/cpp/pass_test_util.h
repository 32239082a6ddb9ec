// Shared by the optimizer-pass tests: random inputs of every dtype, one-pass runs compared
// numerically with the unoptimized graph on the CPU device, and the PassTest fixture.
#pragma once

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

namespace ge::pass_test {

using Build = std::function<void(es::GraphBuilder&)>;

inline std::unique_ptr<Graph> Make(const Build& build) {
  es::GraphBuilder b("pass_test");
  build(b);
  auto graph = b.Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

// Engine options with every optimizer pass switched off: the reference.
inline Options NoOptimizer() {
  std::string spec;
  for (const std::string& name : OptimizerPassNames()) spec += name + ":off;";
  return Options{{"ge.optimizationSwitch", spec}};
}

inline int Count(const Graph& graph, const std::string& type) {
  int n = 0;
  for (Node* node : graph.nodes()) n += node->type() == type;
  return n;
}

// Seeded random inputs for the graph's Data nodes, of every dtype a pass test may use.
inline std::vector<std::vector<uint8_t>> MakeInputData(const Graph& graph, std::vector<Tensor>* inputs) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  // Integers in [0, 2]: valid as indices wherever a test graph takes them (a cache of 4 rows).
  std::uniform_int_distribution<int> small(0, 2);
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

inline std::vector<Output> RunGraphOnce(std::unique_ptr<Graph> graph, const Options& options) {
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
inline void ExpectSameOutputs(const std::vector<Output>& got, const std::vector<Output>& want, std::string_view pass) {
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

inline PassContext WithCpuDevice(int64_t limit = 1 << 20) {
  static std::shared_ptr<Device> cpu = *DeviceRegistry::Get("cpu");
  static DeviceGraphEvaluator evaluator(*cpu);
  PassContext context;
  context.evaluator = &evaluator;
  context.fold_limit_bytes = limit;
  return context;
}

}  // namespace ge::pass_test
