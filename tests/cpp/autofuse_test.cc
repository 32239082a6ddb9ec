// Auto-fusion end to end on the CPU device: every supported pattern, fused, gives the unfused
// graph's numbers over odd sizes, broadcasting and float32/float16/bfloat16, in fewer kernels.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include <set>
#include <string_view>
#include <tuple>

#include <ATen/Parallel.h>
#include <ATen/ops/add.h>
#include <ATen/ops/clone.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/relu.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "devices/cpu/cpu_device.h"
#include "devices/cpu/kernels/epilogue_activations.h"
#include "ge/base/half.h"
#include "ge/autofuse/autofuse_stage.h"
#include "ge/autofuse/cpp_vector.h"
#include "ge/autofuse/kernel_builder.h"
#include "ge/es/es_ops.h"
#include "ge/ops/epilogue_activation.h"
#include "ge/ops/op_registry.h"
#include "ge/session.h"
#include "scoped_env.h"

namespace ge {
namespace {

using Build = std::function<std::vector<es::EsTensor>(es::GraphBuilder&, DataType, const std::vector<es::EsTensor>&)>;

struct Inputs {
  std::vector<Shape> shapes;
  std::vector<DataType> dtypes = {};  // kUndefined: the case's dtype
};

class AutofuseTest : public ::testing::TestWithParam<DataType> {
 protected:
  void SetUp() override {
    cpu::RegisterCpuDevice();
    ASSERT_TRUE(GEInitialize().ok());
  }

  static std::vector<uint8_t> RandomBytes(const TensorDesc& desc, std::mt19937& rng) {
    const int64_t n = desc.NumElements();
    std::vector<uint8_t> bytes(static_cast<size_t>(desc.ByteSize()));
    std::normal_distribution<float> normal(0.f, 1.5f);
    for (int64_t i = 0; i < n; ++i) {
      const float v = normal(rng);
      switch (desc.dtype) {
        case DataType::kFloat: std::memcpy(&bytes[static_cast<size_t>(i) * 4], &v, 4); break;
        case DataType::kFloat16: {
          const uint16_t h = FloatToHalfBits(v);
          std::memcpy(&bytes[static_cast<size_t>(i) * 2], &h, 2);
          break;
        }
        case DataType::kBFloat16: {
          const uint16_t h = FloatToBFloat16Bits(v);
          std::memcpy(&bytes[static_cast<size_t>(i) * 2], &h, 2);
          break;
        }
        case DataType::kBool: bytes[static_cast<size_t>(i)] = v > 0.3f; break;
        default: ADD_FAILURE() << "no random data for " << DataTypeName(desc.dtype);
      }
    }
    return bytes;
  }

  static std::vector<float> AsFloats(const Tensor& t) {
    std::vector<float> out;
    for (int64_t i = 0; i < t.desc().NumElements(); ++i) {
      switch (t.desc().dtype) {
        case DataType::kFloat: out.push_back(t.data_as<float>()[i]); break;
        case DataType::kFloat16: out.push_back(HalfBitsToFloat(t.data_as<uint16_t>()[i])); break;
        case DataType::kBFloat16: out.push_back(BFloat16BitsToFloat(t.data_as<uint16_t>()[i])); break;
        case DataType::kBool: out.push_back(t.data_as<uint8_t>()[i] ? 1.f : 0.f); break;
        default: ADD_FAILURE() << "cannot read " << DataTypeName(t.desc().dtype);
      }
    }
    return out;
  }

  struct Result {
    std::vector<std::vector<float>> outputs;
    CompiledGraphSummary summary;
  };

  Result Run(const Build& build, const Inputs& in, DataType dtype, bool fuse, bool run_time_sizes = false,
             const char* codegen = "vector") {
    es::GraphBuilder b("case");
    std::vector<es::EsTensor> graph_inputs;
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const DataType t = i < in.dtypes.size() && in.dtypes[i] != DataType::kUndefined ? in.dtypes[i] : dtype;
      graph_inputs.push_back(b.CreateInput(static_cast<int64_t>(i), t, in.shapes[i]));
    }
    b.SetOutputs(build(b, dtype, graph_inputs));
    auto graph = b.Build();
    EXPECT_TRUE(graph.ok()) << graph.status().ToString();
    std::mt19937 rng(42);
    std::vector<std::vector<uint8_t>> storage;
    std::vector<Tensor> inputs;
    for (Node* d : (*graph)->DataNodes()) {
      storage.push_back(RandomBytes(d->output_desc(0), rng));
      inputs.emplace_back(d->output_desc(0), storage.back().data(), nullptr);
    }
    // One stream: the fused and unfused graphs branch differently, and a product on a one-thread
    // stream sums in another order than on the caller's full width (MKL's blocking follows its
    // thread count: 5e-5 apart at K=256), which is not what these tests compare.
    Session s(Options{{option::kAutofuse, fuse ? "true" : "false"},
                      {option::kKernelRunTimeSizes, run_time_sizes ? "true" : "false"},
                      {option::kKernelCodegen, codegen},
                      {option::kEnableSingleStream, "1"}});
    EXPECT_TRUE(s.AddGraph(1, std::move(graph).value()).ok());
    Status st = s.CompileGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    Result r;
    r.summary = *s.GetCompiledGraphSummary(1);
    std::vector<Tensor> out;
    st = s.RunGraph(1, inputs, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    for (const Tensor& t : out) r.outputs.push_back(AsFloats(t));
    return r;
  }

  // Fused (vector kernels with literal sizes and with sizes read at run time, block kernels) vs
  // unfused: same numbers within the dtype's tolerance, fewer kernels.
  void Check(const std::string& name, const Build& build, const Inputs& in, int max_fused_kernels = 1) {
    const Result plain = Run(build, in, GetParam(), false);
    CheckFused(name, Run(build, in, GetParam(), true), plain, max_fused_kernels);
    CheckFused(name + " (run-time sizes)", Run(build, in, GetParam(), true, true), plain, max_fused_kernels);
    CheckFused(name + " (blocks)", Run(build, in, GetParam(), true, false, "blocks"), plain, max_fused_kernels);
  }

  void CheckFused(const std::string& name, const Result& fused, const Result& plain, int max_fused_kernels) {
    const DataType dtype = GetParam();
    ASSERT_TRUE(fused.summary.autofuse.fallback.empty()) << name << ": " << fused.summary.autofuse.fallback;
    EXPECT_GE(fused.summary.autofuse.kernels, 1) << name;
    EXPECT_LE(fused.summary.autofuse.kernels, max_fused_kernels) << name;
    EXPECT_LT(fused.summary.task_num, plain.summary.task_num) << name;
    // Fused kernels round float16/bfloat16 results where the unfused ops store them; what is
    // left is libm vs our exp/erf (a few ulp) and float accumulation order in reductions.
    const double tol = dtype == DataType::kFloat ? 2e-5 : dtype == DataType::kFloat16 ? 2e-3 : 1.6e-2;
    ASSERT_EQ(fused.outputs.size(), plain.outputs.size());
    for (size_t k = 0; k < fused.outputs.size(); ++k) {
      ASSERT_EQ(fused.outputs[k].size(), plain.outputs[k].size());
      for (size_t i = 0; i < fused.outputs[k].size(); ++i) {
        const float a = fused.outputs[k][i], e = plain.outputs[k][i];
        if (std::isnan(e)) {
          EXPECT_TRUE(std::isnan(a)) << name << " output " << k << " [" << i << "]";
          continue;
        }
        if (std::isinf(e)) {
          EXPECT_EQ(a, e) << name << " output " << k << " [" << i << "]";
          continue;
        }
        ASSERT_NEAR(a, e, tol * (1.0 + std::fabs(e))) << name << " output " << k << " [" << i << "]";
      }
    }
  }
};

uint32_t Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

es::EsTensor Axes(es::GraphBuilder& b, std::vector<int64_t> axes) { return b.CreateVector(axes); }
es::EsTensor Scalar(es::GraphBuilder& b, double v, DataType t) { return b.CreateScalar(v, t); }

TEST_P(AutofuseTest, SoftmaxAndLogSoftmaxOverOddRows) {
  Check(
      "softmax",
      [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        auto x = in[0];
        return std::vector<es::EsTensor>{es::SoftmaxV2(x * Scalar(b, 0.37, t)), es::LogSoftmaxV2(es::Neg(x))};
      },
      {{{3, 5, 37}}}, 2);
}

TEST_P(AutofuseTest, LayerNormWithResidualAndStatistics) {
  Check("residual + layer norm",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto ln = es::LayerNorm(in[0] + in[1], in[2], in[3], -1, -1, 1e-5);
          return std::vector<es::EsTensor>{ln[0], ln[1], ln[2]};
        },
        {{{2, 7, 33}, {2, 7, 33}, {33}, {33}}});
}

// Rows long enough for every unrolled step of the vector loops (16 vectors of 16 lanes with
// AVX-512, 8 of 8 with AVX2) and the single vectors and scalars after them, in the element loops
// and in the reductions' (sum, max).
TEST_P(AutofuseTest, LongRowsRunEveryUnrolledStep) {
  Check(
      "long rows",
      [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        auto ln = es::LayerNorm(in[0] * in[1] - in[1], in[1], in[2], -1, -1, 1e-5);
        return std::vector<es::EsTensor>{es::SoftmaxV2(in[0]), ln[0], es::Relu(in[0] + in[2])};
      },
      {{{3, 1031}, {1031}, {1031}}}, 3);
}

TEST_P(AutofuseTest, RmsNormFromPrimitives) {
  Check("rms norm",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto x = in[0];
          auto ms = es::ReduceMean(es::Pow(x, Scalar(b, 2.0, t)), Axes(b, {-1}), true);
          return std::vector<es::EsTensor>{x * es::Rsqrt(ms + Scalar(b, 1e-6, t)) * in[1]};
        },
        {{{5, 65}, {65}}});
}

// x ** 3 (GPT-2's GELU), x ** -2, roots and reciprocals are products, square roots and
// divisions in the kernel, as ATen computes them: no pow call per element. Another exponent keeps
// pow.
TEST_P(AutofuseTest, ConstantPowersAreProductsRootsAndReciprocals) {
  const auto powers = [](const std::vector<double>& exponents) -> Build {
    return [exponents](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
      const auto positive = es::Abs(in[0]) + Scalar(b, 0.25, t);
      es::EsTensor sum = es::Pow(in[0], Scalar(b, 3.0, t));
      for (double e : exponents) sum = sum + es::Pow(positive, Scalar(b, e, t));
      return std::vector<es::EsTensor>{sum};
    };
  };
  const Build special = powers({-2.0, 0.5, -0.5, -1.0, 2.0});
  Check("constant powers", special, {{{7, 37}}});
  auto source = [this](const Build& build) {
    const Result fused = Run(build, {{{7, 37}}}, GetParam(), true);
    std::ifstream in(fused.summary.autofuse.source);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string without_pow = source(special), with_pow = source(powers({2.5}));
  ASSERT_FALSE(without_pow.empty());
  EXPECT_EQ(without_pow.find("std::pow("), std::string::npos);
  EXPECT_NE(with_pow.find("std::pow("), std::string::npos);
}

TEST_P(AutofuseTest, GeluSiluSwiGluAndBiasActivation) {
  Check(
      "gelu/silu/swiglu",
      [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        auto gate = in[0] * es::Sigmoid(in[0]);    // SiLU
        auto swiglu = gate * in[1];                // SwiGLU
        auto bias_gelu = es::Gelu(in[1] + in[2]);  // bias + GELU (erf)
        auto gelu_tanh = es::Gelu(in[0], "tanh");
        return std::vector<es::EsTensor>{swiglu, bias_gelu, es::Relu(gelu_tanh + in[2])};
      },
      {{{9, 19}, {9, 19}, {19}}}, 3);
}

TEST_P(AutofuseTest, AttentionScoreScalingAndMasking) {
  Check("scaled masked softmax",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto scores = es::RealDiv(in[0], Scalar(b, 8.0, t));
          auto masked = es::MaskedFill(scores, in[1], Scalar(b, -INFINITY, t));
          return std::vector<es::EsTensor>{es::SoftmaxV2(masked + in[2])};
        },
        {{{2, 3, 5, 11}, {1, 1, 5, 11}, {2, 1, 1, 11}}, {DataType::kUndefined, DataType::kBool}});
}

// Training's SDPA forward: the softmax of the masked scores and their logsumexp, one kernel. A
// row masked whole gives -inf (the row max taken as 0, as ATen does), not NaN; SafeSoftmax gives
// it 0 (against ATen's softmax with those rows zeroed).
TEST_P(AutofuseTest, LogSumExpBesideTheSoftmaxOfMaskedScores) {
  const Build scores = [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
    const auto minus_inf = Scalar(b, -INFINITY, t);
    auto masked = es::MaskedFill(es::MaskedFill(in[0], in[1], minus_inf), in[2], minus_inf);
    return std::vector<es::EsTensor>{es::SoftmaxV2(masked), es::ReduceLogSumExp(masked, Axes(b, {-1}), false),
                                     es::ReduceLogSumExp(in[0] * Scalar(b, 0.5, t), Axes(b, {-1}), true),
                                     es::SafeSoftmax(masked + in[0])};
  };
  const Inputs inputs{{{3, 5, 17}, {3, 5, 17}, {3, 5, 1}}, {DataType::kUndefined, DataType::kBool, DataType::kBool}};
  Check("logsumexp", scores, inputs, 2);
  // Both logsumexps are in kernels: every op of the graph was fused.
  const Result fused = Run(scores, inputs, GetParam(), true);
  EXPECT_EQ(fused.summary.autofuse.fused_nodes, 8);
  for (const Result& r : {fused, Run(scores, inputs, GetParam(), false)}) {
    const std::vector<float>& safe = r.outputs[3];
    EXPECT_EQ(std::count_if(safe.begin(), safe.end(), [](float p) { return std::isnan(p); }), 0);
    EXPECT_GE(std::count(safe.begin(), safe.end(), 0.0f), 17);  // a row masked whole, at least
  }
}

TEST_P(AutofuseTest, RotaryStyleBroadcastsAndCasts) {
  Check("rotary-style",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto rotated = in[0] * es::Cos(in[1]) + es::Neg(in[0]) * es::Sin(in[1]);  // [2,3,7,16] with [7,16]
          auto wide = es::Cast(rotated, DataType::kFloat);
          return std::vector<es::EsTensor>{es::Cast(wide * Scalar(b, 0.5, DataType::kFloat), t)};
        },
        {{{2, 3, 7, 16}, {7, 16}}});
}

TEST_P(AutofuseTest, ReductionsOverTrailingAxes) {
  Check(
      "reductions",
      [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        auto x = es::Exp(in[0] * Scalar(b, 0.1, t));
        return std::vector<es::EsTensor>{
            es::ReduceSum(x, Axes(b, {-1, -2}), false),
            es::ReduceMax(x, Axes(b, {2, 3}), true) - es::ReduceMin(x, Axes(b, {-2, -1}), true)};
      },
      {{{3, 2, 5, 13}}}, 2);
}

// Rows shorter than a vector run one row per lane (row_lanes_writer.h): a softmax over 4 columns
// (a gate over four experts), rows of two inner axes reduced whole, per-row broadcasts along one
// outer axis, NaNs through max, masks stored, row-level outputs -- over row counts that leave a
// partial group to the row body.
TEST_P(AutofuseTest, ShortRowsRunOneRowPerLane) {
  const Build build = [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
    auto gate = es::SoftmaxV2(in[0] * Scalar(b, 0.7, t));  // [37, 4]
    auto x = in[1] + in[2];                                // [3, 13, 2, 3] + [13, 1, 1]
    auto nan = es::Sqrt(x);                                // NaN where x < 0
    auto centered = x - es::ReduceMax(es::Maximum(nan, x), Axes(b, {-1, -2}), true);
    return std::vector<es::EsTensor>{gate, centered, es::ReduceSum(es::Exp(centered), Axes(b, {-1, -2}), false),
                                     es::Cast(es::Greater(x, in[2]), DataType::kBool)};
  };
  const Inputs inputs{{{37, 4}, {3, 13, 2, 3}, {13, 1, 1}}};
  Check("short rows", build, inputs, 3);
  const Result fused = Run(build, inputs, GetParam(), true);
  std::ifstream in(fused.summary.autofuse.source);
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(source.find("_lanes(int64_t"), std::string::npos) << source;
}

// Slices and selects of tensors from outside the group are loads where they lie, not copies: an
// MMoE's per-expert gate weights (selects of [N, 4, 1] along axis 1, as ReduceOverPack writes
// them) times the experts' outputs, summed; a stepped slice with a negative begin along the row,
// and a one-element slice that broadcasts across it.
TEST_P(AutofuseTest, SlicesAreReadWhereTheyLie) {
  const Build build = [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
    auto slice = [&](es::EsTensor x, int64_t begin, int64_t end, int64_t axis, int64_t step) {
      return es::StridedSliceV2(x, b.CreateVector({begin}), b.CreateVector({end}), b.CreateVector({axis}),
                                b.CreateVector({step}));
    };
    auto gates = in[0];  // [37, 4, 1]
    es::EsTensor mixed;
    for (int64_t e = 0; e < 4; ++e) {
      auto w = es::GatherV2(gates, b.CreateScalar(e, DataType::kInt64), b.CreateVector({1}));  // select: [37, 1]
      auto term = w * in[1 + e];                                                               // [37, 1] * [37, 9]
      mixed = e == 0 ? term : mixed + term;
    }
    auto stepped = slice(in[5], -17, 37, 1, 2);  // [3, 37] -> [3, 9]: columns 20, 22, ..., 36
    auto one = slice(in[5], 5, 6, 1, 1);         // [3, 1]: column 5, broadcast along the row
    return std::vector<es::EsTensor>{mixed, es::Exp(stepped) * one};
  };
  const Inputs inputs{{{37, 4, 1}, {37, 9}, {37, 9}, {37, 9}, {37, 9}, {3, 37}}};
  Check("slices", build, inputs, 2);
  const Result fused = Run(build, inputs, GetParam(), true);
  EXPECT_EQ(fused.summary.task_num, 2);  // every slice read in place by the two kernels
}

TEST_P(AutofuseTest, ComparisonsSelectsAndNaNs) {
  Check("select",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto nan = es::Sqrt(in[0]);  // NaN where the input is negative
          auto pick = es::SelectV2(es::Greater(in[0], in[1]), es::Maximum(nan, in[1]), es::Minimum(in[0], nan));
          return std::vector<es::EsTensor>{es::Relu(pick), es::Cast(es::Greater(pick, in[1]), DataType::kBool)};
        },
        {{{4, 31}, {31}}});
}

// Vector kernels write some adds and subtracts as a multiply-add by one (they issue to the
// multiply pipes then): a * 1 is exact, so every value is the unfused graph's to the bit --
// tensor and scalar operands on either side, signed zeros included.
TEST_P(AutofuseTest, AddsWrittenAsMultiplyAddsRoundAsAdds) {
  const Build chain = [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
    es::EsTensor x = in[0], y = in[1];
    for (int round = 0; round < 3; ++round) {
      x = es::Relu(x * Scalar(b, 0.9, t) + Scalar(b, 0.1, t)) - Scalar(b, 0.05, t);
      x = (x - y) * y + (Scalar(b, -0.0, t) - x);
      x = es::Maximum(x + y, y - x) - x;
    }
    return std::vector<es::EsTensor>{x, Scalar(b, 0.0, t) - x * Scalar(b, 0.0, t)};
  };
  const Inputs in{{{3, 613}, {613}}};  // rows long enough for the unrolled steps (the only ones rewritten)
  const Result plain = Run(chain, in, GetParam(), false);
  for (const char* codegen : {"vector", "blocks"}) {
    const Result fused = Run(chain, in, GetParam(), true, false, codegen);
    ASSERT_EQ(fused.summary.autofuse.kernels, 1) << codegen;
    ASSERT_EQ(fused.outputs.size(), plain.outputs.size());
    for (size_t k = 0; k < plain.outputs.size(); ++k)
      for (size_t i = 0; i < plain.outputs[k].size(); ++i)
        ASSERT_EQ(Bits(fused.outputs[k][i]), Bits(plain.outputs[k][i]))
            << codegen << " output " << k << " [" << i << "]: " << fused.outputs[k][i] << " vs " << plain.outputs[k][i];
  }
}

TEST_P(AutofuseTest, TransposesAreReadThroughPermutedStrides) {
  Check("transpose",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto heads = es::Transpose(in[0], b.CreateVector({0, 2, 1, 3}));  // [2,5,3,8] -> [2,3,5,8]
          auto swapped = es::Transpose(in[1], b.CreateVector({1, 0}));      // [8,5] -> [5,8]
          return std::vector<es::EsTensor>{es::Relu(heads * Scalar(b, 0.5, t) + swapped)};
        },
        {{{2, 5, 3, 8}, {8, 5}}});
}

TEST_P(AutofuseTest, ConcatenationsOfOutsideTensorsAreReadPartByPart) {
  Check(
      "concat",
      [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        auto last = es::ConcatV2({in[0], in[1], in[2]}, b.CreateScalar(-1, DataType::kInt64),
                                 3);  // [3,7] [3,2] [3,5] -> [3,14]
        auto middle =
            es::ConcatV2({in[3], in[4]}, b.CreateScalar(1, DataType::kInt64), 2);  // [2,1,6] [2,3,6] -> [2,4,6]
        return std::vector<es::EsTensor>{es::Relu(last * Scalar(b, 2.0, t)), es::Neg(middle) + in[5]};
      },
      {{{3, 7}, {3, 2}, {3, 5}, {2, 1, 6}, {2, 3, 6}, {6}}}, 2);
}

// MatMulV2 + activation becomes FusedMatMul (the library applies the activation: a oneDNN post-op
// in float32 at this size, at::mm + the activation in place otherwise); the rest fuses after it.
// A concat along the row's axis in a kernel that reduces rows: each part is copied into the
// row's block as one contiguous run (parts of different widths; the last part's end too).
TEST_P(AutofuseTest, RowConcatenationsFeedingAReduction) {
  Check("row concat",
        [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
          auto row = es::ConcatV2({in[0], in[1], in[2]}, b.CreateScalar(-1, DataType::kInt64), 3);  // [4,3,13]
          return std::vector<es::EsTensor>{row - es::ReduceMax(row, Axes(b, {-1}), true)};
        },
        {{{4, 3, 7}, {4, 3, 1}, {4, 3, 5}}});
}

TEST_P(AutofuseTest, MatMulActivationsBecomeLibraryEpilogues) {
  // Fused and unfused runs compare the epilogues, so both products run on one kernel: measured,
  // they may land on libraries that sum in different orders (a few 1e-5 apart at K=256). And on
  // one thread: MKL's sums still differed by 5e-5 between the two graphs in a CI run beside
  // another test process (its blocking follows the threads it takes).
  const ScopedEnv one_product_kernel("TORCHAIR_GE_CPU_MATMUL", "mkl");
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const std::shared_ptr<void> restore_threads(nullptr, [threads](void*) { at::set_num_threads(threads); });
  Check(
      "matmul + activation",
      [](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        std::vector<es::EsTensor> outs;
        auto product = [&] {
          return es::MatMulV2(in[0], in[1], in[2], {}, false, true);
        };  // [64,256] x [256,256]^T + bias
        outs.push_back(es::Relu(product()) * Scalar(b, 2.0, t));
        outs.push_back(es::Gelu(product()) + in[2]);
        outs.push_back(es::Gelu(product(), "tanh") - in[2]);
        outs.push_back(es::Neg(es::Sigmoid(product())));
        outs.push_back(es::Tanh(product()) * in[2]);
        outs.push_back(es::Swish(product()) * in[2]);  // SiLU
        return outs;
      },
      {{{64, 256}, {256, 256}, {256}}}, 6);
  const Result fused = Run(
      [](es::GraphBuilder&, DataType, const std::vector<es::EsTensor>& in) {
        return std::vector<es::EsTensor>{es::Gelu(es::MatMulV2(in[0], in[1]))};
      },
      {{{8, 16}, {16, 4}}}, GetParam(), true);
  EXPECT_EQ(fused.summary.autofuse.library_epilogues, 1);
  EXPECT_EQ(fused.summary.task_num, 1);
}

// A Linear on [batch, seq, features] is a 2-D product viewed back to 3-D: the activation after
// the view folds into the product as well (bert's FFN), the view reading the activated value;
// a view someone else also reads keeps its activation.
TEST_P(AutofuseTest, AnActivationAfterAViewOfTheProductFoldsIntoIt) {
  const ScopedEnv one_product_kernel("TORCHAIR_GE_CPU_MATMUL", "mkl");
  auto viewed = [](es::GraphBuilder& b, const std::vector<es::EsTensor>& in) {
    return es::Reshape(es::MatMulV2(in[0], in[1], in[2], {}, false, true), b.CreateVector({4, 16, 32}));
  };
  Check(
      "matmul + view + activation",
      [&](es::GraphBuilder& b, DataType t, const std::vector<es::EsTensor>& in) {
        return std::vector<es::EsTensor>{es::Relu(viewed(b, in)) * Scalar(b, 2.0, t), es::Gelu(viewed(b, in))};
      },
      {{{64, 48}, {32, 48}, {32}}}, 2);
  const Result folded =
      Run([&](es::GraphBuilder& b, DataType,
              const std::vector<es::EsTensor>& in) { return std::vector<es::EsTensor>{es::Sigmoid(viewed(b, in))}; },
          {{{64, 48}, {32, 48}, {32}}}, GetParam(), true);
  EXPECT_EQ(folded.summary.autofuse.library_epilogues, 1);
  const Result shared = Run(
      [&](es::GraphBuilder& b, DataType, const std::vector<es::EsTensor>& in) {
        auto view = viewed(b, in);
        return std::vector<es::EsTensor>{es::Sigmoid(view), view};
      },
      {{{64, 48}, {32, 48}, {32}}}, GetParam(), true);
  EXPECT_EQ(shared.summary.autofuse.library_epilogues, 0);
}

// A channels-last float Conv2D followed by its inference BatchNorm, residual Add and/or
// activation becomes one FusedConv2D (oneDNN's post-ops); the numbers are the unfused graph's.
// Both runs use one convolution kernel (oneDNN's, the weight an input) so that only the
// epilogues differ.
TEST_P(AutofuseTest, ConvolutionEpiloguesBecomeLibraryEpilogues) {
  if (GetParam() != DataType::kFloat) GTEST_SKIP() << "the rule folds float32 convolutions (oneDNN's primitive)";
  const ScopedEnv one_conv_kernel("TORCHAIR_GE_CPU_CONV", "onednn_repack");
  const auto build = [](es::GraphBuilder& b, DataType, const std::vector<es::EsTensor>& in) {
    const AttrMap nhwc = {{"strides", std::vector<int64_t>{1, 1, 1, 1}},
                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"data_format", std::string("NHWC")}};
    auto conv = [&](const es::EsTensor& x, const es::EsTensor& w) { return b.Op1("Conv2D", {x, w, in[3]}, nhwc); };
    auto first = es::Relu(conv(in[0], in[1]));          // conv -> relu
    auto block = es::Relu(conv(first, in[2]) + in[0]);  // conv -> add(residual) -> relu
    auto sigmoid = es::Sigmoid(conv(block, in[1]));     // conv -> sigmoid
    // an inference batch norm (a positive variance computed from an input, as a graph input is)
    const AttrMap norm = {{"epsilon", 1e-5}, {"data_format", std::string("NHWC")}, {"is_training", false}};
    auto batch_norm = [&](const es::EsTensor& x) {
      return b.Op1("BatchNorm", {x, in[4], in[5], in[3], in[4] * in[4] + Scalar(b, 0.5, DataType::kFloat)}, norm);
    };
    auto bn_block = es::Relu(batch_norm(conv(sigmoid, in[1])) + sigmoid);           // conv -> bn -> add -> relu
    return std::vector<es::EsTensor>{block, conv(block, in[2]) + sigmoid, sigmoid,  // conv -> add
                                     bn_block, batch_norm(conv(bn_block, in[2]))};  // conv -> bn
  };
  const Inputs shapes{{{2, 9, 7, 8}, {8, 8, 3, 3}, {8, 8, 3, 3}, {8}, {8}, {8}}};
  const Result fused = Run(build, shapes, GetParam(), true);
  const Result plain = Run(build, shapes, GetParam(), false);
  EXPECT_EQ(fused.summary.autofuse.library_epilogues, 6);
  EXPECT_EQ(fused.summary.task_num, 7);
  const double tol = 2e-5;
  ASSERT_EQ(fused.outputs.size(), plain.outputs.size());
  for (size_t k = 0; k < fused.outputs.size(); ++k)
    for (size_t i = 0; i < fused.outputs[k].size(); ++i)
      ASSERT_NEAR(fused.outputs[k][i], plain.outputs[k][i], tol * (1.0 + std::fabs(plain.outputs[k][i])))
          << "output " << k << " [" << i << "]";
}

// A FusedConv2D built directly on NCHW tensors (the rule makes only NHWC ones): ATen's
// convolution, then the batch norm, the residual add and the activation in place -- the numbers
// of the ops it stands for.
TEST_P(AutofuseTest, AnNchwFusedConv2DRunsItsEpilogueAfterAten) {
  if (GetParam() != DataType::kFloat) GTEST_SKIP() << "FusedConv2D is made for float32 convolutions";
  const AttrMap window = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  AttrMap fused_attrs = window;
  fused_attrs["fused_op_type"] = std::string("silu");
  fused_attrs["epsilon"] = 1e-5;
  const AttrMap norm = {{"epsilon", 1e-5}, {"is_training", false}};
  // x, filter, bias, residual, then the batch norm's scale and offset (the bias is its mean, and
  // its variance is made positive from the scale)
  const Inputs shapes{{{2, 8, 7, 9}, {8, 8, 3, 3}, {8}, {2, 8, 7, 9}, {8}, {8}}};
  auto variance = [](es::GraphBuilder& b, const std::vector<es::EsTensor>& in) {
    return in[4] * in[4] + Scalar(b, 0.5, DataType::kFloat);
  };
  const Result fused = Run(
      [&](es::GraphBuilder& b, DataType, const std::vector<es::EsTensor>& in) {
        return std::vector<es::EsTensor>{
            b.Op1("FusedConv2D", {in[0], in[1], in[2], in[3], in[4], in[5], in[2], variance(b, in)}, fused_attrs)};
      },
      shapes, GetParam(), false);
  const Result plain = Run(
      [&](es::GraphBuilder& b, DataType, const std::vector<es::EsTensor>& in) {
        auto conv = b.Op1("Conv2D", {in[0], in[1], in[2]}, window);
        auto normed = b.Op1("BatchNorm", {conv, in[4], in[5], in[2], variance(b, in)}, norm);
        return std::vector<es::EsTensor>{es::Swish(normed + in[3])};
      },
      shapes, GetParam(), false);
  ASSERT_EQ(fused.outputs.size(), 1u);
  ASSERT_EQ(fused.outputs[0].size(), plain.outputs[0].size());
  for (size_t i = 0; i < fused.outputs[0].size(); ++i)
    ASSERT_NEAR(fused.outputs[0][i], plain.outputs[0][i], 1e-5 * (1.0 + std::fabs(plain.outputs[0][i]))) << i;
}

// A kernel-IR function must fit its op's kind: Verify says so, naming the op, before any C++ is
// generated (a free-form name used to surface only as a compile error in the generated file).
TEST(KernelIrTest, VerifyChecksEveryFunctionAgainstItsKind) {
  autofuse::KernelBuilder b("k", {4, 8}, 1);
  b.Store(b.Reduce(autofuse::KFn::kSum, b.Unary(autofuse::KFn::kExp, b.Const(1.0))), TensorDesc(DataType::kFloat, {4}));
  autofuse::KernelIR ir = b.Take();
  EXPECT_TRUE(ir.Verify().ok()) << ir.Verify().message();
  for (const auto& [op, fn, what] : {std::tuple{1, autofuse::KFn::kAdd, "not a unary function"},
                                     std::tuple{2, autofuse::KFn::kExp, "not a reduction"},
                                     std::tuple{1, autofuse::KFn::kNone, "not a unary function"}}) {
    autofuse::KernelIR bad = ir;
    bad.ops[static_cast<size_t>(op)].fn = fn;
    const Status st = bad.Verify();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  }
  for (const char* name : {"exp", "sum", "gelu_tanh", "round_bf16"})
    EXPECT_EQ(autofuse::KFnName(*autofuse::KFnNamed(name)), name);
  EXPECT_FALSE(autofuse::KFnNamed("banana"));
}

// An output may be stored over an input only when the kernel reads that input at the element it
// stores and nowhere else: dense, same shape and dtype, and no reduction or concatenation.
TEST(KernelIrTest, OutputsAreStorableOnlyOverInputsReadAtTheSameElement) {
  autofuse::KernelIR ir;
  ir.name = "k";
  ir.shape = {4, 8};
  ir.inner_from = 1;
  const TensorDesc dense(DataType::kFloat, {4, 8});
  ir.inputs = {{dense, {}, false},                                     // 0: same element
               {TensorDesc(DataType::kFloat, {8, 4}), {1, 4}, false},  // 1: read transposed
               {TensorDesc(DataType::kFloat, {8}), {}, false},         // 2: broadcast over rows
               {TensorDesc(DataType::kFloat16, {4, 8}), {}, false}};   // 3: other element size
  auto op = [](autofuse::OpKind kind, autofuse::KFn fn, std::vector<int> args, int buffer = -1) {
    autofuse::KOp k;
    k.kind = kind;
    k.fn = fn;
    k.args = std::move(args);
    k.buffer = buffer;
    return k;
  };
  for (int b = 0; b < 4; ++b) ir.ops.push_back(op(autofuse::OpKind::kLoad, autofuse::KFn::kNone, {}, b));
  ir.ops.push_back(op(autofuse::OpKind::kBinary, autofuse::KFn::kAdd, {0, 1}));
  ir.ops.push_back(op(autofuse::OpKind::kBinary, autofuse::KFn::kAdd, {4, 2}));
  ir.ops.push_back(op(autofuse::OpKind::kBinary, autofuse::KFn::kAdd, {5, 3}));
  ir.outputs = {{dense, {}, false}};
  ir.stores = {{0, 6}};
  ir.ResetRowLevels();
  ASSERT_TRUE(ir.Verify().ok()) << ir.Verify().message();
  autofuse::KernelIR past_the_end = ir;  // a slice's offset that reads one element too far
  past_the_end.inputs[1].offset = 1;
  EXPECT_NE(past_the_end.Verify().message().find("input 1 is read past its 32 elements"), std::string::npos);
  EXPECT_EQ(ir.InputsStorableOver(0), std::vector<int>{0});
  autofuse::KernelIR reducing = ir;  // a row sum read by every element: two passes over the row
  reducing.ops.push_back(op(autofuse::OpKind::kReduce, autofuse::KFn::kSum, {6}));
  reducing.ops.push_back(op(autofuse::OpKind::kBinary, autofuse::KFn::kAdd, {6, 7}));
  reducing.stores = {{0, 8}};
  reducing.ResetRowLevels();
  EXPECT_TRUE(reducing.InputsStorableOver(0).empty());
}

// Which adds a vector kernel moves onto the multiply pipes: in issue order, an add or subtract
// goes there while the adds (add, subtract, max, min, ReLU, comparisons) outnumber the multiplies.
TEST(VectorCodegenTest, AddsGoToTheMultipliersUntilThePipesAreEven) {
  using autofuse::KFn;
  using autofuse::OpKind;
  autofuse::KernelIR ir;
  auto push = [&ir](OpKind kind, KFn fn, std::vector<int> args, bool row = false) {
    autofuse::KOp op;
    op.kind = kind;
    op.fn = fn;
    op.args = std::move(args);
    op.row = row;
    ir.ops.push_back(op);
    return static_cast<int>(ir.ops.size()) - 1;
  };
  const int c = push(OpKind::kConst, KFn::kNone, {}, true);
  const int x = push(OpKind::kLoad, KFn::kNone, {});
  std::vector<int> ops;
  auto op = [&](OpKind kind, KFn fn, std::vector<int> args) {
    ops.push_back(push(kind, fn, std::move(args)));
    return ops.back();
  };
  // tiny_chain's rounds: relu(v * a + b) - c; every round's subtract moves.
  int v = x;
  std::set<int> subtracts;
  for (int round = 0; round < 3; ++round) {
    v = op(OpKind::kUnary, KFn::kRelu, {op(OpKind::kBinary, KFn::kAdd, {op(OpKind::kBinary, KFn::kMul, {v, c}), c})});
    v = op(OpKind::kBinary, KFn::kSub, {v, c});
    subtracts.insert(v);
  }
  EXPECT_EQ(autofuse::AddsForTheMultiplier(ir, ops), subtracts);
  // Adds alone: every second one.
  ops.clear();
  std::set<int> every_second;
  for (int k = 0; k < 6; ++k) {
    v = op(OpKind::kBinary, k % 3 ? KFn::kAdd : KFn::kSub, {v, x});
    if (k % 2) every_second.insert(v);
  }
  EXPECT_EQ(autofuse::AddsForTheMultiplier(ir, ops), every_second);
  // Multiplies enough to keep up, or a row-level add (a scalar, not a vector): none moves.
  ops.clear();
  for (int k = 0; k < 3; ++k) v = op(OpKind::kBinary, KFn::kMul, {v, x});
  for (int k = 0; k < 3; ++k) v = op(OpKind::kBinary, KFn::kAdd, {v, x});
  ops.push_back(push(OpKind::kBinary, KFn::kAdd, {c, c}, /*row=*/true));
  ops.push_back(push(OpKind::kBinary, KFn::kAdd, {c, c}, /*row=*/true));
  EXPECT_TRUE(autofuse::AddsForTheMultiplier(ir, ops).empty());
}

// The activation table is the one source: one spelling each, and a CPU body for every row.
TEST(EpilogueActivationTest, EveryActivationHasOneSpellingAndACpuKernel) {
  std::set<std::string_view> names;
  for (const EpilogueActivationDef& def : EpilogueActivations()) {
    EXPECT_TRUE(names.insert(def.name).second) << def.name;
    EXPECT_EQ(EpilogueActivationNamed(def.name), def.activation) << def.name;
    EXPECT_EQ(EpilogueActivationName(def.activation), def.name);
    EXPECT_NE(cpu::FindCpuEpilogue(def.activation), nullptr) << def.name;
    EXPECT_NE(OpRegistry::Global().Find(std::string(def.op_type)), nullptr) << def.op_type;
  }
  EXPECT_FALSE(EpilogueActivationNamed("swish"));
}

// The CPU ReLU after a product or convolution gives eager's bits: NaN stays NaN (oneDNN's post-op
// would make it 0), -0.0 stays -0.0, on the vector loop (one chunk, and threads over chunks) and
// on the ATen path (a strided or double output).
TEST(EpilogueActivationTest, TheCpuReluGivesEagersBits) {
  const cpu::CpuEpilogue* relu = cpu::FindCpuEpilogue(EpilogueActivation::kRelu);
  ASSERT_NE(relu, nullptr);
  at::manual_seed(0);
  for (int64_t n : {1000, 100003}) {
    at::Tensor x = at::randn({n});
    float* p = x.data_ptr<float>();
    const float specials[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, -1e-45f, 1e-45f, -NAN};
    for (size_t i = 0; i < std::size(specials); ++i) p[n - 1 - static_cast<int64_t>(i) * 7] = specials[i];
    const at::Tensor expected = at::relu(x);
    at::Tensor y = x.clone();
    relu->apply_in_place(y);
    EXPECT_EQ(std::memcmp(y.data_ptr(), expected.data_ptr(), static_cast<size_t>(n) * sizeof(float)), 0) << n;
  }
  // a transposed matrix and an NHWC tensor (dense, not contiguous: the loop), a strided slice and
  // doubles (ATen)
  for (at::Tensor x : {at::randn({64, 80}).t(), at::randn({2, 8, 5, 7}).contiguous(at::MemoryFormat::ChannelsLast),
                       at::randn({64, 80}).slice(1, 0, 40), at::randn({100}, at::kDouble)}) {
    const at::Tensor expected = at::relu(x);
    relu->apply_in_place(x);
    EXPECT_TRUE(at::equal(x, expected));
  }
}

// A FusedConv2D's late residual (a oneDNN primitive without that post-op): y = act(y + r) in one
// pass over NHWC tensors gives eager's add-then-activation bits, NaN, signed zeros and infinities
// included, in one chunk and in several threaded ones; with an activation it leaves to ATen
// (GELU) the add is the loop's and the activation ATen's; a residual in another layout is
// ATen's add.
TEST(EpilogueActivationTest, TheResidualAddThenActivationGivesEagersBits) {
  at::manual_seed(0);
  const auto nhwc = [](const at::Tensor& t) { return t.contiguous(at::MemoryFormat::ChannelsLast); };
  const std::pair<const cpu::CpuEpilogue*, at::Tensor (*)(const at::Tensor&)> activations[] = {
      {nullptr, [](const at::Tensor& t) { return t; }},
      {cpu::FindCpuEpilogue(EpilogueActivation::kRelu), [](const at::Tensor& t) { return at::relu(t); }},
      {cpu::FindCpuEpilogue(EpilogueActivation::kGelu), [](const at::Tensor& t) { return at::gelu(t); }}};
  for (const int64_t channels : {8, 1000}) {  // 1584 elements; 198000 (past eager's grain)
    at::Tensor y = nhwc(at::randn({2, channels, 9, 11})), r = nhwc(at::randn({2, channels, 9, 11}));
    float *py = y.data_ptr<float>(), *pr = r.data_ptr<float>();
    const float specials[][2] = {{NAN, 1.f},       {1.f, NAN},     {-0.f, -0.f}, {-0.f, 0.f}, {INFINITY, -INFINITY},
                                 {-INFINITY, 1.f}, {-1e-45f, 0.f}, {2.f, -2.f}};
    for (size_t i = 0; i < std::size(specials); ++i) {
      py[i * 13] = specials[i][0];
      pr[i * 13] = specials[i][1];
    }
    for (const auto& [epilogue, eager] : activations) {
      const at::Tensor expected = nhwc(eager(at::add(y, r)));
      at::Tensor out = y.clone(at::MemoryFormat::ChannelsLast);
      cpu::AddResidualThenActivate(epilogue, r, out);
      ASSERT_EQ(out.strides(), expected.strides());
      EXPECT_EQ(std::memcmp(out.data_ptr(), expected.data_ptr(), static_cast<size_t>(out.nbytes())), 0)
          << channels << " " << (epilogue ? static_cast<int>(epilogue->activation) : -1);
    }
    at::Tensor out = y.clone(at::MemoryFormat::ChannelsLast);
    cpu::AddResidualThenActivate(activations[1].first, r.contiguous(), out);  // NCHW residual
    EXPECT_EQ(
        std::memcmp(nhwc(out).data_ptr(), nhwc(at::relu(at::add(y, r))).data_ptr(), static_cast<size_t>(out.nbytes())),
        0);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AutofuseTest,
                         ::testing::Values(DataType::kFloat, DataType::kFloat16, DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)).substr(3); });

}  // namespace
}  // namespace ge

namespace ge {
namespace {

// Two groups where one reads the other both directly and through a library op: merging them
// would make the kernel wait for itself. The graph must compile (no cycle) and compute as unfused.
TEST(AutofuseGroupingTest, SiblingGroupsLinkedThroughAnOutsideOpAreNotMerged) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  auto build = [] {
    es::GraphBuilder b("cross");
    auto x = b.CreateInput(0, DataType::kFloat, {8, 16});
    auto h = es::Neg(es::Relu(x));  // group H
    auto c = es::Cumsum(h, 0);      // a library op between
    auto g = es::Exp(c * h);        // reads H directly and through c
    b.SetOutputs({es::Sigmoid(g) + h});
    return std::move(b.Build()).value();
  };
  std::vector<float> data(128);
  for (size_t i = 0; i < data.size(); ++i) data[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  std::vector<std::vector<float>> results;
  for (const char* fuse : {"true", "false"}) {
    Session s(Options{{option::kAutofuse, fuse}});
    ASSERT_TRUE(s.AddGraph(1, build()).ok());
    Status st = s.CompileGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<Tensor> out;
    ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {8, 16}), data.data(), nullptr)}, &out).ok());
    results.emplace_back(out[0].data_as<float>(), out[0].data_as<float>() + 128);
    if (std::string(fuse) == "true") {
      EXPECT_GE(s.GetCompiledGraphSummary(1)->autofuse.kernels, 2);
    }
  }
  for (size_t i = 0; i < 128; ++i) EXPECT_NEAR(results[0][i], results[1][i], 1e-5 * (1 + std::fabs(results[1][i])));
}

}  // namespace
// Instances of a graph with symbolic sizes: generated with run-time sizes, graphs that differ
// only in their sizes get the same kernel text, so the second one loads the first one's library.
TEST(AutofuseRunTimeSizesTest, GraphsThatDifferOnlyInSizesShareOneLibrary) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  auto build = [](const Shape& shape) {
    es::GraphBuilder b("sizes");
    auto x = b.CreateInput(0, DataType::kFloat, shape);
    auto e = es::Exp(x - es::ReduceMax(x, b.CreateVector({-1}), true));
    b.SetOutputs({e / es::ReduceSum(e, b.CreateVector({-1}), true) + es::Sigmoid(x)});
    return b.Build();
  };
  std::vector<std::string> libraries;
  for (const Shape& shape : {Shape{3, 24}, Shape{7, 40}}) {
    std::vector<float> data(static_cast<size_t>(NumElements(shape)));
    for (size_t i = 0; i < data.size(); ++i) data[i] = 0.05f * static_cast<float>(i % 23) - 0.4f;
    std::vector<std::vector<float>> results;
    for (const char* fuse : {"true", "false"}) {
      Session s(Options{{option::kAutofuse, fuse}, {option::kKernelRunTimeSizes, "true"}});
      auto graph = build(shape);
      ASSERT_TRUE(graph.ok()) << graph.status().ToString();
      ASSERT_TRUE(s.AddGraph(1, std::move(graph).value()).ok());
      Status st = s.CompileGraph(1);
      ASSERT_TRUE(st.ok()) << st.ToString();
      std::vector<Tensor> out;
      ASSERT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, shape), data.data(), nullptr)}, &out).ok());
      results.emplace_back(out[0].data_as<float>(), out[0].data_as<float>() + data.size());
      if (std::string(fuse) == "true") {
        auto summary = s.GetCompiledGraphSummary(1);
        ASSERT_TRUE(summary.ok());
        const autofuse::AutofuseStats stats = summary->autofuse;
        ASSERT_TRUE(stats.fallback.empty()) << stats.fallback;
        EXPECT_EQ(stats.kernels, 1);
        libraries.push_back(stats.library);
        EXPECT_TRUE(libraries.size() == 1 || stats.cache_hit);
      }
    }
    for (size_t i = 0; i < data.size(); ++i)
      ASSERT_NEAR(results[0][i], results[1][i], 2e-5 * (1 + std::fabs(results[1][i]))) << ShapeToString(shape) << i;
  }
  ASSERT_EQ(libraries.size(), 2u);
  EXPECT_EQ(libraries[0], libraries[1]);
}

// Dims that TensorDesc::symbolic says are the same at every size stay literals in kernels with
// run-time sizes (the compiler sees them); the symbolic ones are read from `sizes`. Instances
// that differ only in the symbolic dims still share one library.
namespace {

// A row softmax over [rows, columns] compiled with run-time sizes as an instance of a size
// template would be: the rows a symbol, the columns the constant they are (`columns_fixed`) or a
// second symbol. `result` receives the run's output.
autofuse::AutofuseStats SoftmaxWithSymbolicRows(int64_t rows, int64_t columns, bool columns_fixed,
                                                std::vector<float>* result) {
  cpu::RegisterCpuDevice();
  EXPECT_TRUE(GEInitialize().ok());
  es::GraphBuilder b("fixed_dims");
  auto x = b.CreateInput(0, DataType::kFloat, {rows, columns});
  auto e = es::Exp(x - es::ReduceMax(x, b.CreateVector({-1}), true));
  b.SetOutputs({e / es::ReduceSum(e, b.CreateVector({-1}), true)});
  auto graph = b.Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  for (Node* node : (*graph)->nodes())  // what an instance of an optimized size template carries
    for (int o = 0; o < node->num_outputs(); ++o) {
      TensorDesc& desc = node->output_desc(o);
      if (desc.rank() == 2)
        desc.symbolic = {SymExpr::Symbol(0), columns_fixed ? SymExpr::Constant(desc.shape[1]) : SymExpr::Symbol(1)};
    }
  Session s(Options{{option::kKernelRunTimeSizes, "true"}});
  EXPECT_TRUE(s.AddGraph(1, std::move(graph).value()).ok());
  Status st = s.CompileGraph(1);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::vector<float> data(static_cast<size_t>(rows * columns));
  for (size_t i = 0; i < data.size(); ++i) data[i] = 0.03f * static_cast<float>(i % 37) - 0.5f;
  std::vector<Tensor> out;
  EXPECT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, {rows, columns}), data.data(), nullptr)}, &out).ok());
  result->assign(out[0].data_as<float>(), out[0].data_as<float>() + data.size());
  return s.GetCompiledGraphSummary(1)->autofuse;
}

std::string ReadSource(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(AutofuseRunTimeSizesTest, DimsFixedAcrossSizesStayLiterals) {
  auto compile = [](int64_t rows, bool columns_fixed, std::vector<float>* result) {
    return SoftmaxWithSymbolicRows(rows, 40, columns_fixed, result);
  };
  std::vector<float> fixed3, fixed5, varying3;
  const autofuse::AutofuseStats a = compile(3, true, &fixed3);
  const autofuse::AutofuseStats b = compile(5, true, &fixed5);
  const autofuse::AutofuseStats c = compile(3, false, &varying3);
  ASSERT_TRUE(a.fallback.empty() && a.kernels == 1) << a.fallback;
  EXPECT_EQ(a.library, b.library);  // rows vary: one library
  EXPECT_NE(a.library, c.library);
  const std::string literal = ReadSource(a.source), run_time = ReadSource(c.source);
  EXPECT_NE(literal.find("hi = int64_t{40}"), std::string::npos) << literal;
  EXPECT_NE(literal.find("items = S[0]"), std::string::npos) << literal;  // the row count stays a parameter
  EXPECT_EQ(run_time.find("int64_t{40}"), std::string::npos) << run_time;
  EXPECT_EQ(fixed3, varying3);
  for (size_t r = 0; r < 5; ++r) {  // each row a softmax
    double sum = 0;
    for (size_t j = 0; j < 40; ++j) sum += fixed5[r * 40 + j];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

// Rows shorter than a vector whose extent every instance shares run in lanes with run-time
// sizes too: one library for every row count, whole groups of rows in lanes and the rest (all of
// them below one group) through the row body. Columns that vary keep the row loops.
TEST(AutofuseRunTimeSizesTest, ShortRowsOfAFixedExtentRunInLanesAtEverySize) {
  std::string library;
  for (int64_t rows : {37, 100, 3}) {
    std::vector<float> y;
    const autofuse::AutofuseStats stats = SoftmaxWithSymbolicRows(rows, 4, true, &y);
    ASSERT_TRUE(stats.fallback.empty() && stats.kernels == 1) << stats.fallback;
    if (library.empty()) library = stats.library;
    EXPECT_EQ(stats.library, library) << rows;
    EXPECT_NE(ReadSource(stats.source).find("_lanes(int64_t"), std::string::npos) << rows;
    for (int64_t r = 0; r < rows; ++r) {  // the softmax, in double
      double x[4], max = -1e30, sum = 0;
      for (int64_t j = 0; j < 4; ++j) {
        x[j] = 0.03 * static_cast<double>((r * 4 + j) % 37) - 0.5;
        max = std::max(max, x[j]);
      }
      for (double& v : x) sum += (v = std::exp(v - max));
      for (int64_t j = 0; j < 4; ++j)
        ASSERT_NEAR(y[static_cast<size_t>(r * 4 + j)], x[j] / sum, 1e-6)
            << "rows " << rows << " [" << r << ", " << j << "]";
    }
  }
  std::vector<float> y;
  const autofuse::AutofuseStats varying = SoftmaxWithSymbolicRows(37, 4, false, &y);
  EXPECT_EQ(ReadSource(varying.source).find("_lanes(int64_t"), std::string::npos);
}

// A library this process has loaded is taken again without reading the cache: while a compiled
// graph keeps it loaded, compiling the same kernels works even with the entry gone from disk;
// once nothing holds it, the next compile builds the entry again.
TEST(AutofuseRunTimeSizesTest, ALoadedLibraryIsReusedWithoutReadingTheCache) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  char dir_template[] = "/tmp/ge_loaded_libraries_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string cache = dir_template;
  auto compile = [&](Session& s, const Shape& shape) -> autofuse::AutofuseStats {
    es::GraphBuilder b("reused");
    auto x = b.CreateInput(0, DataType::kFloat, shape);
    b.SetOutputs({es::Sigmoid(x) * x + es::Exp(x)});
    auto graph = b.Build();
    EXPECT_TRUE(graph.ok() && s.AddGraph(1, std::move(graph).value()).ok());
    Status st = s.CompileGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<float> data(static_cast<size_t>(NumElements(shape)), 0.5f);
    std::vector<Tensor> out;
    EXPECT_TRUE(s.RunGraph(1, {Tensor(TensorDesc(DataType::kFloat, shape), data.data(), nullptr)}, &out).ok());
    EXPECT_NEAR(out[0].data_as<float>()[0], 0.5f / (1 + std::exp(-0.5f)) + std::exp(0.5f), 1e-5);
    return s.GetCompiledGraphSummary(1)->autofuse;
  };
  const Options options{{option::kKernelRunTimeSizes, "true"}, {option::kKernelCacheDir, cache}};
  auto first = std::make_unique<Session>(options);
  const autofuse::AutofuseStats built = compile(*first, {4, 8});
  ASSERT_TRUE(built.fallback.empty()) << built.fallback;
  ASSERT_TRUE(std::filesystem::remove(built.library));
  {
    Session second(options);
    const autofuse::AutofuseStats reused = compile(second, {6, 10});
    EXPECT_TRUE(reused.cache_hit);
    EXPECT_EQ(reused.library, built.library);
    EXPECT_FALSE(std::filesystem::exists(built.library));  // taken from memory, not rebuilt
  }
  first.reset();
  Session third(options);
  const autofuse::AutofuseStats rebuilt = compile(third, {5, 8});
  EXPECT_FALSE(rebuilt.cache_hit);
  EXPECT_TRUE(std::filesystem::exists(built.library));
  std::filesystem::remove_all(cache);
}

}  // namespace ge

namespace ge {
namespace {

// Every run-time size of a generated kernel is also an expression over the graph's symbols (from
// the buffers' symbolic shapes): evaluated at other sizes it is the size the kernel written for
// those sizes reads, so an instance could take the library and compute its `sizes` argument.
TEST(AutofuseRunTimeSizesTest, EverySizeIsAnExpressionThatHoldsAtOtherSizes) {
  cpu::RegisterCpuDevice();
  ASSERT_TRUE(GEInitialize().ok());
  auto device = *DeviceRegistry::Get("cpu");
  // x[s0, 8] and y[s1, 8] concatenated, shifted by a bias, then a softmax over each row, a
  // column sum and the transpose squared: broadcasts, a concat along a symbolic axis, row
  // reductions, a permuted read.
  auto fuse = [&](int64_t s0, int64_t s1) {
    es::GraphBuilder b("symbolic_sizes");
    auto x = b.CreateInput(0, DataType::kFloat, {s0, 8});
    auto y = b.CreateInput(1, DataType::kFloat, {s1, 8});
    auto cat = b.Op1("ConcatV2", {std::vector<es::EsTensor>{x, y}, b.CreateVector({0})}, {{"N", int64_t{2}}});
    auto shifted = es::Relu(cat + b.CreateInput(2, DataType::kFloat, {8}));
    auto e = es::Exp(shifted - es::ReduceMax(shifted, b.CreateVector({-1}), true));
    auto transposed = b.Op1("Transpose", {shifted, b.CreateVector({1, 0})});  // read permuted
    b.SetOutputs({e / es::ReduceSum(e, b.CreateVector({-1}), true), es::ReduceSum(shifted, b.CreateVector({0}), true),
                  es::Sigmoid(transposed * transposed)});
    auto graph = std::move(b.Build()).value();
    const std::vector<SymExpr> rows = {SymExpr::Combine(SymExpr::Op::kAdd, SymExpr::Symbol(0), SymExpr::Symbol(1))};
    for (Node* node : graph->nodes())  // what an instance of a size template carries
      for (int o = 0; o < node->num_outputs(); ++o) {
        TensorDesc& desc = node->output_desc(o);
        desc.symbolic.clear();
        for (int64_t d : desc.shape) desc.symbolic.push_back(SymExpr::Constant(d));
        for (int d = 0; d < desc.rank(); ++d)
          if (desc.shape[static_cast<size_t>(d)] == s0 + s1) desc.symbolic[static_cast<size_t>(d)] = rows[0];
      }
    for (Node* data : graph->DataNodes())
      if (data->output_desc(0).rank() == 2)
        data->output_desc(0).symbolic[0] = SymExpr::Symbol(data->output_desc(0).shape[0] == s0 ? 0 : 1);
    autofuse::AutofuseOptions options;
    options.sizes = autofuse::SizeMode::kRunTime;
    autofuse::AutofuseStats stats;
    auto result = autofuse::RunAutofuse(*graph, options, device->kernel_factory(), &stats);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    std::map<std::string, FusedKernelDef> defs;
    for (const auto& [node, def] : result->kernels) defs.emplace(def->symbol, *def);
    return std::make_pair(stats.library, defs);
  };
  auto [library_a, at_a] = fuse(3, 4);
  auto [library_b, at_b] = fuse(6, 5);
  EXPECT_EQ(library_a, library_b);  // one library for both
  ASSERT_FALSE(at_a.empty());
  int symbolic_entries = 0;
  for (const auto& [symbol, def] : at_a) {
    ASSERT_EQ(def.size_exprs.size(), def.sizes.size()) << symbol << ": a size without an expression";
    const FusedKernelDef& other = at_b.at(symbol);
    ASSERT_EQ(other.sizes.size(), def.sizes.size());
    for (size_t i = 0; i < def.sizes.size(); ++i) {
      EXPECT_EQ(*def.size_exprs[i].Evaluate({3, 4}), def.sizes[i]) << symbol << " S[" << i << "]";
      EXPECT_EQ(*def.size_exprs[i].Evaluate({6, 5}), other.sizes[i])
          << symbol << " S[" << i << "] = " << def.size_exprs[i].ToString({"s0", "s1"});
      symbolic_entries += def.size_exprs[i].IsConstant() ? 0 : 1;
    }
  }
  EXPECT_GT(symbolic_entries, 0);
}

}  // namespace
}  // namespace ge
