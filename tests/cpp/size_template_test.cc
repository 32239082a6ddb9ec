// Size expressions and size templates: a graph built at two sizes, its differences named with
// expressions, instantiated for a third size and checked against a build at that size.
#include <gtest/gtest.h>

#include "ge/es/graph_builder.h"
#include "ge/ir/annotations.h"
#include "ge/symbolic/size_template.h"

namespace ge {
namespace {

const std::vector<std::string> kNames = {"s0", "s1"};

int64_t Eval(const std::string& text, std::vector<int64_t> values) {
  auto expr = SymExpr::Parse(text, kNames);
  EXPECT_TRUE(expr.ok()) << expr.status().ToString();
  auto value = expr->Evaluate(values);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : -999;
}

TEST(SymExprTest, FollowsPythonArithmetic) {
  EXPECT_EQ(Eval("2*s0+1", {5, 0}), 11);
  EXPECT_EQ(Eval("s0//4", {-5, 0}), -2);  // floor, as Dynamo's FloorDiv
  EXPECT_EQ(Eval("s0%4", {-5, 0}), 3);    // sign of the divisor, as Python
  EXPECT_EQ(Eval("max(s0, s1*2) - min(s0, 3)", {5, 4}), 5);
  EXPECT_EQ(Eval("-(s0-s1)", {5, 4}), -1);
  EXPECT_EQ(Eval("s0 % 8 == 0", {16, 0}), 1);
  EXPECT_EQ(Eval("s0 > s1", {3, 4}), 0);
  EXPECT_EQ(Eval("s0 >= s1", {4, 4}), 1);
  EXPECT_EQ(Eval("s0 != 1", {4, 4}), 1);
}

TEST(SymExprTest, PrintsWhatItParses) {
  for (const std::string text : {"2*s0+1", "s0-(s1-1)", "s0//(s1*2)", "max(s0, 8)", "s0%8==0", "(s0+1)*s1",
                                 "(1!=-1)<480", "s0<(s1==2)", "6*(s0//s1*6)", "s0*(s1%7*s0)", "2*(s1*(s0//3))"}) {
    auto expr = SymExpr::Parse(text, kNames);
    ASSERT_TRUE(expr.ok()) << text << ": " << expr.status().ToString();
    auto again = SymExpr::Parse(expr->ToString(kNames), kNames);
    ASSERT_TRUE(again.ok()) << expr->ToString(kNames);
    for (int64_t a : {3, 8, 17})
      EXPECT_EQ(*expr->Evaluate({a, 5}), *again->Evaluate({a, 5})) << text << " printed " << expr->ToString(kNames);
  }
  EXPECT_EQ(SymExpr::Parse("s0-(s1-1)", kNames)->ToString(kNames), "s0-(s1-1)");
  // A product is flattened into a product only when it multiplies and nothing else (fuzzer find).
  EXPECT_EQ(SymExpr::Parse("6*(s0//s1*6)", kNames)->ToString(kNames), "6*(s0//s1*6)");
  EXPECT_EQ(SymExpr::Parse("6*(s0*s1*6)", kNames)->ToString(kNames), "6*s0*s1*6");
}

TEST(SymExprTest, BadTextAndOverflowAreClearErrors) {
  for (const std::string text : {"", "s2", "2*", "max(s0)", "(s0", "s0 s1", "99999999999999999999", "s0 < s1 < 2"}) {
    auto expr = SymExpr::Parse(text, kNames);
    EXPECT_FALSE(expr.ok()) << "'" << text << "' parsed";
  }
  EXPECT_FALSE(SymExpr::Parse(std::string(100, '(') + "s0" + std::string(100, ')'), kNames).ok());
  auto mul = SymExpr::Parse("s0*s1", kNames);
  EXPECT_NE(mul->Evaluate({int64_t{1} << 40, int64_t{1} << 40}).status().message().find("overflows"),
            std::string::npos);
  EXPECT_NE(SymExpr::Parse("s0//s1", kNames)->Evaluate({4, 0}).status().message().find("zero"), std::string::npos);
  EXPECT_FALSE(SymExpr::Parse("s1", kNames)->Evaluate({4}).ok());  // fewer values than symbols
}

// x[s0, 8] -> Reshape to [2*s0, 4] (a shape constant) -> the first s0 rows (StridedSliceV2).
std::unique_ptr<Graph> BuildAt(int64_t s0) {
  es::GraphBuilder b("template");
  auto vector = [&](std::vector<int64_t> values, const char* name) {
    const auto n = static_cast<int64_t>(values.size());
    return b.CreateConst(Tensor::FromVector(DataType::kInt64, {n}, values), name);
  };
  auto x = b.CreateInput(0, DataType::kFloat, {s0, 8}, Format::kND, "x");
  auto y = b.Op1("Reshape", {x, vector({2 * s0, 4}, "shape")}, {}, "reshape");
  auto z =
      b.Op1("StridedSliceV2",
            {y, vector({0}, "begin"), vector({s0}, "end"), vector({0}, "axes"), vector({1}, "strides")}, {}, "slice");
  b.SetOutputs({z});
  auto graph = b.Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

SizeTemplate TemplateFor(const std::vector<SizeDifference>& differences) {
  SizeTemplate sizes;
  sizes.symbols.push_back({"s0", 0, 0, 2, 1024});
  for (const SizeDifference& d : differences) {
    const std::string text = d.b - d.a == 2 * (5 - 3) ? "2*s0" : "s0";  // built at s0=3 and s0=5
    sizes.sites.push_back({d.node, d.kind, d.attr, d.index, *SymExpr::Parse(text, {"s0"})});
  }
  return sizes;
}

TEST(SizeTemplateTest, DifferencesNameEverySizeAndInstantiateMatchesABuild) {
  auto at3 = BuildAt(3);
  auto at5 = BuildAt(5);
  auto differences = DiffSizes(*at3, *at5);
  ASSERT_TRUE(differences.ok()) << differences.status().ToString();
  ASSERT_EQ(differences->size(), 3u);  // x dim 0, shape[0], end[0]
  SizeTemplate sizes = TemplateFor(*differences);
  ASSERT_TRUE(sizes.Verify(*at3).ok()) << sizes.Verify(*at3).ToString();
  auto at7 = Instantiate(*at3, sizes, {7});
  ASSERT_TRUE(at7.ok()) << at7.status().ToString();
  Status same = CheckSameGraph(**at7, *BuildAt(7));
  EXPECT_TRUE(same.ok()) << same.ToString();
  EXPECT_EQ((*at7)->NetOutputNode()->input(0).node->output_desc(0).shape, (Shape{7, 4}));
  // The template's constants are unchanged; the instance has its own.
  EXPECT_EQ(*std::get<Tensor>(at3->FindNode("shape")->attrs().at("value")).ToInt64Vector(),
            (std::vector<int64_t>{6, 4}));
  EXPECT_FALSE(CheckSameGraph(**at7, *BuildAt(6)).ok());
}

TEST(SizeTemplateTest, ReadSymbolsChecksRangesGuardsAndInputs) {
  auto at3 = BuildAt(3);
  SizeTemplate sizes = TemplateFor(*DiffSizes(*at3, *BuildAt(5)));
  EXPECT_EQ(*ReadSymbols(*at3, sizes, {{9, 8}}), (std::vector<int64_t>{9}));
  auto wrong = ReadSymbols(*at3, sizes, {{9, 7}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("expects [9,8] for s0=9"), std::string::npos) << wrong.status().message();
  EXPECT_NE(ReadSymbols(*at3, sizes, {{2048, 8}}).status().message().find("outside the range"), std::string::npos);
  sizes.guards.push_back(*SymExpr::Parse("s0%2==1", {"s0"}));
  EXPECT_NE(ReadSymbols(*at3, sizes, {{4, 8}}).status().message().find("s0%2==1"), std::string::npos);
  EXPECT_FALSE(Instantiate(*at3, sizes, {4}).ok());
  EXPECT_FALSE(ReadSymbols(*at3, sizes, {}).ok());
}

TEST(SizeTemplateTest, StructuralDifferencesAndBadSitesAreErrors) {
  es::GraphBuilder b("other");
  auto x = b.CreateInput(0, DataType::kFloat, {3, 8}, Format::kND, "x");
  b.SetOutputs({b.Op1("Relu", {x}, {}, "reshape")});
  auto other = b.Build();
  EXPECT_FALSE(DiffSizes(*BuildAt(3), **other).ok());
  auto at3 = BuildAt(3);
  SizeTemplate sizes;
  sizes.symbols.push_back({"s0", 0, 0, 2, 1024});
  sizes.sites.push_back({"shape", SizeSiteKind::kConstElement, "", 9, SymExpr::Symbol(0)});
  EXPECT_FALSE(sizes.Verify(*at3).ok());
  sizes.sites = {{"nowhere", SizeSiteKind::kAttr, "x", -1, SymExpr::Symbol(0)}};
  EXPECT_FALSE(sizes.Verify(*at3).ok());
  sizes.sites = {{"x", SizeSiteKind::kInputDim, "", 0, SymExpr::Symbol(3)}};
  EXPECT_FALSE(sizes.Verify(*at3).ok());
}

// Every instance names its values' shapes from the template's sites (symbolic shape inference),
// sets them as TensorDesc::symbolic and spells the varying ones for dumps.
TEST(SizeTemplateTest, InstancesNameTheirShapesFromTheSites) {
  auto at3 = BuildAt(3);
  SizeTemplate sizes = TemplateFor(*DiffSizes(*at3, *BuildAt(5)));
  auto at7 = Instantiate(*at3, sizes, {7});
  ASSERT_TRUE(at7.ok()) << at7.status().ToString();
  const TensorDesc& reshaped = (*at7)->FindNode("reshape")->output_desc(0);
  EXPECT_EQ(reshaped.shape, (Shape{14, 4}));
  ASSERT_EQ(reshaped.symbolic.size(), 2u);
  EXPECT_EQ(reshaped.symbolic[0].ToString({"s0"}), "2*s0");  // the shape constant's site
  EXPECT_EQ(reshaped.FixedDims(), (std::vector<bool>{false, true}));
  EXPECT_EQ(GetAttrOr((*at7)->FindNode("slice")->attrs(), kAttrSymbolicShapes, std::vector<std::string>{}),
            (std::vector<std::string>{"[min(s0, 2*s0), 4]"}));  // torch's clamp of the end
  EXPECT_EQ((*at7)->FindNode("x")->output_desc(0).FixedDims(), (std::vector<bool>{false, true}));
  EXPECT_TRUE(CheckSameGraph(**at7, *BuildAt(7)).ok());  // the annotation is not compared
}

TEST(TensorDescTest, FixedDimsAreConstantsThatMatchTheShape) {
  TensorDesc desc(DataType::kFloat, {6, 4, 2});
  EXPECT_EQ(desc.FixedDims(), (std::vector<bool>{false, false, false}));  // nothing known
  desc.symbolic = {SymExpr::Symbol(0), SymExpr::Constant(4), SymExpr::Constant(3)};
  EXPECT_EQ(desc.FixedDims(), (std::vector<bool>{false, true, false}));  // a stale constant counts as varying
  desc.symbolic.pop_back();
  EXPECT_EQ(desc.FixedDims(), (std::vector<bool>{false, false, false}));  // another rank: not known
}

}  // namespace
}  // namespace ge
