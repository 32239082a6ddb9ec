// Kernel workspaces: scratch a kernel asks for (KernelFactory::Workspaces) is an arena value
// live only while its task runs, so it reuses memory like any tensor and a run allocates none.
#include <gtest/gtest.h>

#include <algorithm>

#include "devices/cpu/cpu_device.h"
#include "ge/compiler/memory_plan.h"
#include "ge/compiler/schedule.h"
#include "ge/es/es_ops.h"
#include "ge/ir/annotations.h"
#include "ge/session.h"

namespace ge {
namespace {

// A device that wants, for every Relu, scratch the size of its output.
class ScratchyKernels final : public KernelFactory {
 public:
  bool Supports(const std::string&) const override { return true; }
  std::vector<std::string> SupportedOps() const override { return {}; }
  std::vector<TensorDesc> Workspaces(const std::string& op_type, const std::vector<TensorDesc>&,
                                     const std::vector<TensorDesc>& outputs, const AttrMap&) const override {
    if (op_type != "Relu") return {};
    return {outputs.at(0)};
  }
};

struct Bytes {
  int64_t begin, end;
  bool Overlaps(const Bytes& o) const { return begin < o.end && o.begin < end; }
};

TEST(MemoryWorkspaceTest, WorkspacesLiveOnlyAtTheirTaskAndOverlapNothingLiveThere) {
  es::GraphBuilder b("scratch");
  auto x = b.CreateInput(0, DataType::kFloat, {1024});
  auto a = es::Exp(x);
  auto r1 = es::Relu(a);            // scratch 4 KiB while it runs
  auto r2 = es::Relu(es::Neg(r1));  // again: the same bytes may serve both
  b.SetOutputs({es::Add(r2, a)});
  auto graph = std::move(b.Build()).value();
  auto schedule = *ScheduleNodes(*graph, TopoStrategy::kDFS);
  ScratchyKernels kernels;
  for (bool reuse : {true, false}) {
    auto layout = PlanMemory(*graph, schedule, {reuse, &kernels});
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    AnnotateMemory(*graph, schedule, *layout);
    EXPECT_EQ(layout->workspace_bytes, 2 * 4096);
    ASSERT_EQ(layout->workspace_ids.size(), 2u);
    // Every workspace: inside the arena, and clear of every arena value live at its step.
    std::vector<int32_t> step_of_value(layout->values.size(), -1), last_use(layout->values.size(), -1);
    for (size_t s = 0; s < schedule.size(); ++s) {
      const Node* node = schedule[s];
      for (int o = 0; o < node->num_outputs(); ++o) {
        const int32_t id = layout->value_ids.at(node)[static_cast<size_t>(o)];
        step_of_value[static_cast<size_t>(id)] = static_cast<int32_t>(s);
        for (const Use& use : node->users(o))
          last_use[static_cast<size_t>(id)] =
              std::max(last_use[static_cast<size_t>(id)],
                       static_cast<int32_t>(std::find(schedule.begin(), schedule.end(), use.user) - schedule.begin()));
      }
    }
    for (const auto& [node, ids] : layout->workspace_ids) {
      const auto step = static_cast<int32_t>(std::find(schedule.begin(), schedule.end(), node) - schedule.begin());
      ASSERT_EQ(ids.size(), 1u);
      const ValueInfo& ws = layout->values[static_cast<size_t>(ids[0])];
      EXPECT_EQ(ws.placement, Placement::kArena);
      EXPECT_EQ(ws.offset % 64, 0);
      const Bytes ws_bytes{ws.offset, ws.offset + ws.desc.ByteSize()};
      EXPECT_LE(ws_bytes.end, layout->arena_size);
      for (size_t id = 0; id < layout->values.size(); ++id) {
        const ValueInfo& v = layout->values[id];
        if (v.placement != Placement::kArena || static_cast<int32_t>(id) == ids[0] || step_of_value[id] < 0) continue;
        const bool live = step_of_value[id] <= step && step <= std::max(last_use[id], step_of_value[id]);
        if (live) {
          EXPECT_FALSE(ws_bytes.Overlaps({v.offset, v.offset + v.desc.ByteSize()}))
              << v.producer << " vs " << ws.producer;
        }
      }
      EXPECT_EQ(node->GetAttrOr<std::vector<int64_t>>(kAttrWorkspaceOffsets, {}), std::vector<int64_t>{ws.offset});
      EXPECT_EQ(node->GetAttrOr<std::vector<int64_t>>(kAttrWorkspaceSizes, {}), std::vector<int64_t>{4096});
    }
    EXPECT_GE(layout->arena_size, layout->arena_lower_bound);
    if (!reuse) {
      EXPECT_EQ(layout->arena_size, layout->arena_no_reuse);
    }
  }
}

TEST(MemoryWorkspaceTest, MaxPoolScratchIsArenaWorkspace) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  es::GraphBuilder b("pool");
  auto x = b.CreateInput(0, DataType::kFloat, {1, 2, 4, 6});
  auto pooled = es::MaxPoolV3(es::Neg(x), {1, 1, 2, 2}, {1, 1, 2, 2});  // [1, 2, 2, 3]
  b.SetOutputs({es::Relu(pooled)});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(b.Build()).value()).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  const auto summary = *s.GetCompiledGraphSummary(1);
  // channels-last copies of x (48 floats) and y (12 floats), int64 argmax per output element
  EXPECT_EQ(summary.workspace_bytes, 48 * 4 + 12 * 4 + 12 * 8);
  EXPECT_GE(summary.feature_memory_size, summary.arena_lower_bound);
  std::vector<float> data(48);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  auto device = *DeviceRegistry::Get("cpu");
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {1, 2, 4, 6}), data.data(), nullptr)}, &out).ok());
  const int64_t before = device->allocations();
  for (int run = 0; run < 10; ++run)
    ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {1, 2, 4, 6}), data.data(), nullptr)}, &out).ok());
  EXPECT_EQ(device->allocations() - before, 10);  // the output only
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        float m = -1e9f;
        for (int di = 0; di < 2; ++di)
          for (int dj = 0; dj < 2; ++dj)
            m = std::max(m, -data[static_cast<size_t>(c * 24 + (2 * i + di) * 6 + 2 * j + dj)]);
        EXPECT_FLOAT_EQ(out[0].data_as<float>()[c * 6 + i * 3 + j], std::max(m, 0.0f));
      }
}

}  // namespace
}  // namespace ge
