// Model files: export -> load -> run equals the session's run; the loader refuses corrupted,
// truncated, forged and inconsistent files with clear errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/offline_model.h"
#include "ge/serialize/model_file.h"
#include "ge/session.h"
#include "model_forge.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 8, kCols = 160;  // the weight (160x160 floats) goes to the weights file

std::vector<float> Values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> out(n);
  for (float& v : out) v = dist(gen);
  return out;
}

// tanh(relu(x @ w + b) * 0.5 - x): a library product, then a fusible chain.
std::unique_ptr<Graph> MlpGraph() {
  es::GraphBuilder b("mlp");
  auto x = b.CreateInput(0, DataType::kFloat, {kRows, kCols});
  auto w = b.CreateConst(Tensor::FromVector(DataType::kFloat, {kCols, kCols}, Values(kCols * kCols, 1)));
  auto bias = b.CreateConst(Tensor::FromVector(DataType::kFloat, {kCols}, Values(kCols, 2)));
  auto half = b.CreateScalar(0.5, DataType::kFloat);
  auto y = es::Tanh(es::Relu(es::MatMulV2(x, w) + bias) * half - x);
  b.SetOutputs({y});
  return std::move(b.Build()).value();
}

class OfflineModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
    dir_ = fs::temp_directory_path() / ("ge_offline_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "mlp.tgm").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Export() {
    auto report = ExportModel(MlpGraph(), {}, path_, {{"x"}, {"y"}});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_GE(report->kernels, 1);
  }
  std::string Load(const std::string& path) {
    auto model = LoadModel(path);
    return model.ok() ? std::string() : model.status().ToString();
  }
  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void WriteAll(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  void Forge(testing::Forgery forgery) { ASSERT_TRUE(testing::ForgeModelFile(path_, forgery).ok()); }

  fs::path dir_;
  std::string path_;
};

TEST_F(OfflineModelTest, LoadedModelRunsLikeTheSession) {
  Export();
  EXPECT_TRUE(fs::exists(path_ + ".weights"));  // the 100 KiB weight is not inline
  auto model = LoadModel(path_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE((*model)->plan_checked());
  EXPECT_EQ((*model)->input_names(), std::vector<std::string>{"x"});
  ASSERT_EQ((*model)->input_descs().size(), 1u);

  Session session;
  ASSERT_TRUE(session.AddGraph(1, MlpGraph()).ok());
  ASSERT_TRUE(session.CompileGraph(1).ok());
  std::vector<float> x = Values(kRows * kCols, 3);
  const Tensor input(TensorDesc(DataType::kFloat, {kRows, kCols}), x.data(), nullptr);
  std::vector<Tensor> loaded, compiled;
  ASSERT_TRUE((*model)->Run({input}, &loaded).ok());
  ASSERT_TRUE(session.RunGraph(1, {input}, &compiled).ok());
  ASSERT_EQ(loaded.size(), 1u);
  ASSERT_EQ(loaded[0].desc(), compiled[0].desc());
  EXPECT_EQ(std::memcmp(loaded[0].data(), compiled[0].data(), static_cast<size_t>(loaded[0].nbytes())), 0);
  EXPECT_TRUE(std::isfinite(loaded[0].data_as<float>()[0]));
}

TEST_F(OfflineModelTest, CorruptedTruncatedAndForeignFilesAreClearErrors) {
  Export();
  const std::string good = ReadAll(path_);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  WriteAll(path_, flipped);
  EXPECT_NE(Load(path_).find("checksum does not match"), std::string::npos) << Load(path_);
  WriteAll(path_, good.substr(0, good.size() - 7));
  EXPECT_NE(Load(path_).find("truncated"), std::string::npos) << Load(path_);
  WriteAll(path_, good.substr(0, 20));
  EXPECT_NE(Load(path_).find("shorter than the 64-byte header"), std::string::npos) << Load(path_);
  WriteAll(path_, "PK\x03\x04" + good.substr(4));
  EXPECT_NE(Load(path_).find("magic"), std::string::npos) << Load(path_);
  std::string future = good;
  future[8] = 9;
  WriteAll(path_, future);
  EXPECT_NE(Load(path_).find("format version 9 is not supported"), std::string::npos) << Load(path_);
  EXPECT_NE(Load((dir_ / "missing.tgm").string()).find("cannot open"), std::string::npos);
}

TEST_F(OfflineModelTest, BadWeightsFilesAreClearErrors) {
  Export();
  const std::string weights = ReadAll(path_ + ".weights");
  std::string flipped = weights;
  flipped[100] ^= 1;
  WriteAll(path_ + ".weights", flipped);
  EXPECT_NE(Load(path_).find("is corrupted"), std::string::npos) << Load(path_);
  WriteAll(path_ + ".weights", weights.substr(0, weights.size() / 2));
  EXPECT_NE(Load(path_).find("the model file says"), std::string::npos) << Load(path_);
  fs::remove(path_ + ".weights");
  EXPECT_NE(Load(path_).find("cannot open"), std::string::npos) << Load(path_);
  WriteAll(path_ + ".weights", weights);
  Forge(testing::Forgery::kWeightsPath);
  EXPECT_NE(Load(path_).find("not a plain file name"), std::string::npos) << Load(path_);
}

// Forged files with a valid checksum: every field is still checked.
TEST_F(OfflineModelTest, ForgedContentsAreRefused) {
  Export();
  const std::string good = ReadAll(path_);
  Forge(testing::Forgery::kWeightOffset);
  EXPECT_NE(Load(path_).find("are not an aligned range"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  Forge(testing::Forgery::kWeightShape);
  EXPECT_NE(Load(path_).find("external constant of"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  Forge(testing::Forgery::kPlanOffset);
  EXPECT_NE(Load(path_).find("recorded plan is not the plan of its graph"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  Forge(testing::Forgery::kKernelIr);
  EXPECT_NE(Load(path_).find("kernel IR of"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  Forge(testing::Forgery::kForeignOption);
  EXPECT_NE(Load(path_).find("not one that shapes a plan"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  Forge(testing::Forgery::kDanglingInput);
  EXPECT_NE(Load(path_).find("names no earlier node"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  Forge(testing::Forgery::kMatMulShape);
  EXPECT_NE(Load(path_).find("MatMulV2"), std::string::npos) << Load(path_);
  WriteAll(path_, good);
  EXPECT_EQ(Load(path_), "");
}

}  // namespace
}  // namespace ge
