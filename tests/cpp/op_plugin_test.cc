// Op plugins: the example library (examples/op_plugin/soft_shrink.c, built by CMake) registers an
// op whose prototype, shape inference and CPU kernel run in the engine like a built-in's.
#include <gtest/gtest.h>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/ops/op_plugin.h"
#include "ge/session.h"

namespace ge {
namespace {

class OpPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
    auto types = LoadOpPlugin(GE_EXAMPLE_OP_PLUGIN);
    ASSERT_TRUE(types.ok()) << types.status().ToString();
    ASSERT_EQ(*types, std::vector<std::string>{"ScaledSoftShrink"});
  }
};

float Reference(float x, float lambd, float scale) {
  return x > lambd ? scale * (x - lambd) : x < -lambd ? scale * (x + lambd) : 0.f;
}

TEST_F(OpPluginTest, PluginOpRunsInAGraphBetweenBuiltins) {
  es::GraphBuilder b("plugin");
  auto x = b.CreateInput(0, DataType::kFloat, {3, 5});
  auto shrunk = b.Op("ScaledSoftShrink", {es::Relu(x) + es::Neg(x)}, {{"lambd", 0.5}, {"scale", 2.0}}, "shrink");
  b.SetOutputs({es::Neg(shrunk.at(0))});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::vector<float> in(15);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) * 0.25f - 1.9f;
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {3, 5}), in.data(), nullptr)}, &out).ok());
  for (size_t i = 0; i < in.size(); ++i) {
    const float v = std::max(in[i], 0.f) - in[i];  // relu(x) + neg(x)
    EXPECT_FLOAT_EQ(out[0].data_as<float>()[i], -Reference(v, 0.5f, 2.0f)) << i;
  }
}

TEST_F(OpPluginTest, PluginShapeInferenceErrorsNameTheNode) {
  es::GraphBuilder b("bad");
  auto x = b.CreateInput(0, DataType::kInt32, {4});
  b.Op("ScaledSoftShrink", {x}, {{"lambd", 0.5}, {"scale", 1.0}}, "int_input");
  ASSERT_FALSE(b.status().ok());
  EXPECT_NE(b.status().message().find("int_input"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("x must be float32"), std::string::npos) << b.status().message();
}

TEST_F(OpPluginTest, LoadingTwiceIsOneRegistrationAndBadLibrariesAreClearErrors) {
  auto again = LoadOpPlugin(GE_EXAMPLE_OP_PLUGIN);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, std::vector<std::string>{"ScaledSoftShrink"});
  auto missing = LoadOpPlugin("/nonexistent/libplugin.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no such file"), std::string::npos);
  auto not_plugin = LoadOpPlugin("/bin/sh");  // not a shared library
  ASSERT_FALSE(not_plugin.ok());
  EXPECT_NE(not_plugin.status().message().find("op plugin '/"), std::string::npos) << not_plugin.status().message();
}

}  // namespace
}  // namespace ge
