// An op prototype ("metadef"): the single description of an Ascend IR operator from which
// verification, shape inference, the builders and the dumps are driven.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ge/ir/graph.h"

namespace ge {

enum class InputKind { kRequired, kOptional, kDynamic };

// A type variable ("T"): every input/output naming it has the same dtype, drawn from `allowed`
// (empty: any). With `per_value`, only the allowed set is checked and values may differ.
struct TypeVar {
  std::string name;
  std::vector<DataType> allowed;
  bool per_value = false;
};

struct InputDef {
  std::string name;
  InputKind kind;
  std::string type_var;
};

struct OutputDef {
  std::string name;
  std::string type_var;
  bool dynamic = false;  // a dynamic output is the op's only output and expands to any count
};

struct AttrDef {
  std::string name;
  AttrType type;
  std::optional<AttrValue> default_value;  // none: the attr is required
};

class InferContext;
using InferShapeFn = std::function<Status(InferContext&)>;
class SymbolicInferContext;  // ops/symbolic_infer.h
using InferSymbolicFn = std::function<void(SymbolicInferContext&)>;

struct OpProto {
  std::string type;
  std::vector<TypeVar> type_vars;
  std::vector<InputDef> inputs;
  std::vector<OutputDef> outputs;
  std::vector<AttrDef> attrs;
  InferShapeFn infer_shape;  // sets output shapes (and dtypes not fixed by a type var)
  // Names the output shapes InferShape set as size expressions (TensorDesc::symbolic); none:
  // the outputs are known symbolically only when the inputs are fixed (ops/symbolic_infer.h).
  InferSymbolicFn infer_symbolic;
  std::string doc;
  // In-place ops: {output, input} pairs whose output is the input's memory, updated by the kernel.
  std::vector<std::pair<int, int>> inplace;
  // Set on prototypes derived from a framework operator's schema (custom ops, framework_ops.h):
  // that operator ("ns::name" or "ns::name.overload"), which devices run through the framework.
  std::string framework_op;
  // The framework operator's mutated arguments: {output, input}, the output being the updated
  // value (also in `inplace` when that is the input's own memory, else an updated copy).
  std::vector<std::pair<int, int>> mutated_arguments;
  // A collective (HcomAllReduce, ...): every rank of its group must run it, in the same order as
  // the others, so it is never removed, merged, folded or fused, and collectives keep their
  // program order (OrderCollectives).
  bool communicates = false;
  // A collective whose kernel works in its input's memory (HcomAllReduce, HcomBroadcast): the
  // copy-insertion pass gives it an input nothing else reads, and the memory planner then
  // places its output over that input (no copy in the kernel).
  bool communicates_in_input = false;

  // The prototype input whose memory output `index` updates, or -1.
  int InplaceInputOf(int output) const {
    for (const auto& [out, in] : inplace)
      if (out == output) return in;
    return -1;
  }

  const TypeVar* FindTypeVar(const std::string& name) const;
  const AttrDef* FindAttr(const std::string& name) const;
  int DynamicInputIndex() const;  // position of the dynamic input in `inputs`, or -1
  bool HasDynamicOutput() const { return outputs.size() == 1 && outputs[0].dynamic; }
  // The declaration of node output `index` (the dynamic output covers them all).
  const OutputDef& OutputDefFor(int index) const {
    return outputs[HasDynamicOutput() ? 0 : static_cast<size_t>(index)];
  }
  // Flat node-input range [begin, end) of declared input `def_index` for a node with
  // `num_node_inputs` inputs (a dynamic input expands to however many are left).
  std::pair<int, int> InputRange(int def_index, int num_node_inputs) const;
};

// Fluent registration: OpDef("Add").TypeVar("T", kNumeric).Input("x1", "T")...
class OpDef {
 public:
  explicit OpDef(std::string type) { proto_.type = std::move(type); }
  OpDef& TypeVar(std::string name, std::vector<DataType> allowed, bool per_value = false);
  OpDef& Input(std::string name, std::string type_var) {
    return AddInput(std::move(name), InputKind::kRequired, std::move(type_var));
  }
  OpDef& OptionalInput(std::string name, std::string type_var) {
    return AddInput(std::move(name), InputKind::kOptional, std::move(type_var));
  }
  OpDef& DynamicInput(std::string name, std::string type_var) {
    return AddInput(std::move(name), InputKind::kDynamic, std::move(type_var));
  }
  OpDef& Output(std::string name, std::string type_var);
  OpDef& DynamicOutput(std::string name, std::string type_var);
  OpDef& Attr(std::string name, AttrType type, std::optional<AttrValue> default_value = std::nullopt);
  OpDef& Infer(InferShapeFn fn);
  OpDef& InferSymbolic(InferSymbolicFn fn);
  // Output `output` is input `input`'s memory, updated in place.
  OpDef& Inplace(int output, int input);
  // A collective: see OpProto::communicates (and communicates_in_input when `in_input_memory`).
  OpDef& Communicates(bool in_input_memory = false);
  OpDef& Doc(std::string doc);
  // Hands the prototype over; the OpDef is spent afterwards.
  OpProto Build() { return std::move(proto_); }

 private:
  OpDef& AddInput(std::string name, InputKind kind, std::string type_var);
  OpProto proto_;
};

// Common dtype sets.
namespace dtypes {
extern const std::vector<DataType> kFloat;    // f16, bf16, f32, f64
extern const std::vector<DataType> kInt;      // int8..int64, uint8
extern const std::vector<DataType> kIndex;    // int32, int64
extern const std::vector<DataType> kNumeric;  // kFloat + kInt
extern const std::vector<DataType> kAll;      // kNumeric + bool
}  // namespace dtypes

// What an InferShape function sees of its node. Input indices are positions in the
// prototype's input list (not flat node inputs) except for the dynamic-input accessors.
class InferContext {
 public:
  InferContext(Node& node, const OpProto& proto) : node_(node), proto_(proto) {}

  bool HasInput(int def_index) const;
  const TensorDesc& Input(int def_index) const;
  int NumDynamic() const;                  // count of the dynamic input's values
  const TensorDesc& Dynamic(int k) const;  // k-th value of the dynamic input
  // The Const value feeding input `def_index`, or nullptr when it is not a constant.
  const Tensor* ConstInput(int def_index) const;
  TensorDesc& Output(int i) { return node_.output_desc(i); }
  template <typename T>
  T Attr(const std::string& name) const {
    return node_.GetAttrOr<T>(name, T{});
  }
  const Node& node() const { return node_; }

  template <typename... Args>
  Status Error(fmt::format_string<Args...> f, Args&&... args) const {
    return InvalidArgument("{}: {}", node_.ToString(), fmt::format(f, std::forward<Args>(args)...));
  }

 protected:
  Value FlatInput(int def_index) const;

 private:
  Node& node_;
  const OpProto& proto_;
};

}  // namespace ge
