// Builds y = relu(x . W + b) with the EagerStyle builder and runs it through a Session on the
// CPU reference device, with no Python. Checks the result against a plain loop.
#include <cmath>
#include <cstdio>
#include <vector>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"  // typed builder functions, generated from the op registry
#include "ge/session.h"

namespace {

int Fail(const ge::Status& status) {
  std::fprintf(stderr, "es_graph: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main() {
  constexpr int64_t kBatch = 4, kIn = 8, kOut = 3;
  std::vector<float> w(kIn * kOut), b(kOut), x(kBatch * kIn);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f - 0.25f * static_cast<float>(i);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.05f * static_cast<float>(static_cast<int>(i % 11) - 5);

  ge::es::GraphBuilder builder("relu_linear");
  auto input = builder.CreateInput(0, ge::DataType::kFloat, {kBatch, kIn});
  auto weight = builder.CreateConst(ge::Tensor::FromVector(ge::DataType::kFloat, {kIn, kOut}, w), "weight");
  auto bias = builder.CreateConst(ge::Tensor::FromVector(ge::DataType::kFloat, {kOut}, b), "bias");
  builder.SetOutputs({ge::es::Relu(ge::es::MatMulV2(input, weight) + bias)});
  auto graph = builder.Build();
  if (!graph.ok()) return Fail(graph.status());

  ge::cpu::RegisterCpuDevice();
  if (auto st = ge::GEInitialize({{ge::option::kDevice, "cpu"}}); !st.ok()) return Fail(st);
  ge::Session session;
  if (auto st = session.AddGraph(1, std::move(graph).value()); !st.ok()) return Fail(st);
  if (auto st = session.CompileGraph(1); !st.ok()) return Fail(st);

  std::vector<ge::Tensor> outputs;
  ge::Tensor in(ge::TensorDesc(ge::DataType::kFloat, {kBatch, kIn}), x.data(), nullptr);
  if (auto st = session.RunGraph(1, {in}, &outputs); !st.ok()) return Fail(st);

  const float* y = outputs.at(0).data_as<float>();
  double max_err = 0;
  for (int64_t r = 0; r < kBatch; ++r) {
    for (int64_t c = 0; c < kOut; ++c) {
      float acc = b[c];
      for (int64_t k = 0; k < kIn; ++k) acc += x[r * kIn + k] * w[k * kOut + c];
      max_err = std::max(max_err, std::fabs(static_cast<double>(std::max(acc, 0.0f) - y[r * kOut + c])));
    }
  }
  auto summary = session.GetCompiledGraphSummary(1);
  std::printf("relu(x.W + b): output %s, %lld tasks, arena %lld bytes, max |err| vs reference loop = %.3g\n",
              outputs[0].desc().ToString().c_str(), static_cast<long long>(summary->task_num),
              static_cast<long long>(summary->feature_memory_size), max_err);
  (void)ge::GEFinalize();
  return max_err < 1e-5 ? 0 : 1;
}
