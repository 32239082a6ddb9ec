#include "ge/autofuse/row_lanes_writer.h"

#include <fmt/format.h>

#include "ge/autofuse/cpp_scalar.h"
#include "ge/autofuse/cpp_vector.h"
#include "ge/autofuse/fixed_sizes.h"
#include "ge/autofuse/kernel_writer.h"

namespace ge::autofuse {
namespace {

class RowLanesWriter {
 public:
  RowLanesWriter(const KernelIR& k, const KernelAddressing& at) : k_(k), at_(at), n_(k.row_size()) {}

  std::string Write() {
    // (not the row count: with run-time sizes every instance shares this text)
    out_ += fmt::format("// {}: rows of {} elements, kGeW rows a step, one per lane\n", k_.name, n_);
    out_ += fmt::format("static void {}_lanes(int64_t item_begin, int64_t item_end, void* ctx) {{\n", k_.name);
    out_ += BufferPointers(k_);
    out_ += "  for (int64_t g = item_begin; g < item_end; ++g) {\n    const int64_t r0 = g * kGeW;\n";
    WriteLaneOffsets();
    for (size_t id = 0; id < k_.ops.size(); ++id) WriteOp(static_cast<int>(id));
    WriteStores();
    out_ += "  }\n}\n\n";
    return out_;
  }

 private:
  // Per lane: each input's row base (from the row's outer coordinates, as the row body's
  // bases) and the row's first element in the outputs, relative to row r0's.
  void WriteLaneOffsets() {
    out_ += "    alignas(64) int32_t out_at[kGeW];\n";
    for (size_t b = 0; b < k_.inputs.size(); ++b) out_ += fmt::format("    alignas(64) int32_t base{}_at[kGeW];\n", b);
    out_ += "    for (int l = 0; l < kGeW; ++l) {\n" + at_.OuterCoordinates("r0 + l", "      ");
    for (size_t b = 0; b < k_.inputs.size(); ++b)
      out_ += fmt::format("      base{}_at[l] = static_cast<int32_t>({});\n", b, at_.RowBase(b));
    out_ += fmt::format("      out_at[l] = static_cast<int32_t>(l * {});\n", n_);
    for (int d = 0; d < k_.inner_from; ++d) out_ += fmt::format("      (void)o{};\n", d);
    out_ += "    }\n    const GeI out_lanes = GeI::load_aligned(out_at);\n    (void)out_lanes;\n";
    // Element offsets within a row (KernelAddressing::InnerIndex) are taken from base<b> = 0; each
    // lane adds its own row's base.
    for (size_t b = 0; b < k_.inputs.size(); ++b)
      out_ += fmt::format(
          "    const GeI base{0}_lanes = GeI::load_aligned(base{0}_at);\n    (void)base{0}_lanes;\n"
          "    constexpr int64_t base{0} = 0;\n",
          b);
  }

  // Op `id`'s vector: `u<id>` for a row-level value, `u<id>_<j>` for element j of the rows.
  std::string Operand(int id, int64_t j) const {
    return k_.ops[static_cast<size_t>(id)].row ? fmt::format("u{}", id) : fmt::format("u{}_{}", id, j);
  }

  void WriteOp(int id) {
    const KOp& op = k_.ops[static_cast<size_t>(id)];
    if (op.kind == OpKind::kReduce) return WriteReduction(id);
    const char* type = VType(op.type);
    if (op.row) {
      out_ += fmt::format("    const {} u{} = {};\n", type, id, Value(op, 0));
      return;
    }
    for (int64_t j = 0; j < n_; ++j) out_ += fmt::format("    const {} u{}_{} = {};\n", type, id, j, Value(op, j));
  }

  // Over the row's elements in order, lane by lane (a row-level operand counts once per element).
  void WriteReduction(int id) {
    const KOp& op = k_.ops[static_cast<size_t>(id)];
    out_ += fmt::format("    GeV u{} = {};\n", id, Operand(op.args[0], 0));
    for (int64_t j = 1; j < n_; ++j)
      out_ += fmt::format("    u{} = {};\n", id, VCombine(op.fn, fmt::format("u{}", id), Operand(op.args[0], j)));
  }

  std::string Value(const KOp& op, int64_t j) const {
    auto a = [&](size_t n) { return Operand(op.args[n], j); };
    switch (op.kind) {
      case OpKind::kLoad: {
        const auto b = static_cast<size_t>(op.buffer);
        const DataType dtype = k_.inputs[b].desc.dtype;
        const std::string offset = at_.InnerIndex(b, std::to_string(j));
        if (dtype == DataType::kFloat) return fmt::format("GeV::gather(in{} + ({}), base{}_lanes)", b, offset, b);
        return VGather(dtype, LoadExpr(dtype, fmt::format("in{}", b), fmt::format("base{}_at[l] + ({})", b, offset)));
      }
      case OpKind::kConst:
        return VBroadcast(op.type,
                          op.type == ScalarType::kBool ? (op.value != 0 ? "true" : "false") : FloatLiteral(op.value));
      case OpKind::kUnary: return VUnary(op.fn, a(0));
      case OpKind::kBinary: return VBinary(op.fn, a(0), a(1));
      case OpKind::kSelect: return VSelect(op.type, a(0), a(1), a(2));
      case OpKind::kCast: return VCast(k_.ops[static_cast<size_t>(op.args[0])].type, op.type, a(0));
      case OpKind::kReduce:
      case OpKind::kConcat: break;  // reductions are written apart; RunsRowsInLanes excludes concats
    }
    return "?";
  }

  // Element outputs scattered to each lane's row (a row-level value into every element of its
  // row); row-level outputs stored as one vector of kGeW consecutive rows.
  void WriteStores() {
    for (const KStore& s : k_.stores) {
      const KOp& op = k_.ops[static_cast<size_t>(s.op)];
      const DataType dtype = k_.outputs[static_cast<size_t>(s.output)].desc.dtype;
      if (k_.outputs[static_cast<size_t>(s.output)].desc.NumElements() != k_.rows() * n_) {
        out_ += "    " + VStore(dtype, fmt::format("out{} + r0", s.output), Operand(s.op, 0)) + "\n";
        continue;
      }
      for (int64_t j = 0; j < n_; ++j) {
        const std::string v = Operand(s.op, j);
        if (dtype == DataType::kFloat && op.type == ScalarType::kFloat) {
          out_ += fmt::format("    {}.scatter(out{} + r0 * {} + {}, out_lanes);\n", v, s.output, n_, j);
          continue;
        }
        const bool mask = op.type == ScalarType::kBool;
        out_ += fmt::format("    ge_vput({}, [&](int l, float x) {{ out{}[(r0 + l) * {} + {}] = {}; }});\n",
                            mask ? fmt::format("xsimd::select({}, GeV(1.f), GeV(0.f))", v) : v, s.output, n_, j,
                            StoreValue(dtype, mask ? "x != 0.f" : "x"));
      }
    }
  }

  const KernelIR& k_;
  const KernelAddressing& at_;
  const int64_t n_;  // elements per row
  std::string out_;
};

}  // namespace

bool RunsRowsInLanes(const KernelIR& k, bool run_time_sizes) {
  const int64_t lanes = TargetFloatLanes();
  if (k.inner_from == 0 || k.row_size() >= lanes) return false;
  if (run_time_sizes) {
    // The row is unrolled: its extent must be every instance's. The row count varies, so the
    // decision may not depend on it: with no input larger than the iteration space (no slice
    // read in place) the entry bounds every offset by kMaxLaneOffset, and takes the row body
    // when there is no whole group.
    if (!FixedSizes(k).Axes(k.inner_from, static_cast<int>(k.shape.size()))) return false;
    for (const KBuffer& in : k.inputs)
      if (in.offset != 0 || in.desc.NumElements() > k.rows() * k.row_size()) return false;
  } else {
    if (k.rows() < lanes || k.rows() * k.row_size() > kMaxLaneOffset) return false;
    for (const KBuffer& in : k.inputs)
      if (in.desc.NumElements() > kMaxLaneOffset) return false;
  }
  for (const KOp& op : k.ops) {
    if (op.type == ScalarType::kInt64 || op.kind == OpKind::kConcat) return false;
    if (op.kind == OpKind::kLoad && !VectorStorage(k.inputs[static_cast<size_t>(op.buffer)].desc.dtype)) return false;
  }
  for (const KStore& s : k.stores)
    if (!VectorStorage(k.outputs[static_cast<size_t>(s.output)].desc.dtype)) return false;
  return true;
}

std::string WriteRowLanesBody(const KernelIR& k, const KernelAddressing& at) { return RowLanesWriter(k, at).Write(); }

}  // namespace ge::autofuse
