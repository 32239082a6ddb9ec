#include "ge/autofuse/library_epilogues.h"

#include <optional>
#include <string>
#include <vector>

#include "ge/ops/epilogue_activation.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge::autofuse {
namespace {

// A float32 library op (no int8 offsets) whose value `v` only its epilogue reads: nothing else
// needs the raw value, and no control edge orders the op.
bool FoldableLibraryOutput(Value v) {
  const Node* op = v.node;
  if (HasControlEdges(op) || !HasSingleUser(v) || FeedsNetOutput(v) || IsMutatedValue(v)) return false;
  if (op->num_inputs() > 3 && op->input(3).valid()) return false;  // int8 offset_w
  return op->GetAttrOr<int64_t>("offset_x", 0) == 0;
}

// A float product whose only reader is the activation.
bool FoldableProduct(Value product) {
  if (product.node->type() != kOpMatMulV2 || !FoldableLibraryOutput(product)) return false;
  const DataType dt = product.node->output_desc(0).dtype;
  return dt == DataType::kFloat || dt == DataType::kFloat16 || dt == DataType::kBFloat16;
}

// A channels-last float convolution whose only reader is its epilogue. (NCHW convolutions keep
// ATen's kernel, which has no epilogue of its own; the generated kernels take theirs.)
bool FoldableConv(Value conv) {
  const Node* c = conv.node;
  return c->type() == kOpConv2D && FoldableLibraryOutput(conv) &&
         c->GetAttrOr<std::string>("data_format", "NCHW") == "NHWC" && c->output_desc(0).dtype == DataType::kFloat;
}

// The single reader of `v`, when it may be folded into v's producer: no control edges, and v's
// value needed by nobody else.
Node* OnlyReader(Value v) {
  if (!HasSingleUser(v) || FeedsNetOutput(v) || IsMutatedValue(v)) return nullptr;
  Node* user = v.node->users(v.index).front().user;
  return HasControlEdges(user) ? nullptr : user;
}

// The other operand of `add` when it adds a tensor of `v`'s shape and dtype to v (no broadcast).
std::optional<Value> Residual(const Node* add, Value v) {
  if (add->type() != kOpAdd || add->num_inputs() != 2) return std::nullopt;
  const Value other = add->input(0) == v ? add->input(1) : add->input(0);
  // (A value some op updates in place keeps its Add: the order of reads and that write stays as built.)
  if (!other.valid() || other == v || !(add->input(0) == v || add->input(1) == v) || IsMutatedValue(other))
    return std::nullopt;
  const TensorDesc &mine = v.node->output_desc(v.index), &theirs = other.node->output_desc(other.index);
  if (theirs.dtype != mine.dtype || theirs.shape != mine.shape || add->output_desc(0).shape != mine.shape)
    return std::nullopt;
  return other;
}

// An inference BatchNorm over the channels of `v` (NHWC, as the convolution's output) with float
// parameters: what FusedConv2D applies as a per-channel scale and shift.
bool ChannelBatchNorm(const Node* bn, Value v) {
  if (bn->type() != kOpBatchNorm || bn->num_inputs() != 5 || bn->input(0) != v ||
      bn->GetAttrOr<bool>("is_training", false) || bn->GetAttrOr<std::string>("data_format", "NCHW") != "NHWC")
    return false;
  const int64_t channels = v.node->output_desc(v.index).shape.back();
  for (int i = 1; i < 5; ++i) {
    const Value p = bn->input(i);
    if (!p.valid() || IsMutatedValue(p)) return false;
    const TensorDesc& d = p.node->output_desc(p.index);
    if (d.dtype != DataType::kFloat || d.shape != Shape{channels}) return false;
  }
  return true;
}

// Conv2D [-> BatchNorm] [-> Add(residual)] [-> activation] as one FusedConv2D; false when `conv`
// has no epilogue.
Expected<bool> FoldConvEpilogue(Graph& graph, Node* conv) {
  if (!FoldableConv(Value{conv, 0})) return false;
  std::vector<Node*> chain = {conv};
  Value tail{conv, 0};
  Node* next = OnlyReader(tail);
  const Node* batch_norm = nullptr;
  if (next != nullptr && ChannelBatchNorm(next, tail)) {
    batch_norm = next;
    chain.push_back(next);
    tail = Value{next, 0};
    next = OnlyReader(tail);
  }
  std::optional<Value> residual;
  if (next != nullptr && (residual = Residual(next, tail))) {
    chain.push_back(next);
    tail = Value{next, 0};
    next = OnlyReader(tail);
  }
  std::optional<EpilogueActivation> activation;
  if (next != nullptr && next->num_inputs() == 1 && (activation = EpilogueActivationOf(*next))) {
    chain.push_back(next);
    tail = Value{next, 0};
  }
  if (chain.size() == 1) return false;
  const std::string name = activation ? std::string(EpilogueActivationName(*activation)) : std::string();
  std::vector<Value> inputs = {conv->input(0), conv->input(1), conv->num_inputs() > 2 ? conv->input(2) : Value{},
                               residual.value_or(Value{})};
  for (int i = 1; i < 5; ++i)  // scale, offset, mean, variance (absent without a batch norm)
    inputs.push_back(batch_norm != nullptr ? batch_norm->input(i) : Value{});
  Node* fused = graph.AddNode(
      kOpFusedConv2D,
      conv->name() + (batch_norm ? "_bn" : "") + (residual ? "_add" : "") + (name.empty() ? "" : "_" + name), inputs,
      1);
  for (const char* attr : {"strides", "pads", "dilations", "groups", "data_format"})
    if (auto it = conv->attrs().find(attr); it != conv->attrs().end()) fused->SetAttr(attr, it->second);
  fused->SetAttr("fused_op_type", name);
  if (batch_norm != nullptr) fused->SetAttr("epsilon", batch_norm->GetAttrOr<double>("epsilon", 1e-4));
  Node* last = tail.node;
  GE_RETURN_IF_ERROR(SubstituteNode(graph, last, fused));
  fused->output_desc(0).symbolic = last->output_desc(0).symbolic;  // the value it replaces, at any size
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) GE_RETURN_IF_ERROR(graph.RemoveNode(*it));
  return true;
}

// The Reshape between a product and its activation, when the activation may move before it: a
// Linear on a [batch, seq, features] input is a 2-D product and a view back to 3-D (bert's FFN:
// MatMulV2 -> Reshape -> Gelu), and an elementwise activation gives the same values either side
// of a view. Null when `act` reads something else, or the view's value is needed elsewhere.
Node* ViewBetween(Node* act) {
  Node* view = act->input(0).node;
  if (view->type() != kOpReshape || HasControlEdges(view) || OnlyReader(Value{view, 0}) != act ||
      !FoldableProduct(view->input(0)) || !CanBypass(act, Value{view, 0}))
    return nullptr;
  return view;
}

// MatMulV2 [-> Reshape] -> activation as FusedMatMul [-> Reshape]; false when `act` is not an
// activation of a foldable product.
Expected<bool> FoldProductEpilogue(Graph& graph, Node* act) {
  const std::optional<EpilogueActivation> activation = EpilogueActivationOf(*act);
  if (!activation || act->num_inputs() != 1 || HasControlEdges(act)) return false;
  Node* view = ViewBetween(act);
  if (view == nullptr && !FoldableProduct(act->input(0))) return false;
  const std::string name(EpilogueActivationName(*activation));
  Node* mm = view != nullptr ? view->input(0).node : act->input(0).node;
  const std::vector<Value> inputs = {mm->input(0), mm->input(1), mm->num_inputs() > 2 ? mm->input(2) : Value{}};
  Node* fused = graph.AddNode(kOpFusedMatMul, mm->name() + "_" + name, inputs, 1);
  fused->SetAttr("transpose_x1", mm->GetAttrOr<bool>("transpose_x1", false));
  fused->SetAttr("transpose_x2", mm->GetAttrOr<bool>("transpose_x2", false));
  fused->SetAttr("fused_op_type", name);
  Node* replaced = view != nullptr ? mm : act;  // the value the fused op's output stands for
  GE_RETURN_IF_ERROR(SubstituteNode(graph, replaced, fused));
  fused->output_desc(0).symbolic = replaced->output_desc(0).symbolic;  // at any size
  if (view != nullptr) {
    GE_RETURN_IF_ERROR(Bypass(graph, act, Value{view, 0}));  // the view now reads the activated product
  } else {
    GE_RETURN_IF_ERROR(graph.RemoveNode(act));
  }
  GE_RETURN_IF_ERROR(graph.RemoveNode(mm));
  return true;
}

}  // namespace

Expected<int> FoldLibraryEpilogues(Graph& graph) {
  int folded = 0;
  GE_ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  for (Node* act : order) {
    GE_ASSIGN_OR_RETURN(bool fused, FoldProductEpilogue(graph, act));
    folded += fused ? 1 : 0;
  }
  // The convolutions first: a fold removes the nodes after its convolution in its chain (norm,
  // add, activation), which a walk over the order taken before it would then read freed (ASan).
  // A fold never removes another convolution.
  GE_ASSIGN_OR_RETURN(order, graph.TopologicalOrder());
  std::vector<Node*> convs;
  for (Node* node : order)
    if (node->type() == kOpConv2D) convs.push_back(node);
  for (Node* conv : convs) {
    GE_ASSIGN_OR_RETURN(bool fused, FoldConvEpilogue(graph, conv));
    folded += fused ? 1 : 0;
  }
  return folded;
}

}  // namespace ge::autofuse
