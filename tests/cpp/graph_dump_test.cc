// Graph dumps: every format renders, txt parses back to the same graph, onnx parses as a
// ModelProto with one node per IR node, file names never clobber, dump levels pick stages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/ir/annotations.h"
#include "ge/serialize/dot_export.h"
#include "ge/serialize/file_io.h"
#include "ge/serialize/graph_dump.h"
#include "ge/serialize/onnx_export.h"
#include "ge/serialize/py_export.h"
#include "ge/session.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

// relu(x @ w + b) and a ConcatV2 (dynamic input) of it with x; one constant too big to inline.
std::unique_ptr<Graph> SampleGraph() {
  es::GraphBuilder b("sample");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 4}, Format::kND, "x");
  std::vector<float> weights(4 * 300, 0.25f);
  auto w = b.CreateConst(Tensor::FromVector(DataType::kFloat, {4, 300}, weights), "w");
  auto bias = b.CreateScalar(0.5, DataType::kFloat);
  auto h = es::Relu(es::MatMulV2(x, w, {}, {}, false, false) + bias);
  h.value().node->SetAttr(kAttrFxNode, std::string("relu"));
  h.value().node->SetAttr(kAttrSource, std::string("File \"model.py\", line 3: return torch.relu(x)"));
  auto cat = es::ConcatV2({x, x}, b.CreateScalar(1, DataType::kInt64), 2);
  b.SetOutputs({h, cat});
  auto graph = b.Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("torchair_ge_{}_{}", name, ::getpid());
  fs::remove_all(dir);
  return dir;
}

TEST(GraphDumpTest, TextParsesBackToTheSameGraph) {
  auto graph = SampleGraph();
  // The large weight is elided from txt dumps; drop it for the round trip, keep the rest.
  auto text = GraphToText(*graph);
  ASSERT_TRUE(text.ok());
  auto elided = GraphFromText(*text);
  ASSERT_FALSE(elided.ok());
  EXPECT_NE(elided.status().message().find("'w'"), std::string::npos) << elided.status().ToString();
  auto structure = GraphFromText(*text, /*zero_elided_constants=*/true);
  ASSERT_TRUE(structure.ok()) << structure.status().ToString();
  EXPECT_EQ(*GraphToText(**structure), *text);

  es::GraphBuilder b("small");
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto y = es::Mul(x, b.CreateConst(Tensor::FromVector(DataType::kFloat, {3}, std::vector<float>{1, 2, 3})));
  b.SetOutputs({es::ReduceSum(y, b.CreateVector({1}), true)});
  auto small = std::move(b.Build()).value();
  auto small_text = GraphToText(*small);
  ASSERT_TRUE(small_text.ok());
  auto back = GraphFromText(*small_text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->num_nodes(), small->num_nodes());
  EXPECT_EQ(*GraphToText(**back), *small_text);
}

TEST(GraphDumpTest, BadTextIsRejectedWithTheReason) {
  EXPECT_FALSE(GraphFromText("op { this is not a graph").ok());
  auto dangling = GraphFromText(
      "name: \"g\" op { name: \"a\" type: \"Relu\" input: \"nowhere:0\" output_desc { dtype: \"DT_FLOAT\" } }");
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.status().message().find("nowhere:0"), std::string::npos);
  auto bad_dtype = GraphFromText("name: \"g\" op { name: \"a\" type: \"Data\" output_desc { dtype: \"DT_NOPE\" } }");
  EXPECT_FALSE(bad_dtype.ok());
  auto bad_index = GraphFromText(
      "op { name: \"a\" type: \"Data\" attr { key: \"index\" value { i: 0 } } output_desc { dtype: \"DT_FLOAT\" } }"
      "op { name: \"b\" type: \"NetOutput\" input: \"a:7\" }");
  ASSERT_FALSE(bad_index.ok());
  EXPECT_NE(bad_index.status().message().find("no output 7"), std::string::npos);
}

// (onnx.checker and the onnx package's parser run on these dumps in tests/python/test_debug_dump.py.)
TEST(GraphDumpTest, OnnxHasOneNodePerIrNodeAndTypedValues) {
  auto graph = SampleGraph();
  auto bytes = GraphToOnnx(*graph);
  ASSERT_TRUE(bytes.ok());
  EXPECT_GT(bytes->size(), 100u);
  auto text = GraphToOnnxText(*graph);
  ASSERT_TRUE(text.ok());
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (size_t at = text->find(needle); at != std::string::npos; at = text->find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\n  node {"), graph->num_nodes());
  EXPECT_EQ(count(fmt::format("domain: \"{}\"", kOnnxDomain)), graph->num_nodes() + 1);  // + the opset import
  EXPECT_EQ(count("\n  input {"), 1);
  EXPECT_EQ(count("\n  output {"), 2);
  EXPECT_NE(text->find("op_type: \"MatMulV2\""), std::string::npos);
  EXPECT_NE(text->find("doc_string: \"File \\\"model.py\\\", line 3"), std::string::npos) << *text;
  EXPECT_NE(text->find("elem_type: 1"), std::string::npos);
}

TEST(GraphDumpTest, DotAndPythonNameEveryNode) {
  auto graph = SampleGraph();
  auto dot = GraphToDot(*graph);
  ASSERT_TRUE(dot.ok());
  auto py = GraphToPython(*graph, "sample.bin");
  ASSERT_TRUE(py.ok());
  for (Node* node : graph->nodes()) {
    EXPECT_NE(dot->find(node->name()), std::string::npos) << node->name();
    if (node->type() != kOpNetOutput) {  // replayed as b.set_outputs(...)
      EXPECT_NE(py->script.find("\"" + node->name() + "\""), std::string::npos) << node->name();
    }
  }
  EXPECT_EQ(dot->substr(0, 7), "digraph");
  // The 4x300 float weight goes to the sidecar, byte for byte.
  EXPECT_EQ(py->sidecar.size(), 4u * 300u * sizeof(float));
  EXPECT_NE(py->script.find("_sidecar(0, 4800)"), std::string::npos);
  // ConcatV2's dynamic input is replayed as a list.
  EXPECT_NE(py->script.find("b.op(\"ConcatV2\", [[n0[0], n0[0]], "), std::string::npos) << py->script;
}

TEST(GraphDumpTest, FormatsParseAndFilesNeverClobber) {
  auto formats = ParseDumpFormats("txt,onnx,dot");
  ASSERT_TRUE(formats.ok());
  EXPECT_EQ(formats->size(), 3u);
  EXPECT_FALSE(ParseDumpFormats("txt,svg").ok());
  EXPECT_FALSE(ParseDumpFormats("txt,txt").ok());
  EXPECT_FALSE(ParseDumpFormats("").ok());

  const fs::path dir = FreshDir("clobber");
  auto graph = SampleGraph();
  auto first = DumpGraph(*graph, DumpFormat::kTxt, dir.string(), "g");
  auto second = DumpGraph(*graph, DumpFormat::kTxt, dir.string(), "g");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first, *second);
  EXPECT_TRUE(fs::exists(*first) && fs::exists(*second));
  auto py = DumpGraph(*graph, DumpFormat::kPy, dir.string(), "g");
  ASSERT_TRUE(py.ok());
  EXPECT_EQ(fs::file_size(dir / "g.bin"), 4u * 300u * sizeof(float));
  EXPECT_EQ(SafeFileName("a/b:c d"), "a_b_c_d");
  fs::remove_all(dir);
}

class DumpStagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }
  // The dump files written for one compile, by name.
  std::set<std::string> Compile(const std::string& formats, const std::string& level, const fs::path& dir) {
    Session s(Options{
        {option::kGraphDumpType, formats}, {option::kGraphDumpPath, dir.string()}, {option::kGraphDumpLevel, level}});
    EXPECT_TRUE(s.AddGraph(7, SampleGraph()).ok());
    Status st = s.CompileGraph(7);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
    return names;
  }
};

TEST_F(DumpStagesTest, LevelsPickStagesAndFinalIsAnnotated) {
  const std::string pid = std::to_string(::getpid());
  const fs::path all_dir = FreshDir("level_all");
  auto all = Compile("txt", "all", all_dir);
  for (const char* stage :
       {"00_original", "01_prepare", "02_optimize_original", "03_optimize_stage1", "04_optimize_stage2",
        "05_collective_copies", "06_autofuse", "07_partition", "08_memory", "09_final"})
    EXPECT_TRUE(all.count(fmt::format("graph_7_pid{}_{}.txt", pid, stage))) << stage;
  // Level "all" also dumps after each pass that changed the graph: <NN>.<k>_<stage>_<pass>.
  // No pass changes the sample graph, so these are all:
  EXPECT_EQ(all.size(), 10u);
  const std::string final_text = ReadFile(all_dir / fmt::format("graph_7_pid{}_09_final.txt", pid));
  for (const char* annotation :
       {kAttrEngine, kAttrStream, kAttrMemOffsets, kAttrMemSizes, kAttrPlacement, kAttrFxNode, kAttrSource})
    EXPECT_NE(final_text.find(annotation), std::string::npos) << annotation;

  const fs::path key_dir = FreshDir("level_key");
  auto key = Compile("txt,dot", "key", key_dir);
  EXPECT_EQ(key.size(), 6u);  // original, the optimized graph (last optimizer stage), final; two formats each
  EXPECT_TRUE(key.count(fmt::format("graph_7_pid{}_04_optimize_stage2.dot", pid)));

  const fs::path final_dir = FreshDir("level_final");
  auto last = Compile("onnx", "final", final_dir);
  EXPECT_EQ(last, std::set<std::string>{fmt::format("graph_7_pid{}_09_final.onnx", pid)});

  Session bad(Options{{option::kGraphDumpType, "svg"}});
  ASSERT_TRUE(bad.AddGraph(1, SampleGraph()).ok());
  EXPECT_FALSE(bad.CompileGraph(1).ok());
  Session bad_level(Options{{option::kGraphDumpType, "txt"}, {option::kGraphDumpLevel, "most"}});
  const Status st = bad_level.AddGraph(1, SampleGraph());  // a bad option value is refused when it arrives
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ge.graphDumpLevel='most' is not supported"), std::string::npos) << st.message();
  for (const auto& dir : {all_dir, key_dir, final_dir}) fs::remove_all(dir);
}

}  // namespace
}  // namespace ge
