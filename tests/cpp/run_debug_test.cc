// Instrumented runs: .npy encoding, data dumps through a Session (files per task and step, the
// filter), per-task profiles that cover the run, and the EVENT log level.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "devices/cpu/cpu_device.h"
#include "ge/base/logging.h"
#include "ge/es/es_ops.h"
#include "ge/serialize/npy.h"
#include "ge/session.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

TEST(NpyTest, HeaderIsAlignedAndDescribesTheArray) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  auto bytes = EncodeNpy(TensorDesc(DataType::kFloat, {2, 3}), data.data());
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<unsigned char>((*bytes)[8]) | (static_cast<unsigned char>((*bytes)[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = bytes->substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes->size(), 10 + header_len + data.size() * sizeof(float));

  float one = 7;
  auto vec = EncodeNpy(TensorDesc(DataType::kFloat, {1}), &one);
  EXPECT_NE(vec->find("'shape': (1,)"), std::string::npos);
  auto scalar = EncodeNpy(TensorDesc(DataType::kFloat, {}), &one);
  EXPECT_NE(scalar->find("'shape': ()"), std::string::npos);
  // bfloat16 widens to float32: 0x3fc0 is 1.5.
  uint16_t bf16 = 0x3fc0;
  auto widened = EncodeNpy(TensorDesc(DataType::kBFloat16, {1}), &bf16);
  ASSERT_TRUE(widened.ok());
  float back;
  std::memcpy(&back, widened->data() + widened->size() - 4, 4);
  EXPECT_EQ(back, 1.5f);
  EXPECT_NE(widened->find("'<f4'"), std::string::npos);
}

class RunDebugTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }
  // relu(x) * 2 + 1 on 2x3 floats.
  static std::unique_ptr<Graph> Chain() {
    es::GraphBuilder b("chain");
    auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
    auto r = es::Relu(x);
    auto y = es::Add(es::Mul(r, b.CreateScalar(2, DataType::kFloat)), b.CreateScalar(1, DataType::kFloat));
    b.SetOutputs({y});
    return std::move(b.Build()).value();
  }
};

TEST_F(RunDebugTest, DataDumpWritesSelectedTaskOutputsPerStep) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("torchair_ge_data_dump_{}", ::getpid());
  fs::remove_all(dir);
  Session s(Options{{option::kAutofuse, "false"},
                    {option::kDataDumpEnable, "1"},
                    {option::kDataDumpPath, dir.string()},
                    {option::kDataDumpFilter, "^(Relu|Add)$"}});
  ASSERT_TRUE(s.AddGraph(3, Chain()).ok());
  ASSERT_TRUE(s.CompileGraph(3).ok());
  std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  std::vector<Tensor> out;
  for (int run = 0; run < 2; ++run)
    ASSERT_TRUE(s.RunGraph(3, {Tensor(TensorDesc(DataType::kFloat, {2, 3}), x.data(), nullptr)}, &out).ok());
  const fs::path graph_dir = dir / fmt::format("graph_3_pid{}", ::getpid());
  for (const char* step : {"step_000000", "step_000001"}) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(graph_dir / step)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    ASSERT_EQ(names.size(), 2u) << step;  // Relu and Add; Mul filtered out
    EXPECT_TRUE(names[0].rfind("Add", 0) == 0 && names[1].rfind("Relu", 0) == 0) << names[0] << " " << names[1];
  }
  fs::remove_all(dir);

  Session bad(Options{{option::kDataDumpEnable, "1"}, {option::kDataDumpFilter, "(unclosed"}});
  ASSERT_TRUE(bad.AddGraph(1, Chain()).ok());
  Status st = bad.CompileGraph(1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a regular expression"), std::string::npos);
}

TEST_F(RunDebugTest, ProfileTimesEveryTaskInsideTheRun) {
  Session s(Options{{option::kProfilingEnable, "1"}, {option::kAutofuse, "false"}});
  ASSERT_TRUE(s.AddGraph(4, Chain()).ok());
  ASSERT_TRUE(s.CompileGraph(4).ok());
  std::vector<float> x(6, 1.0f);
  std::vector<Tensor> out;
  for (int run = 0; run < 3; ++run)
    ASSERT_TRUE(s.RunGraph(4, {Tensor(TensorDesc(DataType::kFloat, {2, 3}), x.data(), nullptr)}, &out).ok());
  auto profile = s.TakeProfile(4);
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->runs.size(), 3u);
  EXPECT_EQ(profile->task_types, (std::vector<std::string>{"Relu", "Mul", "Add"}));
  EXPECT_EQ(profile->task_engines, (std::vector<std::string>{"native", "native", "native"}));
  for (const RunProfile& run : profile->runs) {
    ASSERT_EQ(run.tasks.size(), 3u);
    int64_t previous_end = run.start_ns;
    for (auto [start, end] : run.tasks) {
      EXPECT_LE(previous_end, start);
      EXPECT_LE(start, end);
      previous_end = end;
    }
    EXPECT_LE(previous_end, run.end_ns);
  }
  EXPECT_TRUE(s.TakeProfile(4)->runs.empty());  // taken

  Session plain;
  ASSERT_TRUE(plain.AddGraph(5, Chain()).ok());
  ASSERT_TRUE(plain.CompileGraph(5).ok());
  ASSERT_TRUE(plain.RunGraph(5, {Tensor(TensorDesc(DataType::kFloat, {2, 3}), x.data(), nullptr)}, &out).ok());
  EXPECT_TRUE(plain.TakeProfile(5)->runs.empty());  // profiling off: nothing recorded
  Session bad(Options{{option::kProfilingEnable, "yes"}});
  EXPECT_FALSE(bad.AddGraph(1, Chain()).ok());
}

TEST(LogLevelTest, EventShowsTimingsAndWarnings) {
  const LogLevel before = CurrentLogLevel();
  SetLogLevel(LogLevel::kEvent);
  EXPECT_TRUE(LogEnabled(LogLevel::kEvent));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarning));
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  SetLogLevel(LogLevel::kInfo);
  EXPECT_TRUE(LogEnabled(LogLevel::kEvent));
  SetLogLevel(LogLevel::kWarning);
  EXPECT_FALSE(LogEnabled(LogLevel::kEvent));
  EXPECT_EQ(ParseLogLevel("EVENT", LogLevel::kOff), LogLevel::kEvent);
  EXPECT_EQ(ParseLogLevel("5", LogLevel::kOff), LogLevel::kEvent);
  SetLogLevel(before);
}

}  // namespace
}  // namespace ge
