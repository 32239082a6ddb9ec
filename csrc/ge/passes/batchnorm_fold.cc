// BatchNormFold: inference BatchNorm right after a Conv2D (or a MatMulV2 over [batch, features])
// whose weights are constants is folded into those weights:
//   s = scale / sqrt(variance + eps);  W'[c] = W[c] * s[c];  b'[c] = (b[c] - mean[c]) * s[c] + offset[c]
// (c = output channel / feature). Computed in double, stored as float32. With parameters as
// graph inputs the weights are not constants and nothing fires: see frozen_parameter.
#include <cmath>

#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

// float32 contents of a Const, or empty.
std::vector<float> Floats(Value v) {
  const Tensor* t = ConstValue(v);
  if (t == nullptr || t->desc().dtype != DataType::kFloat) return {};
  const float* p = t->data_as<float>();
  return std::vector<float>(p, p + t->desc().NumElements());
}

class BatchNormFold final : public GraphPass {
 public:
  std::string_view name() const override { return "BatchNormFold"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    std::vector<std::string> candidates;
    for (Node* node : graph.nodes())
      if (node->type() == kOpBatchNorm) candidates.push_back(node->name());
    for (const std::string& name : candidates) {
      Node* bn = graph.FindNode(name);
      if (bn == nullptr) continue;
      GE_ASSIGN_OR_RETURN(bool folded, TryFold(graph, bn));
      *changed |= folded;
    }
    return {};
  }

 private:
  static Expected<bool> TryFold(Graph& graph, Node* bn) {
    if (bn->GetAttrOr<bool>("is_training", false) || bn->GetAttrOr<std::string>("data_format", "NCHW") != "NCHW" ||
        HasControlEdges(bn))
      return false;
    const Value y = bn->input(0);
    Node* producer = y.node;
    const bool conv =
        producer->type() == kOpConv2D && producer->GetAttrOr<std::string>("data_format", "NCHW") == "NCHW";
    const bool matmul = producer->type() == kOpMatMulV2 && !producer->GetAttrOr<bool>("transpose_x1", false);
    if ((!conv && !matmul) || !HasSingleUser(y) || HasControlEdges(producer) || FeedsNetOutput(y)) return false;
    if (producer->num_inputs() > 3 && producer->input(3).valid()) return false;  // quantized
    if (producer->output_desc(0).dtype != DataType::kFloat) return false;

    const Value weight_value = producer->input(1);
    std::vector<float> w = Floats(weight_value);
    const std::vector<float> scale = Floats(bn->input(1)), offset = Floats(bn->input(2)), mean = Floats(bn->input(3)),
                             var = Floats(bn->input(4));
    const int64_t channels = producer->output_desc(0).shape.at(1);
    const size_t c = static_cast<size_t>(channels);
    if (w.empty() || scale.size() != c || offset.size() != c || mean.size() != c || var.size() != c) return false;
    std::vector<float> bias(c, 0.0f);
    const bool has_bias = producer->num_inputs() > 2 && producer->input(2).valid();
    if (has_bias) {
      bias = Floats(producer->input(2));
      if (bias.size() != c) return false;
    }

    const double eps = bn->GetAttrOr<double>("epsilon", 1e-4);
    std::vector<double> s(c);
    for (size_t k = 0; k < c; ++k) s[k] = static_cast<double>(scale[k]) / std::sqrt(static_cast<double>(var[k]) + eps);
    const Shape& wshape = ConstValue(weight_value)->desc().shape;
    if (conv) {  // [Cout, Cin/groups, kh, kw]: scale each output channel's block
      const size_t block = w.size() / c;
      for (size_t k = 0; k < c; ++k)
        for (size_t i = 0; i < block; ++i) w[k * block + i] = static_cast<float>(w[k * block + i] * s[k]);
    } else if (producer->GetAttrOr<bool>("transpose_x2", false)) {  // [N, K]: rows are features
      const size_t k_dim = static_cast<size_t>(wshape.at(1));
      for (size_t n = 0; n < c; ++n)
        for (size_t i = 0; i < k_dim; ++i) w[n * k_dim + i] = static_cast<float>(w[n * k_dim + i] * s[n]);
    } else {  // [K, N]: columns are features
      const size_t k_dim = static_cast<size_t>(wshape.at(0));
      for (size_t i = 0; i < k_dim; ++i)
        for (size_t n = 0; n < c; ++n) w[i * c + n] = static_cast<float>(w[i * c + n] * s[n]);
    }
    std::vector<float> folded_bias(c);
    for (size_t k = 0; k < c; ++k)
      folded_bias[k] = static_cast<float>((static_cast<double>(bias[k]) - mean[k]) * s[k] + offset[k]);

    Node* new_w = AddConst(graph, Tensor::FromVector(DataType::kFloat, wshape, w), producer->name() + "_bn_weight");
    Node* new_b =
        AddConst(graph, Tensor::FromVector(DataType::kFloat, {channels}, folded_bias), producer->name() + "_bn_bias");
    // By name: a constant may be shared with the BatchNorm and go away with it.
    const std::string old_w = weight_value.node->name();
    const std::string old_b = has_bias ? producer->input(2).node->name() : std::string();
    graph.SetInput(producer, 1, new_w->output(0));
    if (producer->num_inputs() > 2)
      graph.SetInput(producer, 2, new_b->output(0));
    else
      graph.AppendInput(producer, new_b->output(0));
    graph.ReplaceAllUsesWith(bn->output(0), y);
    GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, bn));
    for (const std::string& name : {old_w, old_b}) {
      Node* old = name.empty() ? nullptr : graph.FindNode(name);
      if (old != nullptr && old->type() == kOpConst && !old->HasUsers() && !HasControlEdges(old))
        GE_RETURN_IF_ERROR(graph.RemoveNode(old));
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateBatchNormFoldPass() { return std::make_unique<BatchNormFold>(); }

}  // namespace ge
