// EagerStyle builder: shapes known while building, sticky errors, operators, Build checks.
#include <gtest/gtest.h>

#include "ge/es/es_ops.h"

namespace ge::es {
namespace {

TEST(EsBuilderTest, OperatorsBuildInferredNodes) {
  GraphBuilder b("ops");
  auto x = b.CreateInput(0, DataType::kFloat, {4, 8});
  auto w = b.CreateInput(1, DataType::kFloat, {8, 2});
  auto y = Relu(MatMulV2(x, w) * 2.0 + 1.0) - x.builder()->CreateScalar(3, DataType::kFloat);
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  EXPECT_EQ(y.shape(), (Shape{4, 2}));
  EXPECT_EQ(y.value().node->type(), "Sub");
  b.SetOutputs({y, -x});
  auto graph = b.Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ((*graph)->DataNodes().size(), 2u);
  EXPECT_EQ((*graph)->NetOutputNode()->num_inputs(), 2);
}

TEST(EsBuilderTest, FirstErrorIsKeptAndLaterOpsAreSkipped) {
  GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto bad = x + b.CreateInput(1, DataType::kFloat, {4});
  EXPECT_FALSE(bad.valid());
  const std::string first = b.status().message();
  EXPECT_NE(first.find("do not broadcast"), std::string::npos) << first;
  EXPECT_NE(first.find("Add"), std::string::npos) << "the error names the op: " << first;
  auto later = b.Op1("Relu", {x});
  EXPECT_FALSE(later.valid());
  EXPECT_EQ(b.status().message(), first);
  b.SetOutputs({x});
  EXPECT_FALSE(b.Build().ok());
}

TEST(EsBuilderTest, BuildNeedsOutputsAndIsOneShot) {
  GraphBuilder b;
  b.CreateInput(0, DataType::kFloat, {1});
  auto no_outputs = b.Build();
  EXPECT_FALSE(no_outputs.ok());
  EXPECT_NE(no_outputs.status().message().find("SetOutputs"), std::string::npos);
}

TEST(EsBuilderTest, DynamicInputsAndOptionalInputs) {
  GraphBuilder b;
  auto a = b.CreateInput(0, DataType::kFloat, {2, 3});
  auto c = b.CreateInput(1, DataType::kFloat, {2, 1});
  auto cat = b.Op1("ConcatV2", {std::vector<EsTensor>{a, c, a}, b.CreateVector({1})}, {{"N", int64_t{3}}});
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  EXPECT_EQ(cat.shape(), (Shape{2, 7}));
  auto mm = b.Op1("MatMulV2", {cat, b.CreateInput(2, DataType::kFloat, {7, 5}), std::monostate{}});
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  EXPECT_EQ(mm.shape(), (Shape{2, 5}));
  EXPECT_FALSE(mm.value().node->input(2).valid());
}

TEST(EsBuilderTest, GeneratedTypedFunctionsFollowThePrototypes) {
  GraphBuilder b;
  auto x = b.CreateInput(0, DataType::kFloat, {1, 4, 9, 9});
  auto w = b.CreateInput(1, DataType::kFloat, {8, 4, 3, 3});
  // Required attrs come first; dilations/groups/bias keep their registry defaults.
  auto conv = Conv2D(x, w, /*strides=*/{1, 1, 2, 2}, /*pads=*/{1, 1, 1, 1});
  auto pooled = MaxPoolV3(conv, /*ksize=*/{1, 1, 2, 2}, /*strides=*/{1, 1, 2, 2});
  auto flat = Flatten(Cast(pooled, DataType::kFloat16));
  auto norm = LayerNorm(Cast(flat, DataType::kFloat), {}, {}, /*begin_norm_axis=*/1);
  auto cat = ConcatV2({norm[0], norm[0]}, b.CreateVector({0}), /*N=*/2);
  ASSERT_TRUE(b.status().ok()) << b.status().ToString();
  EXPECT_EQ(conv.shape(), (Shape{1, 8, 5, 5}));
  EXPECT_EQ(conv.value().node->GetAttrOr<int64_t>("groups", -1), 1);
  EXPECT_EQ(pooled.shape(), (Shape{1, 8, 2, 2}));
  EXPECT_EQ(flat.dtype(), DataType::kFloat16);
  ASSERT_EQ(norm.size(), 3u);
  EXPECT_EQ(norm[1].shape(), (Shape{1, 1}));
  EXPECT_EQ(cat.shape(), (Shape{2, 32}));
  auto bad = Conv2D(x, w, {1, 1}, {0, 0, 0, 0});
  EXPECT_FALSE(bad.valid());
  EXPECT_NE(b.status().message().find("'strides' needs 4 values"), std::string::npos) << b.status().message();
}

TEST(EsBuilderTest, ValuesOfAnotherBuilderAreRejected) {
  GraphBuilder b1, b2;
  auto x = b1.CreateInput(0, DataType::kFloat, {2});
  b2.Op("Relu", {x});
  EXPECT_FALSE(b2.status().ok());
}

TEST(EsBuilderTest, ScalarConstantsConvert) {
  GraphBuilder b;
  auto h = b.CreateScalar(1.5, DataType::kFloat16);
  auto bf = b.CreateScalar(-2.0, DataType::kBFloat16);
  auto i = b.CreateScalar(7, DataType::kInt32);
  ASSERT_TRUE(b.status().ok());
  auto value = [](const EsTensor& t) { return *t.value().node->GetAttr<Tensor>("value"); };
  EXPECT_EQ(*value(h).data_as<uint16_t>(), 0x3e00);   // 1.5 in IEEE half
  EXPECT_EQ(*value(bf).data_as<uint16_t>(), 0xc000);  // -2.0 in bfloat16
  EXPECT_EQ(*value(i).data_as<int32_t>(), 7);
}

}  // namespace
}  // namespace ge::es
