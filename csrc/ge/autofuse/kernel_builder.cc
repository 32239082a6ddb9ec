#include "ge/autofuse/kernel_builder.h"

#include <cstring>
#include <optional>

#include "ge/ops/rewrite_utils.h"

namespace ge::autofuse {
namespace {

KOp NewOp(OpKind kind, ScalarType type) {
  KOp op;
  op.kind = kind;
  op.type = type;
  return op;
}

KBuffer BufferOf(const TensorDesc& desc, std::vector<int64_t> strides = {}) {
  KBuffer buffer;
  buffer.desc = desc;
  buffer.strides = std::move(strides);
  return buffer;
}

}  // namespace

KernelBuilder::KernelBuilder(std::string name, Shape shape, int inner_from) {
  ir_.name = std::move(name);
  ir_.shape = std::move(shape);
  ir_.inner_from = inner_from;
}

int KernelBuilder::Add(KOp op) {
  op.row = ir_.RowLevel(op);
  const bool pure_value = op.kind != OpKind::kLoad && op.kind != OpKind::kConcat;
  std::optional<OpKey> key;
  if (pure_value) {
    uint64_t value_bits = 0;
    std::memcpy(&value_bits, &op.value, sizeof(value_bits));  // -0 and +0 stay apart
    key = OpKey{op.kind, op.type, op.fn, op.args, value_bits};
    if (auto it = built_.find(*key); it != built_.end()) return it->second;
  }
  ir_.ops.push_back(std::move(op));
  const int id = static_cast<int>(ir_.ops.size()) - 1;
  if (key) built_.emplace(std::move(*key), id);
  return id;
}

int KernelBuilder::AddLoad(Value v, KBuffer buffer, ScalarType type) {
  KOp load = NewOp(OpKind::kLoad, type);
  load.buffer = static_cast<int>(ir_.inputs.size());
  ir_.inputs.push_back(std::move(buffer));
  external_.push_back(v);
  return Add(std::move(load));
}

Expected<int> KernelBuilder::External(Value v) {
  const auto key = std::make_pair(static_cast<const Node*>(v.node), v.index);
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  const TensorDesc& desc = v.node->output_desc(v.index);
  auto type = ScalarTypeOf(desc.dtype);
  if (!type)
    return InvalidArgument("{} output {}: dtype {} cannot be loaded by a fused kernel", v.node->ToString(), v.index,
                           DataTypeName(desc.dtype));
  int id;
  // A one-element float constant is an immediate, which lowerings can read (x ** 3 is a
  // product, not a pow); float16 and bfloat16 widen exactly, as a load would.
  if (const std::optional<double> value = ConstFloatScalar(v)) {
    id = Const(*value, *type);
  } else {
    id = AddLoad(v, BufferOf(desc), *type);
  }
  loaded_[key] = id;
  return id;
}

Expected<int> KernelBuilder::ExternalPermuted(Value v, const std::vector<int64_t>& perm) {
  // The permuted value may have a lower rank than the iteration space and broadcast into it
  // (right-aligned); its axis d is axis perm[d] of `v`.
  const TensorDesc& desc = v.node->output_desc(v.index);
  auto type = ScalarTypeOf(desc.dtype);
  const size_t rank = ir_.shape.size(), r = perm.size();
  if (!type || desc.shape.size() != r || r > rank)
    return InvalidArgument("{}: cannot read it permuted by a rank-{} permutation", v.node->ToString(), r);
  std::vector<int64_t> contiguous(r, 1);
  for (size_t d = r; d-- > 1;) contiguous[d - 1] = contiguous[d] * desc.shape[d];
  KBuffer buffer = BufferOf(desc, std::vector<int64_t>(rank, 0));
  for (size_t d = 0; d < r; ++d) {
    const int64_t axis = perm[d] < 0 ? perm[d] + static_cast<int64_t>(r) : perm[d];
    if (axis < 0 || axis >= static_cast<int64_t>(r)) return InvalidArgument("{}: bad permutation", v.node->ToString());
    const int64_t dim = desc.shape[static_cast<size_t>(axis)];
    const size_t at = rank - r + d;
    if (dim != 1 && dim != ir_.shape[at])
      return InvalidArgument("{}: permuted shape does not broadcast to {}", v.node->ToString(),
                             ShapeToString(ir_.shape));
    buffer.strides[at] = dim == 1 ? 0 : contiguous[static_cast<size_t>(axis)];
  }
  return AddLoad(v, std::move(buffer), *type);
}

Expected<int> KernelBuilder::ExternalSliced(Value v, const std::vector<AxisRange>& ranges, int64_t dropped) {
  const TensorDesc& desc = v.node->output_desc(v.index);
  auto type = ScalarTypeOf(desc.dtype);
  const size_t rank = ir_.shape.size(), r = ranges.size(), out_rank = r - (dropped >= 0 ? 1 : 0);
  if (!type || desc.shape.size() != r || out_rank > rank)
    return InvalidArgument("{}: cannot read a rank-{} slice of it", v.node->ToString(), out_rank);
  KBuffer buffer = BufferOf(desc, std::vector<int64_t>(rank, 0));
  int64_t dense = 1;
  size_t out_axis = out_rank;
  for (size_t d = r; d-- > 0;) {
    const AxisRange& range = ranges[d];
    buffer.offset += range.begin * dense;
    if (static_cast<int64_t>(d) != dropped) {
      const size_t at = rank - out_rank + --out_axis;
      if (range.length != 1 && range.length != ir_.shape[at])
        return InvalidArgument("{}: its slice does not broadcast to {}", v.node->ToString(), ShapeToString(ir_.shape));
      buffer.strides[at] = range.length == 1 ? 0 : dense * range.step;
    }
    dense *= desc.shape[d];
  }
  return AddLoad(v, std::move(buffer), *type);
}

Expected<int> KernelBuilder::ExternalConcat(const std::vector<Value>& parts, int64_t axis) {
  const auto rank = static_cast<int64_t>(ir_.shape.size());
  if (axis < 0) axis += rank;
  if (parts.empty() || axis < 0 || axis >= rank)
    return InvalidArgument("a concat needs parts and an axis below rank {}", rank);
  KOp op = NewOp(OpKind::kConcat, ScalarType::kFloat);
  op.axis = static_cast<int>(axis);
  int64_t offset = 0;
  for (const Value& v : parts) {
    const TensorDesc& desc = v.node->output_desc(v.index);
    auto type = ScalarTypeOf(desc.dtype);
    if (!type || desc.shape.size() != static_cast<size_t>(rank))
      return InvalidArgument("{}: cannot be a part of a rank-{} concat", v.node->ToString(), rank);
    op.type = *type;
    op.buffers.push_back(static_cast<int>(ir_.inputs.size()));
    op.offsets.push_back(offset);
    offset += desc.shape[static_cast<size_t>(axis)];
    KBuffer part = BufferOf(desc);
    part.concat_part = true;
    ir_.inputs.push_back(std::move(part));
    external_.push_back(v);
  }
  return Add(std::move(op));
}

int KernelBuilder::Const(double value, ScalarType type) {
  KOp op = NewOp(OpKind::kConst, type);
  op.value = value;
  return Add(std::move(op));
}

int KernelBuilder::Unary(KFn fn, int a) {
  KOp op = NewOp(OpKind::kUnary, KFnInfoOf(fn).predicate ? ScalarType::kBool : ir_.ops[static_cast<size_t>(a)].type);
  op.fn = fn;
  op.args = {a};
  return Add(std::move(op));
}

int KernelBuilder::Binary(KFn fn, int a, int b) {
  KOp op = NewOp(OpKind::kBinary, KFnInfoOf(fn).predicate ? ScalarType::kBool : ir_.ops[static_cast<size_t>(a)].type);
  op.fn = fn;
  op.args = {a, b};
  return Add(std::move(op));
}

int KernelBuilder::Select(int cond, int a, int b) {
  KOp op = NewOp(OpKind::kSelect, ir_.ops[static_cast<size_t>(a)].type);
  op.args = {cond, a, b};
  return Add(std::move(op));
}

int KernelBuilder::Cast(int a, ScalarType type) {
  if (ir_.ops[static_cast<size_t>(a)].type == type) return a;
  KOp op = NewOp(OpKind::kCast, type);
  op.args = {a};
  return Add(std::move(op));
}

int KernelBuilder::Reduce(KFn fn, int a) {
  KOp op = NewOp(OpKind::kReduce, ScalarType::kFloat);
  op.fn = fn;
  op.args = {a};
  return Add(std::move(op));
}

int KernelBuilder::Store(int op, const TensorDesc& desc) {
  ir_.outputs.push_back(BufferOf(desc));
  const int output = static_cast<int>(ir_.outputs.size()) - 1;
  ir_.stores.push_back({output, op});
  return output;
}

}  // namespace ge::autofuse
