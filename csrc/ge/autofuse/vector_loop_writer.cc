// The vector loop style (cpp_vector.h): a row's element loop and reductions carry one xsimd
// vector of lanes per unrolled copy through every op of the chain, in registers.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ge/autofuse/cpp_scalar.h"
#include "ge/autofuse/cpp_vector.h"
#include "ge/autofuse/kernel_writer.h"

namespace ge::autofuse {
namespace {

class VectorLoopWriter final : public KernelWriter {
 public:
  VectorLoopWriter(const KernelIR& k, SizeMode mode) : KernelWriter(k, mode, /*vector=*/true) {}

 private:
  // The vector variable of element op `id` in unrolled copy `u`.
  static std::string VName(int id, size_t u) { return fmt::format("w{}_{}", id, u); }

  // The element stores of one vector step: every element output, at `index` (a row-level
  // value is stored in every lane).
  void WriteVectorStores(const std::vector<std::string>& lanes, const std::string& indent) {
    for (const KStore& s : k_.stores) {
      if (!IsElementOutput(s.output)) continue;
      const KOp& op = k_.ops[static_cast<size_t>(s.op)];
      const DataType dtype = k_.outputs[static_cast<size_t>(s.output)].desc.dtype;
      for (size_t u = 0; u < lanes.size(); ++u) {
        const std::string v = op.row ? VBroadcast(op.type, Name(s.op)) : VName(s.op, u);
        out_ += indent + VStore(dtype, fmt::format("out{} + obase + {}", s.output, lanes[u]), v) + "\n";
      }
    }
  }

  // The element loop of a vector kernel: `unroll` vectors per step, then single vectors, then
  // the scalar tail.
  void WriteElements(const std::vector<int>& body, const std::vector<int>& roots) override {
    const int unroll = Unroll(body, roots);
    out_ += "    int64_t i = lo;\n";
    for (int u : unroll > 1 ? std::vector<int>{unroll, 1} : std::vector<int>{1}) {
      out_ += fmt::format("    for (; i + {0} * kGeW <= hi; i += {0} * kGeW) {{\n", u);
      const std::vector<std::string> lanes = Lanes(u);
      EmitVectors(body, lanes, "      ");
      WriteVectorStores(lanes, "      ");
      out_ += "    }\n";
    }
    WriteScalarTail(body);
  }

  // A reduction of a vector kernel: sums in a cascade (GeSum), max/min in one accumulator per
  // unrolled vector; the lanes folded pairwise; the scalar tail.
  void WriteReduction(int id) override {
    const KOp& op = k_.ops[static_cast<size_t>(id)];
    const int operand = op.args[0];
    const bool row_operand = k_.ops[static_cast<size_t>(operand)].row;
    const std::vector<int> body = ElementClosure({operand});
    const int unroll = Unroll(body, {operand});
    const bool sum = op.fn == KFn::kSum;
    out_ += fmt::format("    float {};\n    {{\n", Name(id));
    if (sum) out_ += "      GeSum acc;\n";
    for (int u = 0; !sum && u < unroll; ++u) out_ += fmt::format("      GeV acc{} = GeV({});\n", u, ReduceInit(op.fn));
    out_ += "      int64_t i = lo;\n";
    for (int u : unroll > 1 ? std::vector<int>{unroll, 1} : std::vector<int>{1}) {
      out_ += fmt::format("      for (; i + {0} * kGeW <= hi; i += {0} * kGeW) {{\n", u);
      const std::vector<std::string> lanes = Lanes(u);
      EmitVectors(body, lanes, "        ");
      for (int l = 0; l < u; ++l) {
        const std::string acc = sum ? fmt::format("acc.a{}", l % 4) : fmt::format("acc{}", l);
        const std::string v = row_operand ? VBroadcast(ScalarType::kFloat, Name(operand)) : VName(operand, l);
        out_ += fmt::format("        {} = {};\n", acc, VCombine(op.fn, acc, v));
      }
      if (sum) out_ += "        acc.step();\n";
      out_ += "      }\n";
    }
    std::string total = sum ? "acc.total()" : "acc0";
    for (int u = 1; !sum && u < unroll; ++u) total = VCombine(op.fn, total, fmt::format("acc{}", u));
    out_ += fmt::format("      float red = {};\n", VFold(op.fn, total));
    FinishReduction(id, body);
  }

  // The element index of each unrolled vector of a step at `i`.
  static std::vector<std::string> Lanes(int unroll) {
    std::vector<std::string> lanes;
    for (int u = 0; u < unroll; ++u) lanes.push_back(u == 0 ? "i" : fmt::format("(i + {} * kGeW)", u));
    return lanes;
  }

  // How many vectors a step carries through the chain: enough independent chains to hide the
  // ops' latency (3-4 cycles each, 2 issued per cycle), few enough that the live values of all
  // of them fit the vector registers (TargetVectorRegisters).
  int Unroll(const std::vector<int>& body, const std::vector<int>& roots) const {
    // Each value dies after its last reader in `body` (roots live to the end); the peak of live
    // element values is what every copy keeps in registers at once.
    std::map<int, size_t> last_use;
    for (size_t k = 0; k < body.size(); ++k)
      for (int a : k_.ops[static_cast<size_t>(body[k])].args)
        if (!k_.ops[static_cast<size_t>(a)].row) last_use[a] = k;
    for (int r : roots) last_use[r] = body.size();
    std::vector<size_t> deaths(body.size() + 1, 0);
    for (const auto& [id, last] : last_use) ++deaths[last];
    size_t live = 0, peak = 1;
    for (size_t k = 0; k < body.size(); ++k) {
      peak = std::max(peak, ++live);  // op k's operands and its value, all at once
      live -= std::min(live, deaths[k]);
    }
    const int registers = TargetVectorRegisters();
    int unroll = registers / 2;
    while (unroll > 1 && static_cast<size_t>(unroll) * peak > static_cast<size_t>(registers)) unroll /= 2;
    return unroll;
  }

  // One step's vectors: every element op of `ops` once per unrolled copy, copy by copy within
  // each op so that the copies' independent chains interleave.
  void EmitVectors(const std::vector<int>& ops, const std::vector<std::string>& lanes, const std::string& indent) {
    // Only where a step carries enough independent vectors that the pipes, not the ops' latency,
    // set the pace: a multiply-add takes a cycle longer than an add (a 200-op chain on a Zen 4,
    // one thread: 8 vectors a step 1.46x faster, 4 the same, 1 or 2 7-8% slower).
    const std::set<int> on_multiplier = lanes.size() >= 4 ? AddsForTheMultiplier(k_, ops) : std::set<int>{};
    for (int id : ops) {
      const KOp& op = k_.ops[static_cast<size_t>(id)];
      for (size_t u = 0; u < lanes.size(); ++u) {
        const std::string value = cached_ready_.count(id) ? fmt::format("GeV::load_unaligned(c{} + {})", id, lanes[u])
                                                          : VectorExpr(op, lanes[u], u, on_multiplier.count(id) > 0);
        out_ += fmt::format("{}const {} {} = {};\n", indent, VType(op.type), VName(id, u), value);
        if (cached_.count(id) && !cached_ready_.count(id))
          out_ += fmt::format("{}{}.store_unaligned(c{} + {});\n", indent, VName(id, u), id, lanes[u]);
      }
    }
  }

  // An element op as a vector of the elements from `index` on; operands are this copy's vectors,
  // or row-level scalars broadcast. `on_multiplier`: an add or subtract written as a multiply-add.
  std::string VectorExpr(const KOp& op, const std::string& index, size_t u, bool on_multiplier) const {
    auto a = [&](size_t n) {
      const int id = op.args[n];
      const KOp& arg = k_.ops[static_cast<size_t>(id)];
      return arg.row ? VBroadcast(arg.type, Name(id)) : VName(id, u);
    };
    switch (op.kind) {
      case OpKind::kLoad: {
        const size_t b = static_cast<size_t>(op.buffer);
        const DataType dtype = k_.inputs[b].desc.dtype;
        if (at_.plan(b).access == Access::kContiguous)
          return VLoad(dtype, fmt::format("in{} + {}", b, at_.InnerIndex(b, index)));
        return VGather(dtype,
                       LoadExpr(dtype, fmt::format("in{}", b), at_.InnerIndex(b, fmt::format("({} + l)", index))));
      }
      case OpKind::kConst: return VBroadcast(op.type, Expr(op, index));
      case OpKind::kUnary: return VUnary(op.fn, a(0));
      case OpKind::kBinary:
        return on_multiplier ? VBinaryOnTheMultiplier(op.fn, a(0), a(1)) : VBinary(op.fn, a(0), a(1));
      case OpKind::kSelect: return VSelect(op.type, a(0), a(1), a(2));
      case OpKind::kCast: return VCast(k_.ops[static_cast<size_t>(op.args[0])].type, op.type, a(0));
      case OpKind::kReduce:
      case OpKind::kConcat: break;  // reductions are row-level; Vectorizable excludes element concats
    }
    return "?";
  }
};

}  // namespace

std::unique_ptr<KernelWriter> MakeVectorLoopWriter(const KernelIR& k, SizeMode mode) {
  return std::make_unique<VectorLoopWriter>(k, mode);
}

}  // namespace ge::autofuse
