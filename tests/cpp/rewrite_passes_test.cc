// Optimizer passes that fold and rewrite (transposes into MatMul flags, bias and BatchNorm
// folding, pattern rewrites, user rules) and the pass manager; same checks as passes_test.cc.
#include "pass_test_util.h"

namespace ge {
namespace {

using namespace pass_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

TEST_F(PassTest, TransposeMatMulFoldUsesTheTransposeFlags) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {16, 8});
        b.SetOutputs({es::MatMulV2(x, es::Transpose(w, b.CreateVector({1, 0})))});
      },
      CreateTransposeMatMulFoldPass(), true);
  EXPECT_EQ(Count(*g, "Transpose"), 0);
  for (Node* n : g->nodes())
    if (n->type() == "MatMulV2") {
      EXPECT_TRUE(n->GetAttrOr<bool>("transpose_x2", false));
    }
}

// A transpose made after its product (as an earlier rewrite leaves it) is folded and freed while
// the pass walks the graph; the walk must not reach it afterwards (the sanitizer run sees that).
TEST_F(PassTest, TransposeMatMulFoldFreesTransposesMadeAfterTheirProduct) {
  auto g = Make([](es::GraphBuilder& b) {
    auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
    auto w = b.CreateInput(1, DataType::kFloat, {16, 8});
    b.SetOutputs({es::MatMulV2(x, es::Transpose(w, b.CreateVector({1, 0})))});
  });
  Node* mm = nullptr;
  for (Node* n : g->nodes())
    if (n->type() == "MatMulV2") mm = n;
  ASSERT_NE(mm, nullptr);
  Node* old = mm->input(1).node;
  Node* perm = AddIndexConst(*g, {1, 0}, "late_perm");
  Node* late = g->AddNode("Transpose", "late_transpose", {old->input(0), perm->output(0)}, 1);
  ASSERT_TRUE(OpRegistry::Global().VerifyAndInfer(*late).ok());
  g->SetInput(mm, 1, late->output(0));
  ASSERT_TRUE(RemoveWithDeadInputs(*g, old).ok());
  bool changed = false;
  ASSERT_TRUE(CreateTransposeMatMulFoldPass()->Run(*g, PassContext{}, &changed).ok());
  EXPECT_TRUE(changed);
  EXPECT_EQ(Count(*g, "Transpose"), 0);
  EXPECT_TRUE(VerifyGraphTypes(*g).ok());
}

TEST_F(PassTest, TransposeMatMulFoldLooksThroughPerMatrixReshapes) {
  // Attention scores: q @ k.transpose(-2, -1), with k expanded and reshaped to 3-D on the way.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 5, 4});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 3, 5, 4});
        auto kt = es::Transpose(k, b.CreateVector({0, 1, 3, 2}));  // [2,3,4,5]
        auto kb = es::Reshape(es::BroadcastTo(kt, b.CreateVector({2, 3, 4, 5})), b.CreateVector({6, 4, 5}));
        b.SetOutputs({es::BatchMatMulV2(es::Reshape(q, b.CreateVector({6, 5, 4})), kb)});
      },
      CreateTransposeMatMulFoldPass(), true);
  EXPECT_EQ(Count(*g, "Transpose"), 0);
  for (Node* n : g->nodes())
    if (n->type() == "BatchMatMulV2") {
      EXPECT_TRUE(n->GetAttrOr<bool>("adj_x2", false));
    }
}

TEST_F(PassTest, TransposeMatMulFoldGivesTheSwapOfAWiderPermutationToTheFlag) {
  // k.view(b, s, h, d).transpose(1, 2).transpose(-2, -1): one permutation [0, 2, 3, 1] that
  // moves single elements; [0, 2, 1, 3] (whole rows of d) and adj_x2 compute the same product.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 5, 4});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 5, 3, 4});  // [b, s, h, d]
        auto kt = es::Reshape(es::Transpose(k, b.CreateVector({0, 2, 3, 1})), b.CreateVector({6, 4, 5}));
        b.SetOutputs({es::BatchMatMulV2(es::Reshape(q, b.CreateVector({6, 5, 4})), kt)});
      },
      CreateTransposeMatMulFoldPass(), true);
  ASSERT_EQ(Count(*g, "Transpose"), 1);
  for (Node* n : g->nodes()) {
    if (n->type() == "Transpose") {
      EXPECT_EQ(ConstInts(n->input(1)), (std::vector<int64_t>{0, 2, 1, 3}));
      EXPECT_EQ(n->output_desc(0).shape, (Shape{2, 3, 5, 4}));
    }
    if (n->type() == "BatchMatMulV2") {
      EXPECT_TRUE(n->GetAttrOr<bool>("adj_x2", false));
    }
  }
  RunPass(
      [](es::GraphBuilder& b) {  // [0, 3, 1, 2] with its last two swapped still moves d: no gain
        auto q = b.CreateInput(0, DataType::kFloat, {2, 4, 6, 5});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 5, 3, 4});
        b.SetOutputs({es::BatchMatMulV2(q, es::Transpose(k, b.CreateVector({0, 3, 1, 2})))});
      },
      CreateTransposeMatMulFoldPass(), false);
}

TEST_F(PassTest, TransposeMatMulFoldLeavesLayoutTransposes) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto a = b.CreateInput(0, DataType::kFloat, {2, 3, 5, 4});
        auto w = b.CreateInput(1, DataType::kFloat, {12, 7});
        auto t = es::Transpose(a, b.CreateVector({0, 2, 1, 3}));  // heads -> sequence: real data movement
        auto shared = es::Transpose(w, b.CreateVector({1, 0}));   // two users: the copy is needed anyway
        auto ones = b.CreateConst(Tensor::FromVector(DataType::kFloat, {1, 7}, std::vector<float>(7, 1.0f)));
        b.SetOutputs(
            {es::MatMulV2(es::Reshape(t, b.CreateVector({10, 12})), w), es::MatMulV2(ones, shared), es::Neg(shared)});
      },
      CreateTransposeMatMulFoldPass(), false);
  EXPECT_EQ(Count(*g, "Transpose"), 2);
}

TEST_F(PassTest, ConcatFlattenMergesAConcatOfConcats) {
  // torch.cat([torch.cat([a, b], 1), c, torch.cat([d, e], -1)], 1): one concat of five parts.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto a = b.CreateInput(0, DataType::kFloat, {4, 2});
        auto bb = b.CreateInput(1, DataType::kFloat, {4, 3});
        auto c = b.CreateInput(2, DataType::kFloat, {4, 1});
        auto inner = es::ConcatV2({a, bb}, b.CreateScalar(1, DataType::kInt64), 2);
        auto last = es::ConcatV2({c, a}, b.CreateScalar(-1, DataType::kInt64), 2);
        b.SetOutputs({es::ConcatV2({inner, c, last}, b.CreateScalar(1, DataType::kInt64), 3)});
      },
      CreateConcatFlattenPass(), true);
  ASSERT_EQ(Count(*g, "ConcatV2"), 1);
  for (Node* n : g->nodes())
    if (n->type() == "ConcatV2") {
      EXPECT_EQ(n->num_inputs(), 6);  // five parts and the axis
      EXPECT_EQ(n->GetAttrOr<int64_t>("N", 0), 5);
    }
}

TEST_F(PassTest, ConcatFlattenKeepsConcatsReadElsewhereOrAlongAnotherAxis) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto a = b.CreateInput(0, DataType::kFloat, {4, 2});
        auto shared = es::ConcatV2({a, a}, b.CreateScalar(1, DataType::kInt64), 2);  // also an output
        auto rows = es::ConcatV2({a, a}, b.CreateScalar(0, DataType::kInt64), 2);    // [8, 2]: another axis
        b.SetOutputs({es::ConcatV2({shared, a}, b.CreateScalar(1, DataType::kInt64), 2), shared,
                      es::ConcatV2({rows, rows}, b.CreateScalar(1, DataType::kInt64), 2)});
      },
      CreateConcatFlattenPass(), false);
  EXPECT_EQ(Count(*g, "ConcatV2"), 4);
}

TEST_F(PassTest, ReduceOverPackSumsTheWeightedPartsWithoutStacking) {
  // A mixture of experts' combination: (gate[B, E, 1] * stack(experts, 1)).sum(1), E = 3.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto gate = b.CreateInput(0, DataType::kFloat, {5, 3, 1});
        std::vector<es::EsTensor> experts;
        for (int e = 0; e < 3; ++e) experts.push_back(b.CreateInput(1 + e, DataType::kFloat, {5, 4}));
        auto stacked = es::Pack(experts, 3, 1);
        b.SetOutputs({es::ReduceSum(es::Mul(gate, stacked), b.CreateVector({1}), false)});
      },
      CreateReduceOverPackPass(), true);
  EXPECT_EQ(Count(*g, "Pack"), 0);
  EXPECT_EQ(Count(*g, "ReduceSum"), 0);
  EXPECT_EQ(Count(*g, "Mul"), 3);
  EXPECT_EQ(Count(*g, "Add"), 2);
}

TEST_F(PassTest, ReduceOverPackKeepsDimsAndPlainStacks) {
  // torch.stack(xs, 0).sum(0, keepdim=True), and a weight that is one value per part.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x0 = b.CreateInput(0, DataType::kFloat, {2, 3});
        auto x1 = b.CreateInput(1, DataType::kFloat, {2, 3});
        auto w = b.CreateInput(2, DataType::kFloat, {2, 1, 1});
        b.SetOutputs({es::ReduceSum(es::Pack({x0, x1}, 2, 0), b.CreateVector({0}), true),
                      es::ReduceSum(es::Mul(es::Pack({x1, x0}, 2, 0), w), b.CreateVector({0}), false)});
      },
      CreateReduceOverPackPass(), true);
  EXPECT_EQ(Count(*g, "Pack"), 0);
  EXPECT_EQ(Count(*g, "ReduceSum"), 0);
}

TEST_F(PassTest, ReduceOverPackLeavesOtherAxes) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x0 = b.CreateInput(0, DataType::kFloat, {2, 3});
        auto x1 = b.CreateInput(1, DataType::kFloat, {2, 3});
        b.SetOutputs({es::ReduceSum(es::Pack({x0, x1}, 2, 1), b.CreateVector({2}), false)});
      },
      CreateReduceOverPackPass(), false);
  EXPECT_EQ(Count(*g, "ReduceSum"), 1);
}

TEST_F(PassTest, ReduceOverPackReadsTheStackOfEveryReaderWithoutMakingIt) {
  // Two tasks combine the same experts with their own gates; the stack is also an output once.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x0 = b.CreateInput(0, DataType::kFloat, {2, 3});
        auto x1 = b.CreateInput(1, DataType::kFloat, {2, 3});
        auto g0 = b.CreateInput(2, DataType::kFloat, {2, 2, 1});
        auto g1 = b.CreateInput(3, DataType::kFloat, {2, 2, 1});
        auto stacked = es::Pack({x0, x1}, 2, 1);
        b.SetOutputs({es::ReduceSum(es::Mul(g0, stacked), b.CreateVector({1}), false),
                      es::ReduceSum(es::Mul(stacked, g1), b.CreateVector({1}), false)});
      },
      CreateReduceOverPackPass(), true);
  EXPECT_EQ(Count(*g, "Pack"), 0);
  EXPECT_EQ(Count(*g, "ReduceSum"), 0);
  auto kept = RunPass(
      [](es::GraphBuilder& b) {
        auto x0 = b.CreateInput(0, DataType::kFloat, {2, 3});
        auto x1 = b.CreateInput(1, DataType::kFloat, {2, 3});
        auto stacked = es::Pack({x0, x1}, 2, 1);
        b.SetOutputs({es::ReduceSum(stacked, b.CreateVector({1}), false), stacked});
      },
      CreateReduceOverPackPass(), true);
  EXPECT_EQ(Count(*kept, "Pack"), 1);  // an output: made for it, not for the sum
  EXPECT_EQ(Count(*kept, "ReduceSum"), 0);
}

TEST_F(PassTest, MatMulBiasFoldMovesTheBiasIntoTheProduct) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {8, 16});
        auto bias = b.CreateInput(2, DataType::kFloat, {16});
        b.SetOutputs({es::Relu(es::Add(es::MatMulV2(x, w), bias))});
      },
      CreateMatMulBiasFoldPass(), true);
  EXPECT_EQ(Count(*g, "Add"), 0);
}

TEST_F(PassTest, MatMulBiasFoldLeavesFullMatrixAdds) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {8, 16});
        auto residual = b.CreateInput(2, DataType::kFloat, {4, 16});
        b.SetOutputs({es::Relu(es::Add(es::MatMulV2(x, w), residual))});
      },
      CreateMatMulBiasFoldPass(), false);
  EXPECT_EQ(Count(*g, "Add"), 1);
}

Tensor Ramp(Shape shape, float start, float step) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i % 7);
  return Tensor::FromVector(DataType::kFloat, std::move(shape), v);
}

TEST_F(PassTest, BatchNormFoldFoldsIntoConstantConvWeights) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 6, 6});
        auto w = b.CreateConst(Ramp({4, 3, 3, 3}, -0.5f, 0.2f));
        auto conv = es::Conv2D(x, w, {1, 1, 1, 1}, {1, 1, 1, 1}, b.CreateConst(Ramp({4}, 0.1f, 0.1f)));
        auto bn = es::BatchNorm(conv, b.CreateConst(Ramp({4}, 0.5f, 0.3f)), b.CreateConst(Ramp({4}, -0.2f, 0.1f)),
                                b.CreateConst(Ramp({4}, 0.05f, 0.1f)), b.CreateConst(Ramp({4}, 0.5f, 0.25f)), 1e-5);
        b.SetOutputs({es::Relu(bn)});
      },
      CreateBatchNormFoldPass(), true);
  EXPECT_EQ(Count(*g, "BatchNorm"), 0);
  EXPECT_EQ(Count(*g, "Const"), 2);  // the folded weight and bias
}

TEST_F(PassTest, BatchNormFoldFoldsIntoMatMulAndNeedsConstantWeights) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {5, 8});
        auto y = es::MatMulV2(x, b.CreateConst(Ramp({6, 8}, -0.3f, 0.1f)), {}, {}, false, true);
        b.SetOutputs(
            {es::BatchNorm(y, b.CreateConst(Ramp({6}, 0.5f, 0.3f)), b.CreateConst(Ramp({6}, -0.2f, 0.1f)),
                           b.CreateConst(Ramp({6}, 0.05f, 0.1f)), b.CreateConst(Ramp({6}, 0.5f, 0.25f)), 1e-5)});
      },
      CreateBatchNormFoldPass(), true);
  EXPECT_EQ(Count(*g, "BatchNorm"), 0);
  auto h = RunPass(
      [](es::GraphBuilder& b) {  // weights are a graph input: nothing to fold into
        auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 6, 6});
        auto w = b.CreateInput(1, DataType::kFloat, {4, 3, 3, 3});
        auto conv = es::Conv2D(x, w, {1, 1, 1, 1}, {1, 1, 1, 1});
        b.SetOutputs(
            {es::BatchNorm(conv, b.CreateConst(Ramp({4}, 0.5f, 0.3f)), b.CreateConst(Ramp({4}, -0.2f, 0.1f)),
                           b.CreateConst(Ramp({4}, 0.05f, 0.1f)), b.CreateConst(Ramp({4}, 0.5f, 0.25f)), 1e-5)});
      },
      CreateBatchNormFoldPass(), false);
  EXPECT_EQ(Count(*h, "BatchNorm"), 1);
}

// A small residual conv net: stem conv + BN + ReLU, max pool (with its argmax as an output when
// asked), a conv and the residual add, ReLU, then an average pool; the ReLU's value is an output
// too. Weights are graph inputs (not frozen).
void ConvNet(es::GraphBuilder& b, bool argmax) {
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3, 12, 12});
  auto w1 = b.CreateInput(1, DataType::kFloat, {8, 3, 3, 3});
  auto w2 = b.CreateInput(2, DataType::kFloat, {8, 8, 3, 3});
  auto stem = es::Conv2D(x, w1, {1, 1, 2, 2}, {1, 1, 1, 1}, b.CreateConst(Ramp({8}, -0.2f, 0.05f)));
  auto bn = es::BatchNorm(stem, b.CreateConst(Ramp({8}, 0.5f, 0.1f)), b.CreateConst(Ramp({8}, -0.2f, 0.1f)),
                          b.CreateConst(Ramp({8}, 0.05f, 0.1f)), b.CreateConst(Ramp({8}, 0.5f, 0.25f)), 1e-5);
  auto act = es::Relu(bn);
  std::vector<es::EsTensor> outputs;
  es::EsTensor pooled;
  if (argmax) {
    auto both = es::MaxPoolWithArgmaxV2(act, {1, 1, 3, 3}, {1, 1, 2, 2}, "CALCULATED", {1, 1, 1, 1});
    pooled = both[0];
    outputs.push_back(both[1]);
  } else {
    pooled = es::MaxPoolV3(act, {1, 1, 3, 3}, {1, 1, 2, 2}, "CALCULATED", {1, 1, 1, 1});
  }
  auto block = es::Relu(es::Add(es::Conv2D(pooled, w2, {1, 1, 1, 1}, {1, 1, 1, 1}), pooled));
  outputs.push_back(block);
  outputs.push_back(es::AvgPoolV2(block, {1, 1, 3, 3}, {1, 1, 1, 1}));
  b.SetOutputs(outputs);
}

TEST_F(PassTest, ChannelsLastKeepsAConvNetNhwcWithTransposesOnlyAtItsEdges) {
  for (bool argmax : {false, true}) {
    auto g = RunPass([&](es::GraphBuilder& b) { ConvNet(b, argmax); }, CreateChannelsLastPass(), true);
    // In: x. Out: the block's ReLU (read by NetOutput), the average pool and the argmax.
    EXPECT_EQ(Count(*g, "Transpose"), argmax ? 4 : 3);
    for (Node* n : g->nodes()) {
      if (n->type() == "Conv2D" || n->type() == "BatchNorm" || n->type().find("Pool") != std::string::npos) {
        EXPECT_EQ(n->GetAttrOr<std::string>("data_format", ""), "NHWC") << n->ToString();
      }
      if (n->type() == "Conv2D") {
        EXPECT_EQ(n->output_desc(0).format, Format::kNHWC);
        EXPECT_EQ(n->GetAttrOr<std::vector<int64_t>>("strides", {}).at(3), 1) << n->ToString();
      }
    }
  }
}

TEST_F(PassTest, ChannelsLastCarriesScalarOperandsAsTheyAre) {
  // conv -> ReLU -> x * 0.5 -> conv: the scalar multiply joins the region; a per-channel one
  // ([1, 4, 1, 1], which would need its own reorder) ends it.
  for (bool scalar : {true, false}) {
    auto g = RunPass(
        [&](es::GraphBuilder& b) {
          auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 8, 8});
          auto first =
              es::Relu(es::Conv2D(x, b.CreateInput(1, DataType::kFloat, {4, 3, 3, 3}), {1, 1, 1, 1}, {1, 1, 1, 1}));
          auto scaled = es::Mul(
              first, scalar ? b.CreateScalar(0.5, DataType::kFloat) : b.CreateConst(Ramp({1, 4, 1, 1}, 0.5f, 0.1f)));
          b.SetOutputs(
              {es::Conv2D(scaled, b.CreateInput(2, DataType::kFloat, {4, 4, 3, 3}), {1, 1, 1, 1}, {1, 1, 1, 1})});
        },
        CreateChannelsLastPass(), scalar);
    if (!scalar) continue;
    EXPECT_EQ(Count(*g, "Transpose"), 2);  // x in, the second convolution's output out
    for (Node* n : g->nodes()) {
      if (n->type() == "Mul") {
        EXPECT_EQ(n->output_desc(0).shape, (Shape{1, 8, 8, 4})) << n->ToString();
      }
    }
  }
}

TEST_F(PassTest, ChannelsLastLeavesLoneConvolutionsAndTrainingGraphsAlone) {
  RunPass(
      [](es::GraphBuilder& b) {  // one convolution: two layout copies would buy one faster kernel
        auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 8, 8});
        b.SetOutputs(
            {es::Relu(es::Conv2D(x, b.CreateInput(1, DataType::kFloat, {4, 3, 3, 3}), {1, 1, 1, 1}, {1, 1, 1, 1}))});
      },
      CreateChannelsLastPass(), false);
  RunPass(
      [](es::GraphBuilder& b) {  // a weight gradient reads the NCHW activations
        auto x = b.CreateInput(0, DataType::kFloat, {1, 3, 8, 8});
        auto w = b.CreateInput(1, DataType::kFloat, {4, 3, 3, 3});
        auto y = es::Conv2D(
            es::Relu(es::Conv2D(x, b.CreateInput(2, DataType::kFloat, {3, 3, 1, 1}), {1, 1, 1, 1}, {0, 0, 0, 0})), w,
            {1, 1, 1, 1}, {1, 1, 1, 1});
        b.SetOutputs({y, es::Conv2DBackpropFilterD(x, y, {4, 3, 3, 3}, {1, 1, 1, 1}, {1, 1, 1, 1})});
      },
      CreateChannelsLastPass(), false);
}

void Attention(es::GraphBuilder& b, bool with_mask, bool divide) {
  auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 6, 8});
  auto k = b.CreateInput(1, DataType::kFloat, {2, 3, 5, 8});
  auto v = b.CreateInput(2, DataType::kFloat, {2, 3, 5, 8});
  auto scores = es::BatchMatMulV2(q, k, {}, {}, false, true);
  scores = divide ? es::RealDiv(scores, b.CreateScalar(2.0, DataType::kFloat))
                  : es::Mul(scores, b.CreateScalar(0.35, DataType::kFloat));
  if (with_mask) scores = es::Add(scores, b.CreateConst(Ramp({2, 1, 1, 5}, -1.0f, 0.4f)));
  b.SetOutputs({es::Relu(es::BatchMatMulV2(es::SoftmaxV2(scores, {-1}), v))});
}

TEST_F(PassTest, PatternRewriteFusesAttention) {
  for (bool with_mask : {false, true}) {
    for (bool divide : {false, true}) {
      auto g = RunPass([&](es::GraphBuilder& b) { Attention(b, with_mask, divide); }, CreatePatternRewritePass(), true);
      EXPECT_EQ(Count(*g, "FusedAttention"), 1);
      EXPECT_EQ(Count(*g, "SoftmaxV2") + Count(*g, "BatchMatMulV2"), 0);
      for (Node* n : g->nodes())
        if (n->type() == "FusedAttention") {
          EXPECT_NEAR(n->GetAttrOr<double>("scale", 0), divide ? 0.5 : 0.35, 1e-7);
        }
    }
  }
}

// The SDPA converter's SafeSoftmax: a query whose mask hides every key gets 0 from the fused
// kernel as from the unfused graph (RunPass compares the two).
TEST_F(PassTest, PatternRewriteFusesTheSafeSoftmaxOfAQueryThatSeesNoKey) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 6, 8});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 3, 5, 8});
        auto v = b.CreateInput(2, DataType::kFloat, {2, 3, 5, 8});
        Tensor mask = Ramp({6, 5}, -1.0f, 0.1f);
        for (int j = 0; j < 5; ++j) mask.data_as<float>()[2 * 5 + j] = -INFINITY;  // query 2
        auto scores =
            es::Add(es::Mul(es::BatchMatMulV2(q, k, {}, {}, false, true), b.CreateScalar(0.35, DataType::kFloat)),
                    b.CreateConst(mask));
        b.SetOutputs({es::BatchMatMulV2(es::SafeSoftmax(scores, {-1}), v)});
      },
      CreatePatternRewritePass(), true);
  EXPECT_EQ(Count(*g, "FusedAttention"), 1);
  EXPECT_EQ(Count(*g, "SafeSoftmax"), 0);
}

TEST_F(PassTest, PatternRewriteFusesAttentionOfOtherRanksWithALowRankMask) {
  for (const Shape& lead : {Shape{6}, Shape{2, 3}}) {  // 3-D and 4-D inputs, a 2-D [L, S] mask
    auto with = [&](int64_t a, int64_t b2) {
      Shape s = lead;
      s.push_back(a);
      s.push_back(b2);
      return s;
    };
    auto g = RunPass(
        [&](es::GraphBuilder& b) {
          auto q = b.CreateInput(0, DataType::kFloat, with(7, 8));
          auto k = b.CreateInput(1, DataType::kFloat, with(5, 8));
          auto v = b.CreateInput(2, DataType::kFloat, with(5, 8));
          auto scores = es::Add(es::BatchMatMulV2(q, k, {}, {}, false, true), b.CreateConst(Ramp({7, 5}, -2.0f, 0.5f)));
          b.SetOutputs({es::BatchMatMulV2(es::SoftmaxV2(scores, {-1}), v)});
        },
        CreatePatternRewritePass(), true);
    EXPECT_EQ(Count(*g, "FusedAttention"), 1);
  }
}

TEST_F(PassTest, PatternRewriteReadsGroupedQueryHeadsUnrepeated) {
  // 4 query heads, 2 key/value heads repeated as the SDPA converter repeats them: the fused
  // node reads the 2 heads themselves, and the repeat copies are gone.
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {1, 4, 6, 8});
        auto repeat = [&b](es::EsTensor x) {
          auto grouped = es::Reshape(x, b.CreateVector({1, 2, 1, 5, 8}));
          return es::Reshape(es::BroadcastTo(grouped, b.CreateVector({1, 2, 2, 5, 8})), b.CreateVector({1, 4, 5, 8}));
        };
        auto k = repeat(b.CreateInput(1, DataType::kFloat, {1, 2, 5, 8}));
        auto v = repeat(b.CreateInput(2, DataType::kFloat, {1, 2, 5, 8}));
        auto scores = es::Mul(es::BatchMatMulV2(q, k, {}, {}, false, true), b.CreateScalar(0.35, DataType::kFloat));
        b.SetOutputs({es::BatchMatMulV2(es::SoftmaxV2(scores, {-1}), v)});
      },
      CreatePatternRewritePass(), true);
  EXPECT_EQ(Count(*g, "FusedAttention"), 1);
  EXPECT_EQ(Count(*g, "BroadcastTo") + Count(*g, "Reshape"), 0);
}

// Hand-written attention on [B, H, S, D] as torch.matmul decomposes it: 3-D products over
// [B*H, ...] between Reshapes that merge and split the leading dims.
// `grouped`: one key/value head repeated for the three query heads as HF's repeat_kv does it
// (Reshape [2, 1, 1, 5, 8], BroadcastTo [2, 1, 3, 5, 8], Reshape to the product's [6, 5, 8]).
void AttentionOnFlattenedProducts(es::GraphBuilder& b, const Shape& k_shape, bool scaled, bool grouped = false) {
  auto q = b.CreateInput(0, DataType::kFloat, {2, 3, 6, 8});
  auto k = b.CreateInput(1, DataType::kFloat, grouped ? Shape{2, 1, 5, 8} : k_shape);
  auto v = b.CreateInput(2, DataType::kFloat, grouped ? Shape{2, 1, 5, 8} : Shape{2, 3, 5, 8});
  auto flat = [&b, grouped](es::EsTensor x, int64_t rows) {
    if (grouped && rows == 5)
      x = es::BroadcastTo(es::Reshape(x, b.CreateVector({2, 1, 1, 5, 8})), b.CreateVector({2, 1, 3, 5, 8}));
    return es::Reshape(x, b.CreateVector({6, rows, 8}));
  };
  auto scores =
      es::Reshape(es::BatchMatMulV2(flat(q, 6), flat(k, 5), {}, {}, false, true), b.CreateVector({2, 3, 6, 5}));
  if (scaled) scores = es::RealDiv(scores, b.CreateScalar(2.0, DataType::kFloat));
  scores = es::Add(scores, b.CreateConst(Ramp({2, 1, 1, 5}, -1.0f, 0.4f)));
  auto probs = es::Reshape(es::SoftmaxV2(scores, {-1}), b.CreateVector({6, 6, 5}));
  b.SetOutputs({es::Reshape(es::BatchMatMulV2(probs, flat(v, 5)), b.CreateVector({2, 3, 6, 8}))});
}

TEST_F(PassTest, PatternRewriteFusesAttentionOnFlattenedProducts) {
  for (bool scaled : {true, false}) {
    auto g = RunPass(
        [&](es::GraphBuilder& b) {
          AttentionOnFlattenedProducts(b, {2, 3, 5, 8}, scaled);
        },
        CreatePatternRewritePass(), true);
    EXPECT_EQ(Count(*g, "FusedAttention"), 1);
    EXPECT_EQ(Count(*g, "SoftmaxV2") + Count(*g, "BatchMatMulV2"), 0);
    for (Node* n : g->nodes())
      if (n->type() == "FusedAttention") {
        EXPECT_EQ(ShapeOf(n->input(1)), (Shape{2, 3, 5, 8}));  // the 4-D keys, not their [6, 5, 8] view
      }
  }
  auto grouped = RunPass([&](es::GraphBuilder& b) { AttentionOnFlattenedProducts(b, {}, true, /*grouped=*/true); },
                         CreatePatternRewritePass(), true);
  EXPECT_EQ(Count(*grouped, "FusedAttention"), 1);
  EXPECT_EQ(Count(*grouped, "BroadcastTo") + Count(*grouped, "BatchMatMulV2"), 0);  // the head read unrepeated
  // Keys whose batch and heads are the other way round merge to the same 6 matrices: left alone.
  auto g = RunPass(
      [&](es::GraphBuilder& b) {
        AttentionOnFlattenedProducts(b, {3, 2, 5, 8}, true);
      },
      CreatePatternRewritePass(), false);
  EXPECT_EQ(Count(*g, "FusedAttention"), 0);
}

TEST_F(PassTest, PatternRewriteLeavesAttentionWhoseScoresAreReadElsewhere) {
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto q = b.CreateInput(0, DataType::kFloat, {2, 6, 8});
        auto k = b.CreateInput(1, DataType::kFloat, {2, 5, 8});
        auto v = b.CreateInput(2, DataType::kFloat, {2, 5, 8});
        auto probs = es::SoftmaxV2(es::BatchMatMulV2(q, k, {}, {}, false, true), {-1});
        b.SetOutputs({es::BatchMatMulV2(probs, v), es::Neg(probs)});  // the probabilities are an output too
      },
      CreatePatternRewritePass(), false);
  EXPECT_EQ(Count(*g, "FusedAttention"), 0);
}

TEST_F(PassTest, UserRewriteRulesRegisterAndRun) {
  // A user rule: Neg(Neg(x)) -> x, registered at run time like a plugin library would.
  static bool registered = false;
  if (!registered) {
    RewriteRule rule{
        "TestDoubleNegation",
        {"Neg"},
        [](const Node& n) { return n.input(0).node->type() == "Neg" && CanBypass(&n, n.input(0).node->input(0)); },
        [](Graph& graph, Node* n) { return Bypass(graph, n, n->input(0).node->input(0)); }};
    ASSERT_TRUE(RewriteRuleRegistry::Global().Register(rule).ok());
    EXPECT_FALSE(RewriteRuleRegistry::Global().Register(rule).ok());  // names are unique
    registered = true;
  }
  EXPECT_FALSE(RewriteRuleRegistry::Global().Register(RewriteRule{"Incomplete", {}, nullptr, nullptr}).ok());
  auto g = RunPass(
      [](es::GraphBuilder& b) {
        auto x = b.CreateInput(0, DataType::kFloat, {3});
        b.SetOutputs({es::Exp(es::Neg(es::Neg(x)))});
      },
      CreatePatternRewritePass(), true);
  EXPECT_EQ(Count(*g, "Neg"), 0);
}

TEST_F(PassTest, ManagerRecordsStatsAndHonoursLevelsAndSwitches) {
  auto build = [](es::GraphBuilder& b) {
    auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
    auto w = b.CreateInput(1, DataType::kFloat, {16, 8});
    b.SetOutputs({es::MatMulV2(es::Identity(x), es::Transpose(w, b.CreateVector({1, 0})))});
  };
  auto compile = [&](const Options& options) {
    Session s(options);
    EXPECT_TRUE(s.AddGraph(1, Make(build)).ok());
    Status st = s.CompileGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return *s.GetCompiledGraphSummary(1);
  };
  auto fired = [](const CompiledGraphSummary& s, const std::string& name) {
    for (const PassStat& p : s.passes)
      if (p.pass == name) return p.changed;
    return false;
  };
  auto o3 = compile({{"ge.oo.verifyEachPass", "true"}});
  EXPECT_TRUE(fired(o3, "TransposeMatMulFold"));
  EXPECT_TRUE(fired(o3, "NoOpElimination"));
  for (const PassStat& p : o3.passes) EXPECT_GE(p.milliseconds, 0);
  EXPECT_EQ(o3.task_num, 1);  // just the product
  auto o1 = compile({{"ge.oo.level", "O1"}});
  EXPECT_FALSE(fired(o1, "TransposeMatMulFold"));  // an O3 pass
  EXPECT_TRUE(fired(o1, "NoOpElimination"));
  auto off = compile({{"ge.optimizationSwitch", "NoOpElimination:off;TransposeMatMulFold:off"}});
  EXPECT_EQ(off.task_num, 2);  // Transpose + MatMulV2; the Identity is a zero-copy view (memory stage)

  Session bad(Options{{"ge.optimizationSwitch", "NoSuchPass:off"}});
  ASSERT_TRUE(bad.AddGraph(1, Make(build)).ok());
  Status st = bad.CompileGraph(1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown pass 'NoSuchPass'"), std::string::npos) << st.message();
  Session bad_level(Options{{"ge.oo.level", "O2"}});
  EXPECT_FALSE(bad_level.AddGraph(1, Make(build)).ok());
}

}  // namespace
}  // namespace ge
