// Registry cases: elementwise, casts, products, reductions, shapes.
#include "op_cases.h"

namespace ge::op_cases {

std::vector<OpCase> MathAndShapeCases() {
  std::vector<OpCase> cases;
  for (const char* op : {"Identity", "Neg", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Gelu"})
    cases.push_back(Unary(op));
  // Float-only math rejects integers; numeric ops reject bool; every unary op rejects two inputs.
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt"})
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kInt64)}); }, {}});
  for (const char* op : {"Neg", "Relu"})
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2}, DataType::kBool)}); }, {}});
  cases.push_back({"Identity", [](GraphBuilder& b) { return b.Op("Identity", {In(b, {2}), In(b, {2})}); }, {}});
  cases.push_back({"Gelu",
                   [](GraphBuilder& b) {
                     return b.Op("Gelu", {In(b, {2})}, {{"approximate", std::string("cubic")}});
                   },
                   {}});
  for (const char* op : {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow"}) {
    cases.push_back(Binary(op));
    cases.push_back(BinaryBad(op));
  }
  cases.push_back({"Add", [](GraphBuilder& b) { return b.Op("Add", {In(b, {2}), In(b, {2}, DataType::kInt64)}); }, {}});
  cases.push_back({"Cast",
                   [](GraphBuilder& b) {
                     return b.Op("Cast", {In(b, {2, 2})}, {{"dst_type", DataType::kFloat16}});
                   },
                   {TensorDesc(DataType::kFloat16, {2, 2})}});
  cases.push_back({"Cast", [](GraphBuilder& b) { return b.Op("Cast", {In(b, {2})}); }, {}});  // dst_type missing

  cases.push_back({"MatMulV2",
                   [](GraphBuilder& b) {
                     return b.Op("MatMulV2", {In(b, {5, 3}), In(b, {4, 5}), In(b, {4})},
                                 {{"transpose_x1", true}, {"transpose_x2", true}});
                   },
                   {TensorDesc(F32, {3, 4})}});
  cases.push_back({"MatMulV2", [](GraphBuilder& b) { return b.Op("MatMulV2", {In(b, {2, 3}), In(b, {4, 5})}); }, {}});
  cases.push_back({"GroupedMatMul",
                   [](GraphBuilder& b) {
                     return b.Op("GroupedMatMul", {In(b, {10, 8}), In(b, {3, 8, 5}), In(b, {3}, DataType::kInt32)});
                   },
                   {TensorDesc(F32, {10, 5})}});
  cases.push_back({"GroupedMatMul",
                   [](GraphBuilder& b) {
                     return b.Op("GroupedMatMul", {In(b, {10, 8}), In(b, {3, 8, 5}), In(b, {2}, DataType::kInt32)});
                   },
                   {}});  // 2 offsets for 3 groups
  cases.push_back({"FusedMatMul",
                   [](GraphBuilder& b) {
                     return b.Op("FusedMatMul", {In(b, {5, 3}), In(b, {4, 3}), In(b, {4})},
                                 {{"transpose_x2", true}, {"fused_op_type", std::string("gelu")}});
                   },
                   {TensorDesc(F32, {5, 4})}});
  cases.push_back({"FusedMatMul",
                   [](GraphBuilder& b) {
                     return b.Op("FusedMatMul", {In(b, {5, 3}), In(b, {3, 4}), es::OpInput{}},
                                 {{"fused_op_type", std::string("swish")}});
                   },
                   {}});  // not an activation FusedMatMul applies
  cases.push_back({"BatchMatMulV2",
                   [](GraphBuilder& b) {
                     return b.Op("BatchMatMulV2", {In(b, {2, 1, 3, 4}), In(b, {5, 6, 4})}, {{"adj_x2", true}});
                   },
                   {TensorDesc(F32, {2, 5, 3, 6})}});
  cases.push_back({"BatchMatMulV2",
                   [](GraphBuilder& b) {
                     return b.Op("BatchMatMulV2", {In(b, {3}), In(b, {3, 2})});
                   },
                   {}});
  for (const char* op : {"ReduceSum", "ReduceMean"}) {
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3, 4}), b.CreateVector({-1, 0})}, {{"keep_dims", true}});
                     },
                     {TensorDesc(F32, {1, 3, 1})}});
    cases.push_back({op,
                     [op](GraphBuilder& b) {
                       return b.Op(op, {In(b, {2, 3}), b.CreateVector({})});
                     },
                     {TensorDesc(F32, {})}});
    cases.push_back({op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), b.CreateVector({2})}); }, {}});
  }

  const IntList ones = {1, 1, 1, 1};
  cases.push_back({"Conv2D",
                   [ones](GraphBuilder& b) {
                     return b.Op("Conv2D", {In(b, {2, 4, 9, 9}), In(b, {6, 2, 3, 3}), In(b, {6})},
                                 {{"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"dilations", ones},
                                  {"groups", int64_t{2}}});
                   },
                   {TensorDesc(F32, {2, 6, 5, 5}, Format::kNCHW)}});
  cases.push_back({"Conv2D",
                   [](GraphBuilder& b) {
                     return b.Op("Conv2D", {In(b, {2, 4, 9, 9}), In(b, {6, 3, 3, 3})},
                                 {{"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{0, 0, 0, 0}}});
                   },
                   {}});
  cases.push_back({"FusedConv2D",
                   [](GraphBuilder& b) {
                     return b.Op("FusedConv2D",
                                 {In(b, {2, 9, 9, 4}), In(b, {6, 4, 3, 3}), es::OpInput{}, In(b, {2, 5, 5, 6})},
                                 {{"strides", IntList{1, 2, 2, 1}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"data_format", std::string("NHWC")},
                                  {"fused_op_type", std::string("relu")}});
                   },
                   {TensorDesc(F32, {2, 5, 5, 6})}});  // its epilogue's value: no layout format
  cases.push_back({"FusedConv2D",
                   [](GraphBuilder& b) {
                     return b.Op("FusedConv2D",
                                 {In(b, {2, 4, 9, 9}), In(b, {6, 4, 3, 3}), In(b, {6}), In(b, {2, 6, 9, 9})},
                                 {{"strides", IntList{1, 1, 2, 2}}, {"pads", IntList{1, 1, 1, 1}}});
                   },
                   {}});  // the residual is not the output's shape (5x5)
  cases.push_back({"FusedConv2D",
                   [](GraphBuilder& b) {
                     return b.Op("FusedConv2D", {In(b, {2, 4, 9, 9}), In(b, {6, 4, 3, 3})},
                                 {{"strides", IntList{1, 1, 1, 1}},
                                  {"pads", IntList{0, 0, 0, 0}},
                                  {"fused_op_type", std::string("softplus")}});
                   },
                   {}});  // not an activation FusedConv2D applies
  cases.push_back({"FusedConv2D",
                   [](GraphBuilder& b) {
                     return b.Op("FusedConv2D",
                                 {In(b, {1, 9, 9, 4}), In(b, {6, 4, 3, 3}), es::OpInput{}, In(b, {1, 9, 9, 6}),
                                  In(b, {6}), In(b, {6}), In(b, {6}), In(b, {6})},
                                 {{"strides", IntList{1, 1, 1, 1}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"data_format", std::string("NHWC")},
                                  {"epsilon", 1e-5},
                                  {"fused_op_type", std::string("relu")}});
                   },
                   {TensorDesc(F32, {1, 9, 9, 6})}});  // batch norm, residual, relu: ResNet's block
  cases.push_back({"FusedConv2D",
                   [](GraphBuilder& b) {
                     return b.Op("FusedConv2D",
                                 {In(b, {1, 4, 9, 9}), In(b, {6, 4, 3, 3}), es::OpInput{}, es::OpInput{}, In(b, {6}),
                                  In(b, {6}), In(b, {4}), In(b, {6})},
                                 {{"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{1, 1, 1, 1}}});
                   },
                   {}});  // the batch norm's mean is not [output channels]
  cases.push_back(
      {"FusedConv2D",
       [](GraphBuilder& b) {
         return b.Op("FusedConv2D",
                     {In(b, {1, 4, 9, 9}), In(b, {6, 4, 3, 3}), es::OpInput{}, es::OpInput{}, In(b, {6}), In(b, {6})},
                     {{"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{1, 1, 1, 1}}});
       },
       {}});  // scale and offset without the mean and variance
  cases.push_back({"Conv2DTranspose",
                   [ones](GraphBuilder& b) {
                     return b.Op("Conv2DTranspose", {In(b, {1, 4, 5, 5}), In(b, {4, 3, 3, 3})},
                                 {{"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"output_padding", IntList{0, 0, 1, 1}}});
                   },
                   {TensorDesc(F32, {1, 3, 10, 10})}});
  cases.push_back({"Conv2DTranspose",
                   [](GraphBuilder& b) {
                     return b.Op("Conv2DTranspose", {In(b, {1, 4, 5, 5}), In(b, {3, 3, 3, 3})},
                                 {{"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{0, 0, 0, 0}}});
                   },
                   {}});
  cases.push_back({"Conv2DBackpropFilterD",
                   [ones](GraphBuilder& b) {
                     return b.Op("Conv2DBackpropFilterD", {In(b, {2, 4, 9, 9}), In(b, {2, 6, 5, 5})},
                                 {{"filter_size", IntList{6, 2, 3, 3}},
                                  {"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"groups", int64_t{2}}});
                   },
                   {TensorDesc(F32, {6, 2, 3, 3})}});
  cases.push_back(
      {"Conv2DBackpropFilterD",  // the output gradient is not the convolution's output
       [](GraphBuilder& b) {
         return b.Op(
             "Conv2DBackpropFilterD", {In(b, {2, 4, 9, 9}), In(b, {2, 6, 9, 9})},
             {{"filter_size", IntList{6, 4, 3, 3}}, {"strides", IntList{1, 1, 1, 1}}, {"pads", IntList{0, 0, 0, 0}}});
       },
       {}});
  cases.push_back({"MaxPoolV3",
                   [](GraphBuilder& b) {
                     return b.Op("MaxPoolV3", {In(b, {1, 2, 7, 7})},
                                 {{"ksize", IntList{1, 1, 3, 3}},
                                  {"strides", IntList{1, 1, 2, 2}},
                                  {"pads", IntList{1, 1, 1, 1}},
                                  {"ceil_mode", true}});
                   },
                   {TensorDesc(F32, {1, 2, 4, 4})}});
  cases.push_back({"MaxPoolV3",
                   [](GraphBuilder& b) {
                     return b.Op("MaxPoolV3", {In(b, {1, 2, 7})}, {{"ksize", IntList{1, 1, 3, 3}}});
                   },
                   {}});
  cases.push_back(
      {"MaxPoolWithArgmaxV2",
       [](GraphBuilder& b) {
         return b.Op("MaxPoolWithArgmaxV2", {In(b, {2, 3, 8, 8})},
                     {{"ksize", IntList{1, 1, 3, 3}}, {"strides", IntList{1, 1, 2, 2}}, {"pads", IntList{1, 1, 1, 1}}});
       },
       {TensorDesc(F32, {2, 3, 4, 4}), TensorDesc(DataType::kInt64, {2, 3, 4, 4})}});
  cases.push_back({"MaxPoolWithArgmaxV2",  // a window larger than the padded input
                   [](GraphBuilder& b) {
                     return b.Op("MaxPoolWithArgmaxV2", {In(b, {1, 1, 2, 2})}, {{"ksize", IntList{1, 1, 5, 5}}});
                   },
                   {}});
  cases.push_back({"AvgPoolV2",
                   [](GraphBuilder& b) {
                     return b.Op("AvgPoolV2", {In(b, {1, 2, 8, 6})},
                                 {{"ksize", IntList{1, 1, 2, 2}}, {"strides", IntList{1, 1, 2, 2}}});
                   },
                   {TensorDesc(F32, {1, 2, 4, 3})}});
  cases.push_back({"AvgPoolV2",
                   [](GraphBuilder& b) {
                     return b.Op("AvgPoolV2", {In(b, {1, 2, 8, 6})},
                                 {{"ksize", IntList{1, 1, 2, 2}}, {"padding_mode", std::string("SAME")}});
                   },
                   {}});
  cases.push_back({"AdaptiveAvgPool2d",
                   [](GraphBuilder& b) {
                     return b.Op("AdaptiveAvgPool2d", {In(b, {2, 3, 9, 7})}, {{"output_size", IntList{2, 3}}});
                   },
                   {TensorDesc(F32, {2, 3, 2, 3})}});
  cases.push_back({"AdaptiveAvgPool2d",
                   [](GraphBuilder& b) {
                     return b.Op("AdaptiveAvgPool2d", {In(b, {2, 3, 9, 7})}, {{"output_size", IntList{0, 3}}});
                   },
                   {}});
  cases.push_back({"BatchNorm",
                   [](GraphBuilder& b) {
                     return b.Op("BatchNorm", {In(b, {2, 3, 4, 4}), In(b, {3}), In(b, {3}), In(b, {3}), In(b, {3})});
                   },
                   {TensorDesc(F32, {2, 3, 4, 4})}});
  cases.push_back({"BatchNorm",
                   [](GraphBuilder& b) {
                     return b.Op("BatchNorm", {In(b, {2, 3, 4, 4}), In(b, {4}), In(b, {3}), In(b, {3}), In(b, {3})});
                   },
                   {}});
  cases.push_back({"RotaryMul",
                   [](GraphBuilder& b) {  // cos and sin broadcast over heads
                     return b.Op("RotaryMul", {In(b, {2, 4, 6, 8}), In(b, {2, 1, 6, 8}), In(b, {1, 1, 6, 8})});
                   },
                   {TensorDesc(F32, {2, 4, 6, 8})}});
  cases.push_back({"RotaryMul",
                   [](GraphBuilder& b) {  // an odd last dim has no halves
                     return b.Op("RotaryMul", {In(b, {2, 4, 6, 7}), In(b, {6, 7}), In(b, {6, 7})});
                   },
                   {}});
  cases.push_back({"RotaryMul",
                   [](GraphBuilder& b) {  // cos would widen x
                     return b.Op("RotaryMul", {In(b, {4, 6, 8}), In(b, {2, 4, 6, 8}), In(b, {6, 8})});
                   },
                   {}});
  cases.push_back({"FusedAttention",
                   [](GraphBuilder& b) {
                     return b.Op("FusedAttention",
                                 {In(b, {2, 4, 6, 8}), In(b, {2, 4, 5, 8}), In(b, {2, 4, 5, 8}), In(b, {2, 1, 1, 5})},
                                 {{"scale", 0.125}});
                   },
                   {TensorDesc(F32, {2, 4, 6, 8})}});
  cases.push_back({"FusedAttention",
                   [](GraphBuilder& b) {  // grouped-query: 2 key/value heads for 4 query heads
                     return b.Op("FusedAttention", {In(b, {2, 4, 6, 8}), In(b, {2, 2, 5, 8}), In(b, {2, 2, 5, 8})},
                                 {{"scale", 0.125}});
                   },
                   {TensorDesc(F32, {2, 4, 6, 8})}});
  cases.push_back({"FusedAttention",
                   [](GraphBuilder& b) {  // 3 key/value heads do not divide 4 query heads
                     return b.Op("FusedAttention", {In(b, {2, 4, 6, 8}), In(b, {2, 3, 5, 8}), In(b, {2, 3, 5, 8})},
                                 {{"scale", 0.125}});
                   },
                   {}});
  cases.push_back({"FusedAttention",
                   [](GraphBuilder& b) {  // key's feature dim differs from the query's
                     return b.Op("FusedAttention", {In(b, {2, 4, 6, 8}), In(b, {2, 4, 5, 7}), In(b, {2, 4, 5, 3})},
                                 {{"scale", 0.125}});
                   },
                   {}});
  cases.push_back({"FusedAttentionWithLse",
                   [](GraphBuilder& b) {  // grouped-query, masked: the output and each query row's log-sum-exp
                     return b.Op("FusedAttentionWithLse",
                                 {In(b, {2, 4, 6, 8}), In(b, {2, 2, 5, 8}), In(b, {2, 2, 5, 8}), In(b, {2, 1, 1, 5})},
                                 {{"scale", 0.125}});
                   },
                   {TensorDesc(F32, {2, 4, 6, 8}), TensorDesc(F32, {2, 4, 6})}});
  cases.push_back({"FusedAttentionWithLse",
                   [](GraphBuilder& b) {  // a mask that does not broadcast to the scores
                     return b.Op("FusedAttentionWithLse",
                                 {In(b, {2, 4, 6, 8}), In(b, {2, 4, 5, 8}), In(b, {2, 4, 5, 8}), In(b, {2, 1, 1, 6})},
                                 {{"scale", 0.125}});
                   },
                   {}});
  cases.push_back({"FusedAttentionGrad",
                   [](GraphBuilder& b) {  // grouped-query, masked: dq, dk, dv like query, key, value
                     return b.Op("FusedAttentionGrad",
                                 {In(b, {2, 4, 6, 16}), In(b, {2, 2, 5, 16}), In(b, {2, 2, 5, 16}), In(b, {2, 1, 1, 5}),
                                  In(b, {2, 4, 6, 16}), In(b, {2, 4, 6, 16}), In(b, {2, 4, 6})},
                                 {{"scale", 0.25}});
                   },
                   {TensorDesc(F32, {2, 4, 6, 16}), TensorDesc(F32, {2, 2, 5, 16}), TensorDesc(F32, {2, 2, 5, 16})}});
  cases.push_back({"FusedAttentionGrad",
                   [](GraphBuilder& b) {  // a log-sum-exp per key instead of per query row
                     return b.Op("FusedAttentionGrad",
                                 {In(b, {2, 4, 6, 16}), In(b, {2, 4, 5, 16}), In(b, {2, 4, 5, 16}), es::OpInput{},
                                  In(b, {2, 4, 6, 16}), In(b, {2, 4, 6, 16}), In(b, {2, 4, 5})},
                                 {{"scale", 0.25}});
                   },
                   {}});
  cases.push_back({"SoftmaxV2",
                   [](GraphBuilder& b) {
                     return b.Op("SoftmaxV2", {In(b, {2, 5})});
                   },
                   {TensorDesc(F32, {2, 5})}});
  cases.push_back({"SoftmaxV2",
                   [](GraphBuilder& b) {
                     return b.Op("SoftmaxV2", {In(b, {2, 5})}, {{"axes", IntList{2}}});
                   },
                   {}});
  cases.push_back({"SafeSoftmax",
                   [](GraphBuilder& b) {
                     return b.Op("SafeSoftmax", {In(b, {2, 5})}, {{"axes", IntList{0}}});
                   },
                   {TensorDesc(F32, {2, 5})}});
  cases.push_back({"SafeSoftmax",
                   [](GraphBuilder& b) {
                     return b.Op("SafeSoftmax", {In(b, {2, 5})}, {{"axes", IntList{0, 1}}});
                   },
                   {}});
  cases.push_back(
      {"LayerNorm",
       [](GraphBuilder& b) {
         return b.Op("LayerNorm", {In(b, {2, 3, 8}), In(b, {8}), In(b, {8})}, {{"begin_norm_axis", int64_t{-1}}});
       },
       {TensorDesc(F32, {2, 3, 8}), TensorDesc(F32, {2, 3, 1}), TensorDesc(F32, {2, 3, 1})}});
  cases.push_back({"LayerNorm",
                   [](GraphBuilder& b) {
                     return b.Op("LayerNorm", {In(b, {2, 3, 8}), In(b, {3})}, {{"begin_norm_axis", int64_t{2}}});
                   },
                   {}});

  cases.push_back({"Data",
                   [](GraphBuilder& b) { return std::vector<EsTensor>{b.CreateInput(0, F32, {3})}; },
                   {TensorDesc(F32, {3})}});
  cases.push_back({"Data", [](GraphBuilder& b) { return b.Op("Data", {}); }, {}});  // index attr missing
  cases.push_back({"Const",
                   [](GraphBuilder& b) { return std::vector<EsTensor>{b.CreateScalar(2.5, DataType::kFloat16)}; },
                   {TensorDesc(DataType::kFloat16, {})}});
  cases.push_back({"Const", [](GraphBuilder& b) { return b.Op("Const", {}); }, {}});
  cases.push_back({"NetOutput",
                   [](GraphBuilder& b) {
                     auto outs = b.Op("NetOutput", {std::vector<EsTensor>{In(b, {2}), In(b, {3}, DataType::kInt64)}});
                     return b.status().ok() ? std::vector<EsTensor>{EsTensor(&b, Value{})} : outs;
                   },
                   {TensorDesc()}});
  cases.push_back(
      {"NetOutput", [](GraphBuilder& b) { return b.Op("NetOutput", {std::vector<EsTensor>{EsTensor()}}); }, {}});
  cases.push_back({"Reshape",
                   [](GraphBuilder& b) {
                     return b.Op("Reshape", {In(b, {2, 3, 4}), b.CreateVector({4, -1})});
                   },
                   {TensorDesc(F32, {4, 6})}});
  cases.push_back({"Reshape",
                   [](GraphBuilder& b) {
                     return b.Op("Reshape", {In(b, {2, 3}), b.CreateVector({4, 2})});
                   },
                   {}});
  cases.push_back({"Transpose",
                   [](GraphBuilder& b) {
                     return b.Op("Transpose", {In(b, {2, 3, 4}), b.CreateVector({2, 0, 1}, DataType::kInt32)});
                   },
                   {TensorDesc(F32, {4, 2, 3})}});
  cases.push_back({"Transpose",
                   [](GraphBuilder& b) {
                     return b.Op("Transpose", {In(b, {2, 3}), b.CreateVector({0, 0})});
                   },
                   {}});
  cases.push_back({"ConcatV2",
                   [](GraphBuilder& b) {
                     return b.Op("ConcatV2",
                                 {std::vector<EsTensor>{In(b, {2, 3}), In(b, {2, 5})}, b.CreateVector({-1})},
                                 {{"N", int64_t{2}}});
                   },
                   {TensorDesc(F32, {2, 8})}});
  cases.push_back({"ConcatV2",
                   [](GraphBuilder& b) {
                     return b.Op("ConcatV2", {std::vector<EsTensor>{In(b, {2, 3}), In(b, {3, 5})}, b.CreateVector({1})},
                                 {{"N", int64_t{2}}});
                   },
                   {}});
  cases.push_back({"Flatten",
                   [](GraphBuilder& b) {
                     return b.Op("Flatten", {In(b, {2, 3, 4, 5})}, {{"axis", int64_t{2}}});
                   },
                   {TensorDesc(F32, {6, 20})}});
  cases.push_back({"Flatten",
                   [](GraphBuilder& b) {
                     return b.Op("Flatten", {In(b, {2, 3})}, {{"axis", int64_t{5}}});
                   },
                   {}});
  return cases;
}

}  // namespace ge::op_cases
