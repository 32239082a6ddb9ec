// The offline-model API from C++, with no Python: export a small graph to a model file, load
// it back and run it (a model from torchair_ge.dynamo_export loads the same way).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/offline_model.h"
#include "ge/session.h"

namespace {

int Fail(const ge::Status& status) {
  std::fprintf(stderr, "run_model: %s\n", status.ToString().c_str());
  return 1;
}

// y = relu(x * 2 - 1)
std::unique_ptr<ge::Graph> SmallGraph() {
  ge::es::GraphBuilder b("small");
  auto x = b.CreateInput(0, ge::DataType::kFloat, {2, 4});
  b.SetOutputs(
      {ge::es::Relu(x * b.CreateScalar(2.0, ge::DataType::kFloat) - b.CreateScalar(1.0, ge::DataType::kFloat))});
  return std::move(b.Build()).value();
}

}  // namespace

int main(int argc, char** argv) {
  ge::cpu::RegisterCpuDevice();
  if (auto st = ge::GEInitialize(); !st.ok()) return Fail(st);
  const std::string path =
      argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "run_model_example.tgm").string();
  if (auto report = ge::ExportModel(SmallGraph(), {}, path, {{"x"}, {"y"}}); !report.ok()) return Fail(report.status());

  auto model = ge::LoadModel(path);  // checked, verified, compiled for this machine
  if (!model.ok()) return Fail(model.status());
  std::vector<float> x = {-1, 0, 0.25f, 0.5f, 1, 2, 3, 4};
  ge::Tensor input(ge::TensorDesc(ge::DataType::kFloat, {2, 4}), x.data(), nullptr);  // borrowed for the call
  std::vector<ge::Tensor> outputs;
  if (auto st = (*model)->Run({input}, &outputs); !st.ok()) return Fail(st);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = std::max(x[i] * 2 - 1, 0.0f);
    if (std::fabs(outputs[0].data_as<float>()[i] - want) > 1e-6f) {
      std::fprintf(stderr, "run_model: element %zu is %g, expected %g\n", i, outputs[0].data_as<float>()[i], want);
      return 1;
    }
  }
  std::printf("%s: %s -> %s, %zu tasks\n", path.c_str(), (*model)->input_descs()[0].ToString().c_str(),
              outputs[0].desc().ToString().c_str(), (*model)->model()->tasks.size());
  std::filesystem::remove(path);
  return 0;
}
