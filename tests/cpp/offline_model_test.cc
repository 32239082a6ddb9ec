// Model files: export -> load -> run equals the session's run; the loader refuses corrupted,
// truncated, forged and inconsistent files with clear errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/offline_model.h"
#include "ge/serialize/model_file.h"
#include "ge/session.h"
#include "ge/symbolic/size_template.h"
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
std::unique_ptr<Graph> MlpGraph(int64_t rows = kRows) {
  es::GraphBuilder b("mlp");
  auto x = b.CreateInput(0, DataType::kFloat, {rows, kCols});
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

// The MLP with a symbolic row count s0: its one size site is the input's dim 0.
SizeTemplate RowsTemplate(int64_t max_rows = 64) {
  SizeTemplate sizes;
  sizes.symbols.push_back({"s0", 0, 0, 2, max_rows});
  sizes.sites.push_back({"arg0", SizeSiteKind::kInputDim, "", 0, SymExpr::Symbol(0)});
  return sizes;
}

TEST_F(OfflineModelTest, ModelWithSymbolicSizesRunsEverySizeLikeAStaticExport) {
  auto report = ExportSizeTemplate(*MlpGraph(), RowsTemplate(), {kRows}, {}, path_, {{"x"}, {"y"}});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto model = LoadModel(path_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE((*model)->dynamic());
  EXPECT_EQ((*model)->input_descs()[0].shape, (Shape{-1, kCols}));
  EXPECT_EQ((*model)->model(), nullptr);  // no instance before the first call
  for (int64_t rows : {5, 8, 5, 3}) {
    const std::string fixed = (dir_ / ("fixed" + std::to_string(rows) + ".tgm")).string();
    ASSERT_TRUE(ExportModel(MlpGraph(rows), {}, fixed).ok());
    auto expected_model = LoadModel(fixed);
    ASSERT_TRUE(expected_model.ok()) << expected_model.status().ToString();
    std::vector<float> x = Values(static_cast<size_t>(rows * kCols), 4);
    const Tensor input(TensorDesc(DataType::kFloat, {rows, kCols}), x.data(), nullptr);
    std::vector<Tensor> got, want;
    ASSERT_TRUE((*model)->Run({input}, &got).ok());
    ASSERT_TRUE((*expected_model)->Run({input}, &want).ok());
    ASSERT_EQ(got[0].desc(), want[0].desc());
    EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), static_cast<size_t>(got[0].nbytes())), 0) << rows;
  }
  EXPECT_EQ((*model)->num_instances(), 3u);
  // MemoryAware (the default) planned every candidate order for the first instance only; the
  // later ones scheduled in the order it kept.
  const std::vector<int> planned = (*model)->orders_planned();
  ASSERT_EQ(planned.size(), 3u);
  EXPECT_GT(planned[0], 1);
  EXPECT_EQ(planned[1], 1);
  EXPECT_EQ(planned[2], 1);
  std::vector<float> wide(70 * kCols);
  std::vector<Tensor> out;
  const Status outside = (*model)->Run({Tensor(TensorDesc(DataType::kFloat, {70, kCols}), wide.data(), nullptr)}, &out);
  EXPECT_NE(outside.message().find("outside the range [2, 64]"), std::string::npos) << outside.ToString();
  const Status wrong_cols = (*model)->Run({Tensor(TensorDesc(DataType::kFloat, {4, 7}), wide.data(), nullptr)}, &out);
  EXPECT_NE(wrong_cols.message().find("expects [4,160]"), std::string::npos) << wrong_cols.ToString();
}

// x + positions, positions = Range(0, rows) as floats in a column: a value computed from a size
// only. Sites: the input's rows, the Range's limit and the column's shape.
std::unique_ptr<Graph> PositionsGraph(int64_t rows) {
  es::GraphBuilder b("positions");
  auto x = b.CreateInput(0, DataType::kFloat, {rows, 4});
  auto limit = b.CreateConst(Tensor::FromVector(DataType::kInt64, {}, std::vector<int64_t>{rows}), "limit");
  auto column = b.CreateConst(Tensor::FromVector(DataType::kInt64, {2}, std::vector<int64_t>{rows, 1}), "column");
  auto positions = es::Range(b.CreateScalar(0, DataType::kInt64), limit, b.CreateScalar(1, DataType::kInt64));
  b.SetOutputs({x + es::Reshape(es::Cast(positions, DataType::kFloat), column)});
  return std::move(b.Build()).value();
}

SizeTemplate PositionsTemplate() {
  SizeTemplate sizes;
  sizes.symbols.push_back({"s0", 0, 0, 2, 1024});
  sizes.sites.push_back({"arg0", SizeSiteKind::kInputDim, "", 0, SymExpr::Symbol(0)});
  sizes.sites.push_back({"limit", SizeSiteKind::kConstElement, "", 0, SymExpr::Symbol(0)});
  sizes.sites.push_back({"column", SizeSiteKind::kConstElement, "", 0, SymExpr::Symbol(0)});
  return sizes;
}

int CountType(const Graph& graph, const std::string& type) {
  int n = 0;
  for (const Node* node : graph.nodes()) n += node->type() == type ? 1 : 0;
  return n;
}

// An optimized size template: what is computed from a size stays in the graph (folded, the
// Range would be a constant of one size), and an instance compiled from the optimized graph
// skips the optimizer and computes what the whole pipeline computes.
TEST_F(OfflineModelTest, OptimizedInstancesKeepSizeDependentValuesAndSkipTheOptimizer) {
  auto whole = Instantiate(*PositionsGraph(3), PositionsTemplate(), {6});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(CompileForDevice(**whole, {}, CompileScope::kOptimizeOnly).ok());
  EXPECT_EQ(CountType(**whole, "Range"), 0);  // folded without the template's sites
  auto optimized = OptimizeInstance(*PositionsGraph(3), PositionsTemplate(), {6}, {});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_EQ(CountType(**optimized, "Range"), 1);
  EXPECT_EQ((*optimized)->FindNode("arg0")->output_desc(0).shape, (Shape{6, 4}));

  Session session;
  ASSERT_TRUE(session.AddOptimizedGraph(1, std::move(optimized).value()).ok());
  ASSERT_TRUE(session.CompileGraph(1).ok());
  auto summary = session.GetCompiledGraphSummary(1);
  ASSERT_TRUE(summary.ok());
  for (const auto& stage : summary->stages) EXPECT_EQ(stage.name.find("optimize"), std::string::npos) << stage.name;
  std::vector<float> x = Values(6 * 4, 5);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {6, 4}), x.data(), nullptr)}, &out).ok());
  ASSERT_EQ(out[0].desc().shape, (Shape{6, 4}));
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(out[0].data_as<float>()[i], x[static_cast<size_t>(i)] + static_cast<float>(i / 4)) << i;
}

// Threads calling one model with symbolic sizes at different sizes: instances are compiled once
// each, results stay right (make test-tsan runs this under ThreadSanitizer).
TEST_F(OfflineModelTest, ConcurrentRunsAtDifferentSizesOfAModelWithSymbolicSizes) {
  ASSERT_TRUE(ExportSizeTemplate(*MlpGraph(), RowsTemplate(), {kRows}, {}, path_).ok());
  auto model = LoadModel(path_);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 12; ++iter) {
        const int64_t rows = 2 + (t + iter) % 3;
        std::vector<float> x(static_cast<size_t>(rows * kCols), 0.25f * static_cast<float>(t + 1));
        std::vector<Tensor> out;
        if (!(*model)->Run({Tensor(TensorDesc(DataType::kFloat, {rows, kCols}), x.data(), nullptr)}, &out).ok() ||
            out[0].desc().shape != Shape{rows, kCols}) {
          ++failures;
          continue;
        }
        // Every row of a constant input gives the same output row.
        for (int64_t r = 1; r < rows; ++r)
          if (std::memcmp(out[0].data_as<float>(), out[0].data_as<float>() + r * kCols, kCols * sizeof(float)) != 0)
            ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ((*model)->num_instances(), 3u);
}

TEST_F(OfflineModelTest, BadSizeTemplatesInFilesAreClearErrors) {
  auto graph = MlpGraph();
  auto write = [&](SizeTemplate sizes) {
    ModelFileContents file;
    file.engine_version = "0.1.0";
    file.graph = CloneGraph(*graph).value();
    file.sizes = std::move(sizes);
    EXPECT_TRUE(WriteModelFile(path_, file).ok());
    return Load(path_);
  };
  SizeTemplate site_elsewhere = RowsTemplate();
  site_elsewhere.sites[0].node = "no_such_node";
  EXPECT_NE(write(site_elsewhere).find("no such node"), std::string::npos);
  SizeTemplate bad_source = RowsTemplate();
  bad_source.symbols[0].dim = 5;
  EXPECT_NE(write(bad_source).find("does not have"), std::string::npos);
  SizeTemplate bad_range = RowsTemplate();
  bad_range.symbols[0].min = 9;
  bad_range.symbols[0].max = 3;
  EXPECT_NE(write(bad_range).find("bad name or range"), std::string::npos);
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
