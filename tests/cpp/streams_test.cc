// Stream assignment and the stream runner: independent branches on streams of their own with
// one wait where they join, a collective on the communication stream, one stream on request;
// results on streams equal to one stream; a task failing on one stream stops every stream.
#include <gtest/gtest.h>

#include "devices/cpu/cpu_device.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/prepare.h"
#include "ge/compiler/schedule.h"
#include "ge/compiler/stream_assign.h"
#include "ge/es/es_ops.h"
#include "ge/runtime/sink_executor.h"
#include "ge/session.h"

namespace ge {
namespace {

// Two products of x with different weights (each worth a stream), joined by an Add; and,
// optionally, an all-reduce of the first branch that the join also reads.
std::unique_ptr<Graph> TwoBranches(bool with_collective = false, const std::string& group = "g") {
  es::GraphBuilder b("branches");
  auto x = b.CreateInput(0, DataType::kFloat, {64, 128});
  auto weight = [&](float scale) {
    std::vector<float> w(128 * 128);
    for (size_t i = 0; i < w.size(); ++i) w[i] = scale * static_cast<float>((i * 7) % 13) / 13.0f;
    return b.CreateConst(Tensor::FromVector<float>(DataType::kFloat, {128, 128}, w));
  };
  auto left = es::Relu(es::MatMulV2(x, weight(0.5f)));
  auto right = es::Tanh(es::MatMulV2(x, weight(-0.25f)));
  auto joined = es::Add(left, right);
  if (with_collective) joined = es::Add(joined, es::HcomAllReduce(es::Neg(left), group, "sum"));
  b.SetOutputs({joined});
  auto graph = std::move(b.Build()).value();
  EXPECT_TRUE(PrepareGraph(*graph).ok());
  return graph;
}

const Node* NodeOfType(const std::vector<Node*>& schedule, const std::string& type, int nth = 0) {
  for (const Node* n : schedule)
    if (n->type() == type && nth-- == 0) return n;
  return nullptr;
}

TEST(StreamAssignTest, IndependentBranchesGetStreamsAndTheJoinWaitsOnce) {
  auto graph = TwoBranches();
  auto schedule = *ScheduleNodes(*graph, TopoStrategy::kBFS);
  const StreamAssignment a = StreamAssignment::Assign(*graph, schedule, {});
  ASSERT_EQ(a.num_streams(), 2);
  const Node* left = NodeOfType(schedule, "MatMulV2", 0);
  const Node* right = NodeOfType(schedule, "MatMulV2", 1);
  const Node* join = NodeOfType(schedule, "Add");
  EXPECT_NE(a.StreamOf(left), a.StreamOf(right));
  EXPECT_FALSE(a.HappensBefore(left, right));
  EXPECT_FALSE(a.HappensBefore(right, left));
  EXPECT_TRUE(a.HappensBefore(left, join));
  EXPECT_TRUE(a.HappensBefore(right, join));
  EXPECT_EQ(a.WaitsOf(join).size(), 1u);  // the other branch; its own arrives in stream order
  EXPECT_EQ(a.StreamOf(graph->DataNodes()[0]), -1);

  StreamOptions single;
  single.single_stream = true;
  EXPECT_EQ(StreamAssignment::Assign(*graph, schedule, single).num_streams(), 1);
  StreamOptions big_branches_only;
  big_branches_only.min_branch_work = 1e12;  // no branch is worth a stream
  EXPECT_EQ(StreamAssignment::Assign(*graph, schedule, big_branches_only).num_streams(), 1);
}

TEST(StreamAssignTest, ACollectiveRunsOnTheCommunicationStreamAndItsReaderWaits) {
  auto graph = TwoBranches(/*with_collective=*/true);
  auto schedule = *ScheduleNodes(*graph, TopoStrategy::kDFS);
  const StreamAssignment a = StreamAssignment::Assign(*graph, schedule, {});
  const Node* collective = NodeOfType(schedule, "HcomAllReduce");
  ASSERT_NE(collective, nullptr);
  const int32_t comm = a.StreamOf(collective);
  for (const Node* n : schedule) {
    if (n != collective && a.StreamOf(n) >= 0) {
      EXPECT_NE(a.StreamOf(n), comm) << n->name();
    }
  }
  const Node* reader = collective->users(0)[0].user;
  const auto& waits = a.WaitsOf(reader);
  EXPECT_NE(std::find(waits.begin(), waits.end(), collective), waits.end());
}

std::vector<float> RunBranches(const Options& options, const std::vector<float>& x, Status* status = nullptr,
                               bool with_collective = false) {
  Options with = options;
  with[option::kAutofuse] = "false";  // it would make one kernel of both products and the join
  Session s(with);
  EXPECT_TRUE(s.AddGraph(1, TwoBranches(with_collective, "no_such_group")).ok());
  Status compiled = s.CompileGraph(1);
  EXPECT_TRUE(compiled.ok()) << compiled.ToString();
  std::vector<Tensor> out;
  Status st;
  for (int run = 0; run < 5 && st.ok(); ++run)
    st = s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {64, 128}), const_cast<float*>(x.data()), nullptr)}, &out);
  if (status != nullptr) *status = st;
  if (!st.ok()) return {};
  EXPECT_EQ(*s.StreamMode(1), options.count(option::kEnableSingleStream) ? "single" : "streams");
  return std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + out[0].desc().NumElements());
}

TEST(StreamRunTest, ResultsOnStreamsEqualOneStream) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  std::vector<float> x(64 * 128);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  const auto one = RunBranches({{option::kEnableSingleStream, "1"}}, x);
  const auto streams = RunBranches({{option::kStreamReplay, "always"}}, x);
  ASSERT_EQ(one.size(), streams.size());
  for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], streams[i], 1e-5f * (1 + std::abs(one[i]))) << i;
}

TEST(StreamRunTest, AFailingTaskStopsEveryStreamWithItsError) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  std::vector<float> x(64 * 128, 0.5f);
  Status status;
  (void)RunBranches({{option::kStreamReplay, "always"}}, x, &status, /*with_collective=*/true);
  ASSERT_FALSE(status.ok());  // the all-reduce names a group nobody made; the join waits for it
  EXPECT_NE(status.ToString().find("HcomAllReduce"), std::string::npos) << status.ToString();
}

// The auto replay's verdict: each streams run against the task-order run next to it, the first
// pair left out; the streams kept only when they save more than kStreamsMustSave leaves.
TEST(StreamReplayTest, AdjacentPairsDecideAndTheStreamsMustClearlyWin) {
  auto judge = [](std::vector<int64_t> task_order, std::vector<int64_t> streams) {
    return JudgeStreamReplay(task_order, streams);
  };
  EXPECT_FALSE(judge(std::vector<int64_t>(kStreamReplayPairs, 100), std::vector<int64_t>(kStreamReplayPairs - 1, 50)));
  // Halved by the streams (mmoe's experts): kept, whatever the first pair says.
  std::vector<int64_t> order(kStreamReplayPairs, 1000), halved(kStreamReplayPairs, 500);
  halved[0] = 5000;
  auto verdict = judge(order, halved);
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->streams);
  EXPECT_DOUBLE_EQ(verdict->ratio, 0.5);
  EXPECT_EQ(verdict->pairs, kStreamReplayPairs - 1);
  // 5% faster on streams: too close to tell from the load of the moment, the task order stays.
  std::vector<int64_t> close(kStreamReplayPairs, 950);
  verdict = judge(order, close);
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->streams);
  // A load that comes and goes: the task order's runs happen to fall into the busy stretches
  // more often, so the medians of each side alone would pick the streams; in two pairs of
  // three the streams are 1.3x slower, and the task order stays.
  std::vector<int64_t> busy_order, busy_streams;
  for (size_t i = 0; i < kStreamReplayPairs; ++i) {
    const int64_t load = i % 3 == 0 ? 1 : 3;  // a third of the pairs quiet
    busy_order.push_back(1000 * load);
    busy_streams.push_back(1300 * (i % 3 == 1 ? 1 : load));  // and one more quiet streams run
  }
  verdict = judge(busy_order, busy_streams);
  ASSERT_TRUE(verdict);
  EXPECT_FALSE(verdict->streams);
}

// Streams taking `streams_ns` against the task order's 1000 in every pair (in the first, left out,
// 100): no verdict one pair short of `pairs` (after the first), then the task order's. Returns
// the streams' times.
std::vector<int64_t> ExpectGivenUpAfter(size_t pairs, int64_t streams_ns) {
  const std::vector<int64_t> order(pairs + 1, 1000);
  std::vector<int64_t> streams(pairs + 1, streams_ns);
  streams[0] = 100;
  EXPECT_FALSE(JudgeStreamReplay(std::vector<int64_t>(order.begin(), order.end() - 1),
                                 std::vector<int64_t>(streams.begin(), streams.end() - 1)));
  const auto verdict = JudgeStreamReplay(order, streams);
  EXPECT_TRUE(verdict.has_value());
  if (verdict) {
    EXPECT_FALSE(verdict->streams);
    EXPECT_DOUBLE_EQ(verdict->ratio, static_cast<double>(streams_ns) / 1000);
    EXPECT_EQ(verdict->pairs, pairs);
  }
  return streams;
}

// Streams no faster in any pair (after the first) are given up after kHopelessStreamPairs pairs;
// one pair they win, or equal times, and the timing runs its course.
TEST(StreamReplayTest, HopelessStreamsAreGivenUpEarly) {
  ASSERT_LT(kHopelessStreamPairs + 1, kStreamReplayPairs);
  const std::vector<int64_t> order(kHopelessStreamPairs + 1, 1000);
  std::vector<int64_t> once_faster = ExpectGivenUpAfter(kHopelessStreamPairs, 1200);  // under kClearlySlowerStreams
  // Slower in all pairs but one: no early verdict, though the median says the streams lose.
  once_faster[2] = 900;
  EXPECT_FALSE(JudgeStreamReplay(order, once_faster));
  // Streams that win by half: no early verdict either way.
  EXPECT_FALSE(JudgeStreamReplay(order, std::vector<int64_t>(order.size(), 500)));
}

// Streams kClearlySlowerStreams slower in both of the first two pairs (after the first) are
// given up then; one of the two under it, and the timing goes on.
TEST(StreamReplayTest, ClearlySlowerStreamsAreGivenUpAfterTwoPairs) {
  std::vector<int64_t> once_close = ExpectGivenUpAfter(kClearlySlowerStreamPairs, 1900);
  once_close[2] = 1200;
  EXPECT_FALSE(JudgeStreamReplay(std::vector<int64_t>(once_close.size(), 1000), once_close));
}

}  // namespace
}  // namespace ge
