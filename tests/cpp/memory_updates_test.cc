// Updates of graph inputs (Assign(input, f(input, ...)): optimizer steps, running statistics):
// the new value is computed in the input's own bytes when that is safe, and copied over it
// otherwise; either way the caller's tensor ends up holding the new value.
#include <gtest/gtest.h>

#include "devices/cpu/cpu_device.h"
#include "ge/es/es_ops.h"
#include "ge/session.h"

namespace ge {
namespace {

struct UpdateRun {
  int64_t updates_in_input = 0;
  std::vector<float> param;                 // the caller's tensor after the run
  std::vector<std::vector<float>> outputs;  // the graph's outputs
};

class MemoryUpdatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }

  // Runs `graph` (inputs: param [2, 3], grad [2, 3]) once.
  static UpdateRun Run(std::unique_ptr<Graph> graph, bool autofuse) {
    Session s(Options{{option::kAutofuse, autofuse ? "true" : "false"}});
    UpdateRun run;
    run.param = {1, 2, 3, 4, 5, 6};
    std::vector<float> grad = {10, 20, 30, 40, 50, 60};
    EXPECT_TRUE(s.AddGraph(1, std::move(graph)).ok());
    Status st = s.CompileGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    run.updates_in_input = s.GetCompiledGraphSummary(1)->updates_in_input;
    std::vector<Tensor> out;
    const TensorDesc desc(DataType::kFloat, {2, 3});
    st = s.RunGraph(1, {Tensor(desc, run.param.data(), nullptr), Tensor(desc, grad.data(), nullptr)}, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    for (const Tensor& t : out)
      run.outputs.emplace_back(t.data_as<float>(), t.data_as<float>() + t.desc().NumElements());
    return run;
  }
};

// param -= 0.1 * grad, its only reader the update itself.
std::unique_ptr<Graph> SgdStep(bool read_old_after) {
  es::GraphBuilder b("sgd");
  auto param = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto grad = b.CreateInput(1, DataType::kFloat, {2, 3});
  auto updated = es::Sub(param, es::Mul(grad, b.CreateScalar(0.1, DataType::kFloat)));
  auto assigned = es::Assign(param, updated);
  if (read_old_after)  // reads the old and the new value: runs after the update is computed
    b.SetOutputs({assigned, es::Add(param, updated)});
  else
    b.SetOutputs({assigned});
  return std::move(b.Build()).value();
}

TEST_F(MemoryUpdatesTest, AFusedUpdateIsComputedInTheInputsBytes) {
  UpdateRun run = Run(SgdStep(false), /*autofuse=*/true);
  EXPECT_EQ(run.updates_in_input, 1);
  EXPECT_EQ(run.param, (std::vector<float>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(run.outputs[0], run.param);
}

TEST_F(MemoryUpdatesTest, AnElementwiseLibraryKernelWritesTheUpdateInPlaceToo) {
  UpdateRun run = Run(SgdStep(false), /*autofuse=*/false);
  EXPECT_EQ(run.updates_in_input, 1);
  EXPECT_EQ(run.param, (std::vector<float>{0, 0, 0, 0, 0, 0}));
}

TEST_F(MemoryUpdatesTest, AReaderOfTheOldValueAfterTheProducerKeepsTheCopyUnlessFusedWithIt) {
  for (bool autofuse : {false, true}) {
    UpdateRun run = Run(SgdStep(true), autofuse);
    // Fused, the reader joins the update's kernel, which reads each element of param before it
    // stores the new value there: the update goes in place. Unfused, the reader runs after the
    // update's kernel: the new value is copied over param at the end.
    EXPECT_EQ(run.updates_in_input, autofuse ? 1 : 0) << "autofuse " << autofuse;
    EXPECT_EQ(run.param, (std::vector<float>{0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(run.outputs[1], (std::vector<float>{1, 2, 3, 4, 5, 6})) << "old + new, autofuse " << autofuse;
  }
}

TEST_F(MemoryUpdatesTest, AnUpdateFromOtherElementsOfTheInputIsRightFusedOrNot) {
  // param <- param transposed (as [3, 2] -> [2, 3]): element j of the new value reads another
  // element of param. A kernel doing that read and the store would read elements it had already
  // overwritten (KernelIrTest covers which kernels may); here the transpose reads param in a task
  // of its own (a copy of the reshaped input) before the Add that makes the new value runs, so
  // the Add may write into param.
  auto graph = []() {
    es::GraphBuilder b("transpose");
    auto param = b.CreateInput(0, DataType::kFloat, {2, 3});
    auto grad = b.CreateInput(1, DataType::kFloat, {2, 3});
    auto swapped = es::Reshape(es::Transpose(es::Reshape(param, b.CreateVector({3, 2})), b.CreateVector({1, 0})),
                               b.CreateVector({2, 3}));
    b.SetOutputs({es::Assign(param, es::Add(swapped, es::Mul(grad, b.CreateScalar(0.0, DataType::kFloat))))});
    return std::move(b.Build()).value();
  };
  for (bool autofuse : {false, true}) {
    UpdateRun run = Run(graph(), autofuse);
    EXPECT_EQ(run.param, (std::vector<float>{1, 3, 5, 2, 4, 6})) << "autofuse " << autofuse;
  }
}

}  // namespace
}  // namespace ge
