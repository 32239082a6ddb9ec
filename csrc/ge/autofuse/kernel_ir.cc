#include "ge/autofuse/kernel_ir.h"

#include <fmt/format.h>

namespace ge::autofuse {

std::string_view ScalarTypeName(ScalarType type) {
  switch (type) {
    case ScalarType::kFloat: return "float";
    case ScalarType::kBool: return "bool";
    case ScalarType::kInt64: return "int64";
  }
  return "?";
}

std::optional<ScalarType> ScalarTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
    case DataType::kFloat16:
    case DataType::kBFloat16: return ScalarType::kFloat;
    case DataType::kBool: return ScalarType::kBool;
    case DataType::kInt32:
    case DataType::kInt64: return ScalarType::kInt64;
    default: return std::nullopt;
  }
}

std::vector<int64_t> IterationStrides(const KBuffer& buffer, const Shape& shape) {
  if (!buffer.strides.empty()) return buffer.strides;
  const Shape& s = buffer.desc.shape;
  const int rank = static_cast<int>(shape.size());
  const int lead = rank - static_cast<int>(s.size());
  std::vector<int64_t> strides(static_cast<size_t>(rank), 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= lead && d >= 0; --d) {
    const int64_t dim = s[static_cast<size_t>(d - lead)];
    strides[static_cast<size_t>(d)] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

std::vector<int> KernelIR::InputsStorableOver(int output) const {
  for (const KOp& op : ops)
    if (op.kind == OpKind::kReduce || op.kind == OpKind::kConcat) return {};
  const TensorDesc& out = outputs[static_cast<size_t>(output)].desc;
  if (out.shape != shape) return {};
  std::vector<int> inputs_over;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const KBuffer& in = inputs[i];
    if (in.strides.empty() && !in.concat_part && in.desc.shape == shape && in.desc.dtype == out.dtype)
      inputs_over.push_back(static_cast<int>(i));
  }
  return inputs_over;
}

bool KernelIR::RowLevel(const KOp& op) const {
  switch (op.kind) {
    case OpKind::kLoad: {
      const auto strides = IterationStrides(inputs[static_cast<size_t>(op.buffer)], shape);
      for (size_t d = static_cast<size_t>(inner_from); d < strides.size(); ++d)
        if (strides[d] != 0) return false;
      return true;
    }
    case OpKind::kReduce:
    case OpKind::kConst: return true;
    case OpKind::kConcat: return false;
    default:
      for (int a : op.args)
        if (!ops[static_cast<size_t>(a)].row) return false;
      return true;
  }
}

void KernelIR::ResetRowLevels() {
  for (KOp& op : ops) op.row = RowLevel(op);
}

int64_t KernelIR::rows() const {
  int64_t n = 1;
  for (int a = 0; a < inner_from; ++a) n *= shape[static_cast<size_t>(a)];
  return n;
}

int64_t KernelIR::row_size() const {
  int64_t n = 1;
  for (size_t a = static_cast<size_t>(inner_from); a < shape.size(); ++a) n *= shape[a];
  return n;
}

namespace {

const char* KindName(OpKind kind) {
  switch (kind) {
    case OpKind::kLoad: return "load";
    case OpKind::kConst: return "const";
    case OpKind::kUnary: return "unary";
    case OpKind::kBinary: return "binary";
    case OpKind::kSelect: return "select";
    case OpKind::kCast: return "cast";
    case OpKind::kReduce: return "reduce";
    case OpKind::kConcat: return "concat";
  }
  return "?";
}

// Every element a strided input (a permutation's or a slice's strides) is read at over
// `shape` lies in its buffer.
bool ReadsWithin(const KBuffer& in, const Shape& shape) {
  int64_t last = in.offset;
  for (size_t d = 0; d < shape.size(); ++d) last += (shape[d] - 1) * in.strides[d];
  return in.offset >= 0 && last < in.desc.NumElements();
}

}  // namespace

std::string KernelIR::ToString() const {
  std::string out = fmt::format("kernel {} shape {} inner_from {}\n", name, ShapeToString(shape), inner_from);
  for (size_t i = 0; i < inputs.size(); ++i)
    out += fmt::format("  in{}: {}{}\n", i, inputs[i].desc.ToString(),
                       inputs[i].offset != 0 ? fmt::format(" from {}", inputs[i].offset) : "");
  for (size_t i = 0; i < outputs.size(); ++i) out += fmt::format("  out{}: {}\n", i, outputs[i].desc.ToString());
  for (size_t i = 0; i < ops.size(); ++i) {
    const KOp& op = ops[i];
    out += fmt::format("  %{} = {}{} {}", i, KindName(op.kind), op.row ? "[row]" : "", ScalarTypeName(op.type));
    if (op.fn != KFn::kNone) out += fmt::format(" {}", KFnName(op.fn));
    if (op.kind == OpKind::kLoad) out += fmt::format(" in{}", op.buffer);
    if (op.kind == OpKind::kConst) out += fmt::format(" {}", op.value);
    if (op.kind == OpKind::kConcat)
      out +=
          fmt::format(" axis {} parts in{} at {}", op.axis, fmt::join(op.buffers, ",in"), fmt::join(op.offsets, ","));
    for (int a : op.args) out += fmt::format(" %{}", a);
    out += "\n";
  }
  for (const KStore& s : stores) out += fmt::format("  out{} <- %{}\n", s.output, s.op);
  return out;
}

Status KernelIR::Verify() const {
  const int rank = static_cast<int>(shape.size());
  GE_CHECK(inner_from >= 0 && inner_from <= rank, "kernel {}: inner_from {} outside rank {}", name, inner_from, rank);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].concat_part) continue;  // addressed by its kConcat
    if (!inputs[i].strides.empty()) {
      GE_CHECK(inputs[i].strides.size() == shape.size(), "kernel {}: input {} has {} strides for rank {}", name, i,
               inputs[i].strides.size(), rank);
      GE_CHECK(ReadsWithin(inputs[i], shape), "kernel {}: input {} is read past its {} elements", name, i,
               inputs[i].desc.NumElements());
      continue;
    }
    const Shape& s = inputs[i].desc.shape;
    GE_CHECK(static_cast<int>(s.size()) <= rank, "kernel {}: input {} has rank above the iteration space", name, i);
    for (size_t d = 0; d < s.size(); ++d) {
      const int64_t full = shape[shape.size() - s.size() + d];
      GE_CHECK(s[d] == full || s[d] == 1, "kernel {}: input {} shape {} does not broadcast to {}", name, i,
               ShapeToString(s), ShapeToString(shape));
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const KOp& op = ops[i];
    for (int a : op.args) {
      GE_CHECK(a >= 0 && static_cast<size_t>(a) < i, "kernel {}: op %{} reads %{}, not an earlier op", name, i, a);
      if (op.row && op.kind != OpKind::kReduce)
        GE_CHECK(ops[static_cast<size_t>(a)].row, "kernel {}: row-level op %{} reads element-level %{}", name, i, a);
    }
    switch (op.kind) {
      case OpKind::kLoad:
        GE_CHECK(op.buffer >= 0 && static_cast<size_t>(op.buffer) < inputs.size(), "kernel {}: op %{} loads no input",
                 name, i);
        break;
      case OpKind::kUnary:
        GE_CHECK(KFnInfoOf(op.fn).unary, "kernel {}: op %{}: '{}' is not a unary function", name, i, KFnName(op.fn));
        GE_CHECK(op.args.size() == 1, "kernel {}: op %{} takes one operand", name, i);
        break;
      case OpKind::kReduce:
        GE_CHECK(KFnInfoOf(op.fn).reduce, "kernel {}: op %{}: '{}' is not a reduction", name, i, KFnName(op.fn));
        GE_CHECK(op.args.size() == 1, "kernel {}: op %{} takes one operand", name, i);
        break;
      case OpKind::kCast: GE_CHECK(op.args.size() == 1, "kernel {}: op %{} takes one operand", name, i); break;
      case OpKind::kBinary:
        GE_CHECK(KFnInfoOf(op.fn).binary, "kernel {}: op %{}: '{}' is not a binary function", name, i, KFnName(op.fn));
        GE_CHECK(op.args.size() == 2, "kernel {}: op %{} takes two operands", name, i);
        break;
      case OpKind::kSelect:
        GE_CHECK(op.args.size() == 3 && ops[static_cast<size_t>(op.args[0])].type == ScalarType::kBool,
                 "kernel {}: select %{} needs a bool condition and two values", name, i);
        break;
      case OpKind::kConst: break;
      case OpKind::kConcat:
        GE_CHECK(
            !op.buffers.empty() && op.buffers.size() == op.offsets.size() && op.axis >= 0 && op.axis < rank && !op.row,
            "kernel {}: concat %{} is malformed", name, i);
        for (int b : op.buffers)
          GE_CHECK(b >= 0 && static_cast<size_t>(b) < inputs.size() && inputs[static_cast<size_t>(b)].concat_part &&
                       inputs[static_cast<size_t>(b)].desc.shape.size() == shape.size(),
                   "kernel {}: concat %{} reads input {} that is not a part of its rank", name, i, b);
        break;
    }
    if (op.kind == OpKind::kReduce) {
      GE_CHECK(op.row && inner_from < rank, "kernel {}: reduction %{} must be row-level over a non-empty row", name, i);
      GE_CHECK(op.type == ScalarType::kFloat, "kernel {}: reduction %{} must be float", name, i);
    }
  }
  for (const KStore& s : stores) {
    GE_CHECK(s.output >= 0 && static_cast<size_t>(s.output) < outputs.size() && s.op >= 0 &&
                 static_cast<size_t>(s.op) < ops.size(),
             "kernel {}: a store names no output or op", name);
    // An element-level output may take a row-level value (broadcast over the row); a row-level
    // output only a row-level one.
    const int64_t n = outputs[static_cast<size_t>(s.output)].desc.NumElements();
    const bool row_value = ops[static_cast<size_t>(s.op)].row;
    GE_CHECK(n == rows() * row_size() || (row_value && n == rows()),
             "kernel {}: output {} has {} elements; a {} store gives {}", name, s.output, n,
             row_value ? "row-level" : "element-level", row_value ? rows() : rows() * row_size());
  }
  return {};
}

}  // namespace ge::autofuse
