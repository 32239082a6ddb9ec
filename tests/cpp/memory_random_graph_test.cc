// Property test over random DAGs (also a property test of auto-fusion: fused on == off) (elementwise ops, broadcasts,
// reshapes, slices and selects that become zero-copy views at an offset into their root): every graph compiles with the
// arena at or above the live-bytes bound and computes the same numbers with memory reuse on and off (a planner that let
// two live values share bytes, or a view outlived by its root, would change them). Also: no run allocates engine
// memory. On several streams: the same numbers, and bytes shared only between values that events
// order.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <map>
#include <random>

#include "devices/cpu/cpu_device.h"
#include "ge/compiler/memory_plan.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/prepare.h"
#include "ge/compiler/schedule.h"
#include "ge/compiler/stream_assign.h"
#include "ge/es/es_ops.h"
#include "ge/session.h"

namespace ge {
namespace {

// A random DAG of elementwise ops over a few shapes; several outputs.
std::unique_ptr<Graph> RandomGraph(std::mt19937& rng, int* inputs) {
  es::GraphBuilder b("random");
  const std::vector<Shape> shapes = {{16}, {4, 16}, {3, 4, 16}, {64}};
  std::vector<std::vector<es::EsTensor>> pool(shapes.size());
  *inputs = 0;
  for (size_t s = 0; s < shapes.size(); ++s) pool[s].push_back(b.CreateInput((*inputs)++, DataType::kFloat, shapes[s]));
  const int nodes = 5 + static_cast<int>(rng() % 40);
  for (int i = 0; i < nodes; ++i) {
    const size_t s = rng() % shapes.size();
    auto pick = [&](size_t shape) { return pool[shape][rng() % pool[shape].size()]; };
    es::EsTensor x = pick(s);
    if (rng() % 6 == 0 && (s == 1 || s == 3)) {  // a reshape between [4, 16] and [64]: a zero-copy view
      const size_t other = s == 1 ? 3 : 1;
      pool[other].push_back(es::Reshape(x, b.CreateVector(shapes[other])));
      continue;
    }
    if (rng() % 6 == 0 && s >= 1) {  // a contiguous block of x: a view `k` blocks into it
      const auto k = static_cast<int64_t>(rng() % 3);
      auto range = [&](int64_t begin, int64_t end) {
        return std::array{b.CreateVector({begin}), b.CreateVector({end}), b.CreateVector({0}), b.CreateVector({1})};
      };
      if (s == 3) {  // [64] -> [16]
        auto r = range(16 * k, 16 * k + 16);
        pool[0].push_back(es::StridedSliceV2(x, r[0], r[1], r[2], r[3]));
      } else if (s == 1) {  // [4, 16] -> row k: [16]
        pool[0].push_back(
            es::GatherV2(x, b.CreateScalar(static_cast<double>(k), DataType::kInt64), b.CreateVector({0})));
      } else {  // [3, 4, 16] -> [1, 4, 16] -> [4, 16]
        auto r = range(k, k + 1);
        pool[1].push_back(es::Reshape(es::StridedSliceV2(x, r[0], r[1], r[2], r[3]), b.CreateVector(shapes[1])));
      }
      continue;
    }
    switch (rng() % 5) {
      case 0: pool[s].push_back(es::Relu(x)); break;
      case 1: pool[s].push_back(es::Neg(x)); break;
      case 2: pool[s].push_back(es::Add(x, pick(s))); break;
      case 3: pool[s].push_back(es::Mul(x, pick(s))); break;
      default: {  // broadcast from a smaller shape ([16] into [4,16] and [3,4,16]; [64] only itself)
        const size_t small = s == 3 ? 3 : rng() % (s + 1);
        pool[s].push_back(es::Sub(x, pick(small)));
      }
    }
  }
  std::vector<es::EsTensor> outs;
  for (auto& values : pool)
    if (values.size() > 1) outs.push_back(values.back());
  if (outs.empty()) outs.push_back(es::Neg(pool[0][0]));
  b.SetOutputs(outs);
  return std::move(b.Build()).value();
}

TEST(MemoryRandomGraphTest, ReuseKeepsNumbersAndArenasStayNearTheBound) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  std::mt19937 rng(7);
  double worst = 1.0;
  int64_t views = 0, fused_kernels = 0, streamed = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::mt19937 replay = rng;
    int n_inputs = 0;
    std::vector<std::vector<std::vector<float>>> results;
    // Reuse on, reuse off, reuse on without auto-fusion, and on streams (every branch a stream of
    // its own, replayed on the streams, each graph run several times): all must agree bit for bit
    // (the fused kernels do the same float operations in the same order; a plan that let a
    // stream overwrite bytes another stream still reads would change numbers).
    for (const std::string config : {"reuse", "no_reuse", "no_fusion", "streams"}) {
      const char* disable = config == "no_reuse" ? "1" : "0";
      std::mt19937 graph_rng = replay;
      auto graph = RandomGraph(graph_rng, &n_inputs);
      std::vector<std::vector<float>> data;
      std::vector<Tensor> inputs;
      for (Node* d : graph->DataNodes()) {
        const TensorDesc& desc = d->output_desc(0);
        std::vector<float> v(static_cast<size_t>(desc.NumElements()));
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37 + trial) % 11) - 5.0f;
        data.push_back(std::move(v));
        inputs.emplace_back(desc, data.back().data(), nullptr);
      }
      Options options{{option::kDisableReuseMemory, disable},
                      {option::kAutofuse, config == "no_fusion" || config == "streams" ? "false" : "true"}};
      if (config == "streams") {
        options[option::kStreamReplay] = "always";
        options[option::kStreamMinBranchWork] = "1";
        options[option::kComputeStreams] = "3";
      }
      Session s(options);
      ASSERT_TRUE(s.AddGraph(1, std::move(graph)).ok());
      Status st = s.CompileGraph(1);
      ASSERT_TRUE(st.ok()) << st.ToString();
      const auto summary = *s.GetCompiledGraphSummary(1);
      EXPECT_GE(summary.feature_memory_size, summary.arena_lower_bound);
      if (config == "reuse") {
        views += summary.view_values;
        fused_kernels += summary.autofuse.kernels;
        if (summary.arena_lower_bound > 0)
          worst = std::max(worst, static_cast<double>(summary.feature_memory_size) / summary.arena_lower_bound);
      } else if (config == "no_reuse") {
        EXPECT_EQ(summary.feature_memory_size, summary.arena_no_reuse);
      }
      if (config == "streams") streamed += summary.stream_num > 1;
      std::vector<Tensor> outputs;
      for (int run = 0; run < (config == "streams" ? 3 : 1); ++run) ASSERT_TRUE(s.RunGraph(1, inputs, &outputs).ok());
      std::vector<std::vector<float>> values;
      for (const Tensor& t : outputs)
        values.emplace_back(t.data_as<float>(), t.data_as<float>() + t.desc().NumElements());
      results.push_back(std::move(values));
    }
    ASSERT_EQ(results[0], results[1]) << "trial " << trial;
    ASSERT_EQ(results[0], results[2]) << "trial " << trial << ": fused and unfused kernels differ";
    ASSERT_EQ(results[0], results[3]) << "trial " << trial << ": the streams changed the numbers";
    rng.discard(1000);
  }
  EXPECT_LE(worst, 1.10);
  EXPECT_GT(views, 50);           // the reshapes really were views
  EXPECT_GT(fused_kernels, 100);  // and the elementwise chains really were fused
  EXPECT_GT(streamed, 150);       // and most graphs really ran on several streams
  RecordProperty("worst_arena_over_lower_bound", std::to_string(worst));
}

TEST(MemoryRandomGraphTest, RunsAllocateOnlyTheirOutputs) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  auto device = *DeviceRegistry::Get("cpu");
  std::mt19937 rng(11);
  int n_inputs = 0;
  auto graph = RandomGraph(rng, &n_inputs);
  std::vector<std::vector<float>> data;
  std::vector<Tensor> inputs;
  for (Node* d : graph->DataNodes()) {
    data.emplace_back(static_cast<size_t>(d->output_desc(0).NumElements()), 1.0f);
    inputs.emplace_back(d->output_desc(0), data.back().data(), nullptr);
  }
  const size_t outputs = static_cast<size_t>(graph->NetOutputNode()->num_inputs());
  Session s;
  ASSERT_TRUE(s.AddGraph(1, std::move(graph)).ok());
  ASSERT_TRUE(s.CompileGraph(1).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s.RunGraph(1, inputs, &out).ok());  // warm: the program pool is filled
  const int64_t before = device->allocations();
  for (int run = 0; run < 100; ++run) ASSERT_TRUE(s.RunGraph(1, inputs, &out).ok());
  EXPECT_EQ(device->allocations() - before,
            static_cast<int64_t>(100 * outputs));  // the outputs handed back, nothing else
}

}  // namespace
}  // namespace ge

namespace ge {
namespace {

// Values whose arena bytes overlap: the groups of values sharing bytes on purpose (views, outputs
// written over an input) are united first; two different groups may overlap only when every node
// touching one of them happens before the producer of the other.
struct ByteGroup {
  int64_t begin = INT64_MAX, end = 0;
  std::vector<const Node*> touching;  // producers and readers
  std::vector<const Node*> producers;
};

std::vector<ByteGroup> ArenaGroups(const std::vector<Node*>& schedule, const MemoryPlan& plan) {
  std::map<int32_t, int32_t> parent;
  std::function<int32_t(int32_t)> find = [&](int32_t v) {
    auto it = parent.find(v);
    return it == parent.end() || it->second == v ? v : find(it->second);
  };
  auto unite = [&](int32_t a, int32_t b) { parent[find(a)] = find(b); };
  auto id = [&](Value v) { return plan.value_ids.at(v.node)[static_cast<size_t>(v.index)]; };
  for (const Node* node : schedule) {
    if (plan.IsView(node)) unite(plan.value_ids.at(node)[0], id(node->input(0)));
    if (auto w = plan.written_over_input.find(node); w != plan.written_over_input.end())
      unite(plan.value_ids.at(node)[0], id(node->input(w->second)));
  }
  std::map<int32_t, ByteGroup> groups;
  for (const Node* node : schedule)
    for (int o = 0; o < node->num_outputs(); ++o) {
      const int32_t v = plan.value_ids.at(node)[static_cast<size_t>(o)];
      const ValueInfo& info = plan.values[static_cast<size_t>(v)];
      if (info.placement != Placement::kArena) continue;
      ByteGroup& g = groups[find(v)];
      g.begin = std::min(g.begin, info.offset);
      g.end = std::max(g.end, info.offset + info.desc.ByteSize());
      g.touching.push_back(node);
      g.producers.push_back(node);
      for (const Use& use : node->users(o)) g.touching.push_back(use.user);
    }
  std::vector<ByteGroup> out;
  for (auto& [root, g] : groups) out.push_back(std::move(g));
  return out;
}

TEST(MemoryRandomGraphTest, OnStreamsBytesAreSharedOnlyBetweenValuesOrderedByEvents) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  auto device = *DeviceRegistry::Get("cpu");
  std::mt19937 rng(23);
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    int n_inputs = 0;
    auto graph = RandomGraph(rng, &n_inputs);
    ASSERT_TRUE(PrepareGraph(*graph).ok());
    ASSERT_TRUE(PartitionGraph(*graph, device->kernel_factory(), device->name()).ok());
    auto schedule = *ScheduleNodes(*graph, TopoStrategy::kBFS);
    StreamOptions stream_options;
    stream_options.compute_streams = 3;
    stream_options.min_branch_work = 1;
    const StreamAssignment streams = StreamAssignment::Assign(*graph, schedule, stream_options);
    MemoryPlanOptions options;
    options.kernels = &device->kernel_factory();
    options.streams = &streams;
    auto plan = PlanMemory(*graph, schedule, options);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    auto before = [&](const Node* a, const Node* b) {
      return a != b && streams.StreamOf(a) >= 0 && streams.StreamOf(b) >= 0 && streams.HappensBefore(a, b);
    };
    auto all_before = [&](const ByteGroup& x, const ByteGroup& y) {
      for (const Node* t : x.touching) {
        if (t->type() == "NetOutput") return false;
        for (const Node* p : y.producers)
          if (!before(t, p) && t != p) return false;
      }
      return true;
    };
    const auto groups = ArenaGroups(schedule, *plan);
    for (size_t i = 0; i < groups.size(); ++i)
      for (size_t j = i + 1; j < groups.size(); ++j) {
        if (groups[i].end <= groups[j].begin || groups[j].end <= groups[i].begin) continue;
        ++checked;
        EXPECT_TRUE(all_before(groups[i], groups[j]) || all_before(groups[j], groups[i]))
            << "trial " << trial << ": two groups share bytes without an order between them";
      }
  }
  EXPECT_GT(checked, 100);  // bytes really were shared across streams
}

}  // namespace
}  // namespace ge
