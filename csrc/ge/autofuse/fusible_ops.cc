#include "ge/autofuse/fusible_ops.h"

#include <cmath>
#include <functional>
#include <optional>
#include <unordered_map>

#include "ge/ops/op_registry.h"
#include "ge/ops/rewrite_utils.h"

namespace ge::autofuse {
namespace {

bool IsFloat(DataType t) { return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16; }
bool IsFloatOrBool(DataType t) { return IsFloat(t) || t == DataType::kBool; }

DataType InDtype(const Node* node, int i) {
  const Value v = node->input(i);
  return v.valid() ? v.node->output_desc(v.index).dtype : DataType::kUndefined;
}
const Shape& InShape(const Node* node, int i) {
  const Value v = node->input(i);
  return v.node->output_desc(v.index).shape;
}

bool AllInputs(const Node* node, bool (*ok)(DataType)) {
  for (int i = 0; i < node->num_inputs(); ++i)
    if (node->input(i).valid() && !ok(InDtype(node, i))) return false;
  return true;
}

// The first reduced axis when `axes` (normalized) are exactly the trailing axes of a rank-r input.
std::optional<int> TrailingAxes(std::vector<int64_t> axes, int rank) {
  if (rank == 0) return std::nullopt;
  if (axes.empty())  // "all axes"
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) return std::nullopt;
    reduced[static_cast<size_t>(axis)] = true;
  }
  int first = rank;
  while (first > 0 && reduced[static_cast<size_t>(first - 1)]) --first;
  for (int a = 0; a < first; ++a)
    if (reduced[static_cast<size_t>(a)]) return std::nullopt;
  if (first == rank) return std::nullopt;
  return first;
}

using Lowering = std::function<Expected<std::vector<int>>(KernelBuilder&, const Node*, const std::vector<int>&)>;

struct OpRule {
  std::function<std::optional<FusibleInfo>(const Node*)> check;
  Lowering lower;
};

std::optional<FusibleInfo> Elementwise(bool ok) {
  if (!ok) return std::nullopt;
  return FusibleInfo{std::nullopt, {false}};
}

Lowering UnaryFn(KFn fn) {
  return [fn](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
    return std::vector<int>{b.Unary(fn, a[0])};
  };
}
Lowering BinaryFn(KFn fn) {
  return [fn](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
    return std::vector<int>{b.Binary(fn, a[0], a[1])};
  };
}

int Square(KernelBuilder& b, int x) { return b.Binary(KFn::kMul, x, x); }

// x ** p for the exponents ATen's pow with a scalar exponent computes without pow (products,
// square roots, reciprocals, in ATen's order: eager's numbers, the kernel's rsqrt within an ulp of
// ATen's): pow is a scalar call per lane in vector kernels, and GPT-2's GELU (x ** 3) made its
// feed-forward epilogue 2.6x the next product's.
std::optional<int> ConstantPower(KernelBuilder& b, int x, double p) {
  if (p == 1.0) return x;
  if (p == 2.0) return Square(b, x);
  if (p == 3.0) return b.Binary(KFn::kMul, Square(b, x), x);
  if (p == 0.5) return b.Unary(KFn::kSqrt, x);
  if (p == -0.5) return b.Unary(KFn::kRsqrt, x);
  if (p == -1.0) return b.Unary(KFn::kReciprocal, x);
  if (p == -2.0) return b.Unary(KFn::kReciprocal, Square(b, x));
  return std::nullopt;
}

// Softmax-family and reductions: `axes` attr or const input 1.
std::optional<FusibleInfo> RowOp(const Node* node, const std::vector<int64_t>& axes, std::vector<bool> row_outputs) {
  if (!IsFloat(InDtype(node, 0))) return std::nullopt;
  auto first = TrailingAxes(axes, static_cast<int>(InShape(node, 0).size()));
  if (!first) return std::nullopt;
  return FusibleInfo{*first, std::move(row_outputs)};
}

std::optional<FusibleInfo> CheckReduce(const Node* node) {
  auto axes = ConstInts(node->input(1));
  if (!axes) return std::nullopt;
  auto info = RowOp(node, *axes, {true});
  if (info) info->data_inputs = 1;
  return info;
}

Lowering ReduceFn(KFn fn, bool mean) {
  return [fn, mean](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
    int r = b.Reduce(fn, a[0]);
    if (mean) r = b.Binary(KFn::kDiv, r, b.Const(static_cast<double>(b.ir().row_size())));
    return std::vector<int>{r};
  };
}

std::optional<FusibleInfo> SoftmaxRow(const Node* n) {
  return RowOp(n, n->GetAttrOr<std::vector<int64_t>>("axes", {-1}), {false});
}

int Softmax(KernelBuilder& b, int x) {
  const int e = b.Unary(KFn::kExp, b.Binary(KFn::kSub, x, b.Reduce(KFn::kMax, x)));
  return b.Binary(KFn::kDiv, e, b.Reduce(KFn::kSum, e));
}

// NOLINTNEXTLINE(readability-function-size): the table of lowering rules, one entry per op type
const std::unordered_map<std::string, OpRule>& Rules() {
  static const auto* rules = [] {
    auto* r = new std::unordered_map<std::string, OpRule>();
    auto float_unary = [](const Node* n) { return Elementwise(AllInputs(n, IsFloat)); };
    for (const auto& [type, fn] : std::vector<std::pair<std::string, KFn>>{{"Neg", KFn::kNeg},
                                                                           {"Relu", KFn::kRelu},
                                                                           {"Sigmoid", KFn::kSigmoid},
                                                                           {"Tanh", KFn::kTanh},
                                                                           {"Exp", KFn::kExp},
                                                                           {"Log", KFn::kLog},
                                                                           {"Sqrt", KFn::kSqrt},
                                                                           {"Rsqrt", KFn::kRsqrt},
                                                                           {"Abs", KFn::kAbs},
                                                                           {"Reciprocal", KFn::kReciprocal},
                                                                           {"Sin", KFn::kSin},
                                                                           {"Cos", KFn::kCos},
                                                                           {"Erf", KFn::kErf},
                                                                           {"Expm1", KFn::kExpm1},
                                                                           {"Log1p", KFn::kLog1p},
                                                                           {"Floor", KFn::kFloor},
                                                                           {"Ceil", KFn::kCeil},
                                                                           {"Trunc", KFn::kTrunc},
                                                                           {"Round", KFn::kRound},
                                                                           {"HardSigmoid", KFn::kHardSigmoid},
                                                                           {"HardSwish", KFn::kHardSwish}})
      (*r)[type] = {float_unary, UnaryFn(fn)};
    // Exact (erf) GELU stays a library op: ATen runs it through oneDNN's JIT eltwise kernel, which
    // measured 2.7x faster per element than the generated erf (58 vs 154 us for 256K floats on one
    // AVX-512 core) -- more than the memory pass that fusing it would save (bert's bias + GELU
    // epilogue: 1.06 ms fused vs 0.91 ms unfused). The tanh form (ATen: a slow vectorized tanh)
    // and GELU written out with Erf fuse.
    (*r)["Gelu"] = {
        [](const Node* n) {
          return Elementwise(n->GetAttrOr<std::string>("approximate", "none") == "tanh" && AllInputs(n, IsFloat));
        },
        [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
          return std::vector<int>{b.Unary(KFn::kGeluTanh, a[0])};
        }};
    (*r)["LeakyRelu"] = {float_unary,
                         [](KernelBuilder& b, const Node* n, const std::vector<int>& a) -> Expected<std::vector<int>> {
                           const int slope = b.Const(n->GetAttrOr<double>("negative_slope", 0.0));
                           const int negative = b.Binary(KFn::kLt, a[0], b.Const(0.0));
                           return std::vector<int>{b.Select(negative, b.Binary(KFn::kMul, a[0], slope), a[0])};
                         }};
    (*r)["Swish"] = {float_unary,
                     [](KernelBuilder& b, const Node* n, const std::vector<int>& a) -> Expected<std::vector<int>> {
                       const double scale = n->GetAttrOr<double>("scale", 1.0);
                       const int scaled = scale == 1.0 ? a[0] : b.Binary(KFn::kMul, a[0], b.Const(scale));
                       return std::vector<int>{b.Binary(KFn::kMul, a[0], b.Unary(KFn::kSigmoid, scaled))};
                     }};
    (*r)["Identity"] = {[](const Node* n) { return Elementwise(AllInputs(n, IsFloatOrBool)); },
                        [](KernelBuilder&, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                          return std::vector<int>{a[0]};
                        }};
    for (const auto& [type, fn] : std::vector<std::pair<std::string, KFn>>{{"Add", KFn::kAdd},
                                                                           {"Sub", KFn::kSub},
                                                                           {"Mul", KFn::kMul},
                                                                           {"RealDiv", KFn::kDiv},
                                                                           {"Maximum", KFn::kMax},
                                                                           {"Minimum", KFn::kMin}})
      (*r)[type] = {float_unary, BinaryFn(fn)};
    (*r)["Pow"] = {float_unary,
                   [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                     const auto& e = b.op(a[1]);
                     if (e.kind == OpKind::kConst)
                       if (const std::optional<int> power = ConstantPower(b, a[0], e.value))
                         return std::vector<int>{*power};
                     return std::vector<int>{b.Binary(KFn::kPow, a[0], a[1])};
                   }};
    for (const auto& [type, fn] : std::vector<std::pair<std::string, KFn>>{{"Equal", KFn::kEq},
                                                                           {"NotEqual", KFn::kNe},
                                                                           {"Less", KFn::kLt},
                                                                           {"LessEqual", KFn::kLe},
                                                                           {"Greater", KFn::kGt},
                                                                           {"GreaterEqual", KFn::kGe}})
      (*r)[type] = {float_unary, BinaryFn(fn)};
    auto bool_only = [](const Node* n) {
      return Elementwise(AllInputs(n, [](DataType t) { return t == DataType::kBool; }));
    };
    (*r)["LogicalAnd"] = {bool_only, BinaryFn(KFn::kAnd)};
    (*r)["LogicalOr"] = {bool_only, BinaryFn(KFn::kOr)};
    (*r)["LogicalNot"] = {bool_only, UnaryFn(KFn::kNot)};
    (*r)["SelectV2"] = {
        [](const Node* n) {
          return Elementwise(InDtype(n, 0) == DataType::kBool && IsFloat(InDtype(n, 1)) && IsFloat(InDtype(n, 2)));
        },
        [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
          return std::vector<int>{b.Select(a[0], a[1], a[2])};
        }};
    (*r)["MaskedFill"] = {
        [](const Node* n) {
          return Elementwise(IsFloat(InDtype(n, 0)) && InDtype(n, 1) == DataType::kBool && IsFloat(InDtype(n, 2)));
        },
        [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
          return std::vector<int>{b.Select(a[1], a[2], a[0])};
        }};
    (*r)["ClipByValue"] = {float_unary,
                           [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                             return std::vector<int>{b.Binary(KFn::kMin, b.Binary(KFn::kMax, a[0], a[1]), a[2])};
                           }};
    (*r)["BroadcastTo"] = {[](const Node* n) {
                             auto info = Elementwise(IsFloatOrBool(InDtype(n, 0)));
                             if (info) info->data_inputs = 1;
                             return info;
                           },
                           [](KernelBuilder&, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                             return std::vector<int>{a[0]};
                           }};
    // A Transpose of a tensor from outside the group is a load with permuted strides.
    (*r)["Transpose"] = {[](const Node* n) -> std::optional<FusibleInfo> {
                           if (!IsFloatOrBool(InDtype(n, 0)) || !ConstInts(n->input(1))) return std::nullopt;
                           FusibleInfo info{std::nullopt, {false}};
                           info.data_inputs = 1;
                           info.loads_from_outside = true;
                           return info;
                         },
                         [](KernelBuilder& b, const Node* n, const std::vector<int>&) -> Expected<std::vector<int>> {
                           GE_ASSIGN_OR_RETURN(int id, b.ExternalPermuted(n->input(0), *ConstInts(n->input(1))));
                           return std::vector<int>{id};
                         }};
    // A slice or a select (a constant 0-d index) of a tensor from outside the group: a load
    // where it lies in that tensor, through its strides times the steps -- no copy (an MMoE's
    // per-expert gate weights selected from the gate's softmax).
    const OpRule slice = {[](const Node* n) -> std::optional<FusibleInfo> {
                            const Value x = n->input(0);
                            const TensorDesc& in = x.node->output_desc(x.index);
                            int64_t dropped = -1;
                            if (!IsFloatOrBool(in.dtype) || !in.IsStatic() || !n->output_desc(0).IsStatic() ||
                                !SliceRanges(n, in.shape, &dropped))
                              return std::nullopt;
                            FusibleInfo info{std::nullopt, {false}};
                            info.data_inputs = 1;
                            info.loads_from_outside = true;
                            return info;
                          },
                          [](KernelBuilder& b, const Node* n, const std::vector<int>&) -> Expected<std::vector<int>> {
                            const Value x = n->input(0);
                            int64_t dropped = -1;
                            const auto ranges = SliceRanges(n, x.node->output_desc(x.index).shape, &dropped);
                            if (!ranges) return InvalidArgument("{}: not a constant slice", n->ToString());
                            GE_ASSIGN_OR_RETURN(int id, b.ExternalSliced(x, *ranges, dropped));
                            return std::vector<int>{id};
                          }};
    (*r)["StridedSliceV2"] = slice;
    (*r)["GatherV2"] = slice;
    // A concatenation of tensors made outside the group: one kConcat reading each part.
    (*r)["ConcatV2"] = {[](const Node* n) -> std::optional<FusibleInfo> {
                          const int parts = n->num_inputs() - 1;
                          if (parts < 1 || !ConstInts(n->input(parts))) return std::nullopt;
                          for (int i = 0; i < parts; ++i)
                            if (!IsFloatOrBool(InDtype(n, i))) return std::nullopt;
                          FusibleInfo info{std::nullopt, {false}};
                          info.data_inputs = parts;
                          info.loads_from_outside = true;
                          return info;
                        },
                        [](KernelBuilder& b, const Node* n, const std::vector<int>&) -> Expected<std::vector<int>> {
                          const std::vector<Value> parts(n->inputs().begin(), n->inputs().end() - 1);
                          GE_ASSIGN_OR_RETURN(int id, b.ExternalConcat(parts, (*ConstInts(n->inputs().back()))[0]));
                          return std::vector<int>{id};
                        }};
    (*r)["Cast"] = {[](const Node* n) {
                      const DataType out = n->output_desc(0).dtype;
                      return Elementwise(ScalarTypeOf(InDtype(n, 0)).has_value() && IsFloatOrBool(out));
                    },
                    [](KernelBuilder& b, const Node* n, const std::vector<int>& a) -> Expected<std::vector<int>> {
                      const DataType out = n->output_desc(0).dtype;
                      if (out == DataType::kBool)
                        return std::vector<int>{b.Binary(KFn::kNe, b.Cast(a[0], ScalarType::kFloat), b.Const(0.0))};
                      int v = b.Cast(a[0], ScalarType::kFloat);
                      // Narrowing rounds as eager does; the value stays a float inside the kernel.
                      const DataType in = InDtype(n, 0);
                      if (out == DataType::kFloat16 && in != DataType::kFloat16) v = b.Unary(KFn::kRoundF16, v);
                      if (out == DataType::kBFloat16 && in != DataType::kBFloat16) v = b.Unary(KFn::kRoundBF16, v);
                      return std::vector<int>{v};
                    }};
    (*r)["ReduceSum"] = {CheckReduce, ReduceFn(KFn::kSum, false)};
    (*r)["ReduceMean"] = {CheckReduce, ReduceFn(KFn::kSum, true)};
    (*r)["ReduceMax"] = {CheckReduce, ReduceFn(KFn::kMax, false)};
    (*r)["ReduceMin"] = {CheckReduce, ReduceFn(KFn::kMin, false)};
    // ATen's logsumexp: the row max, taken as 0 where it is infinite (a fully masked row gives
    // -inf, not NaN), subtracted before exp and added back after the log. Training's SDPA
    // forward returns it beside the output; as a library op beside the fused softmax it cost
    // GPT-2's forward 4 x 0.39 ms.
    (*r)["ReduceLogSumExp"] = {
        CheckReduce, [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
          // ATen's: log(sum(exp(x - m))) + m with an infinite row max m counted as 0. That is
          // m itself when m is infinite (-inf: every term is 0; +inf: a term is +inf), so the
          // terms are the softmax's exp(x - max): a softmax of the same row shares them.
          const int max = b.Reduce(KFn::kMax, a[0]);
          const int sum = b.Reduce(KFn::kSum, b.Unary(KFn::kExp, b.Binary(KFn::kSub, a[0], max)));
          const int infinite = b.Binary(KFn::kEq, b.Unary(KFn::kAbs, max), b.Const(INFINITY));
          return std::vector<int>{b.Select(infinite, max, b.Binary(KFn::kAdd, b.Unary(KFn::kLog, sum), max))};
        }};
    (*r)["SoftmaxV2"] = {SoftmaxRow,
                         [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                           return std::vector<int>{Softmax(b, a[0])};
                         }};
    // A row that is -inf throughout has max -inf, so exp(x - max) is NaN: it gives 0 instead.
    (*r)["SafeSoftmax"] = {SoftmaxRow,
                           [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                             const int masked = b.Binary(KFn::kEq, b.Reduce(KFn::kMax, a[0]), b.Const(-INFINITY));
                             return std::vector<int>{b.Select(masked, b.Const(0.0), Softmax(b, a[0]))};
                           }};
    (*r)["LogSoftmaxV2"] = {SoftmaxRow,
                            [](KernelBuilder& b, const Node*, const std::vector<int>& a) -> Expected<std::vector<int>> {
                              const int shifted = b.Binary(KFn::kSub, a[0], b.Reduce(KFn::kMax, a[0]));
                              const int log_sum = b.Unary(KFn::kLog, b.Reduce(KFn::kSum, b.Unary(KFn::kExp, shifted)));
                              return std::vector<int>{b.Binary(KFn::kSub, shifted, log_sum)};
                            }};
    (*r)["LayerNorm"] = {[](const Node* n) -> std::optional<FusibleInfo> {
                           const int rank = static_cast<int>(InShape(n, 0).size());
                           int64_t axis = n->GetAttrOr<int64_t>("begin_norm_axis", -1);
                           if (axis < 0) axis += rank;
                           std::vector<int64_t> axes;
                           for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
                           if (!AllInputs(n, IsFloat)) return std::nullopt;
                           return RowOp(n, axes, {false, true, true});
                         },
                         [](KernelBuilder& b, const Node* n, const std::vector<int>& a) -> Expected<std::vector<int>> {
                           const int count = b.Const(static_cast<double>(b.ir().row_size()));
                           const int mean = b.Binary(KFn::kDiv, b.Reduce(KFn::kSum, a[0]), count);
                           const int centered = b.Binary(KFn::kSub, a[0], mean);
                           const int variance = b.Binary(KFn::kDiv, b.Reduce(KFn::kSum, Square(b, centered)), count);
                           const int eps = b.Const(n->GetAttrOr<double>("epsilon", 1e-5));
                           int y =
                               b.Binary(KFn::kMul, centered, b.Unary(KFn::kRsqrt, b.Binary(KFn::kAdd, variance, eps)));
                           if (a.size() > 1 && a[1] >= 0) y = b.Binary(KFn::kMul, y, a[1]);
                           if (a.size() > 2 && a[2] >= 0) y = b.Binary(KFn::kAdd, y, a[2]);
                           return std::vector<int>{y, mean, variance};
                         }};
    return r;
  }();
  return *rules;
}

}  // namespace

bool ControlEdgesAllowFusion(const Node* node) {
  if (!node->control_inputs().empty()) return false;
  for (const Node* after : node->control_outputs()) {
    const OpProto* proto = OpRegistry::Global().Find(after->type());
    if (proto == nullptr || proto->inplace.empty()) return false;
  }
  return true;
}

std::optional<FusibleInfo> Fusible(const Node* node) {
  auto it = Rules().find(node->type());
  if (it == Rules().end() || !ControlEdgesAllowFusion(node) || HasSideEffects(node)) return std::nullopt;
  for (int o = 0; o < node->num_outputs(); ++o)
    if (!IsFloatOrBool(node->output_desc(o).dtype) || IsMutatedValue(Value{const_cast<Node*>(node), o}))
      return std::nullopt;
  auto info = it->second.check(node);
  if (!info) return std::nullopt;
  for (int i = 0; i < info->DataInputs(node); ++i)
    if (node->input(i).valid() && !ScalarTypeOf(InDtype(node, i))) return std::nullopt;
  return info;
}

Expected<std::vector<int>> LowerNode(KernelBuilder& b, const Node* node, const std::vector<int>& args) {
  auto it = Rules().find(node->type());
  if (it == Rules().end()) return Unimplemented("{} cannot be fused", node->ToString());
  return it->second.lower(b, node, args);
}

}  // namespace ge::autofuse
