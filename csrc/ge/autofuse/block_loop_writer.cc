// The block loop style: a row's element loop and reductions run over blocks of B elements op by
// op, each op one short loop over a B-wide stack array that the compiler vectorizes (no vector
// library needed). Kernels the vector style cannot write (element-level int64 values or concats)
// and KernelStyle::kBlocks use it.
#include <fmt/format.h>

#include <map>
#include <utility>

#include "ge/autofuse/cpp_scalar.h"
#include "ge/autofuse/kernel_writer.h"

namespace ge::autofuse {
namespace {

class BlockLoopWriter final : public KernelWriter {
 public:
  BlockLoopWriter(const KernelIR& k, SizeMode mode) : KernelWriter(k, mode, /*vector=*/false) {}

 private:
  // A concat along the row's own axis: each part is one contiguous run of the row.
  bool RowConcat(const KOp& op) const { return !chunked_ && op.axis == rank_ - 1 && k_.inner_from == rank_ - 1; }

  // Fills a block's slot from the parts that overlap it: plain contiguous copies per part.
  std::string RowConcatFill(const KOp& op, const std::string& slot, int b, const std::string& indent) const {
    std::string out;
    for (size_t k = 0; k < op.buffers.size(); ++k) {
      const int part = op.buffers[k];
      const Shape& s = k_.inputs[static_cast<size_t>(part)].desc.shape;
      const std::string start = at_.PartStart(op, k), end = at_.PartEnd(op, k);
      std::string base = "0";
      for (int d = rank_ - 2; d >= 0; --d)
        if (s[static_cast<size_t>(d)] != 1) base += fmt::format(" + o{} * {}", d, at_.PartStride(part, d));
      out += fmt::format(
          "{0}for (int64_t q = i < {1} ? {1} : i, q_end = i + {2} < {3} ? i + {2} : {3}; q < q_end; ++q) {4}[q - i] = {5};\n",
          indent, start, b, end, slot,
          LoadExpr(k_.inputs[static_cast<size_t>(part)].desc.dtype, fmt::format("in{}", part),
                   fmt::format("{} + (q - {})", base, start)));
    }
    return out;
  }

  // Element loops run over blocks of B elements op by op: every op is one short loop over a
  // B-wide slot array, so the compiler vectorizes each and the B/16 vectors of an op are
  // independent (a long chain of ops is not latency-bound). Slots are reused once their value
  // is dead. A scalar loop handles the tail.
  // Block loops, largest first. With run-time sizes the text must not depend on the sizes: rows
  // run 256-element blocks and then 64-element ones, so that rows as short as an attention
  // head still run vector blocks; chunks of a whole tensor run 256.
  std::vector<int> BlockSizes() const {
    if (!run_time_sizes_) return {BlockSize()};
    if (chunked_) return {256};
    return {256, 64};
  }

  int BlockSize() const {
    const int64_t span = chunked_ ? kChunk : k_.row_size();
    int b = 256;
    while (b > 16 && b > span) b /= 2;
    return b;
  }

  // Emits the ops of one block at offset `i` and returns each element op's slot name.
  std::map<int, std::string> EmitBlock(const std::vector<int>& ops, const std::vector<int>& keep_alive, int b,
                                       const std::string& indent) {
    std::map<int, int> last_use;
    for (size_t k = 0; k < ops.size(); ++k)
      for (int a : k_.ops[static_cast<size_t>(ops[k])].args) last_use[a] = static_cast<int>(k);
    for (int id : keep_alive) last_use[id] = static_cast<int>(ops.size());
    std::map<int, std::string> slot_of;
    std::map<int, std::string> inline_expr;                      // loads, constants, row-cache reads: read where used
    std::map<std::string, std::vector<std::string>> free_slots;  // by C type
    std::vector<std::pair<int, std::string>> live;               // (op, slot)
    std::string decls, body;
    int next = 0;
    auto name = [&](int id) {
      if (auto e = inline_expr.find(id); e != inline_expr.end()) return e->second;
      auto it = slot_of.find(id);
      return it == slot_of.end() ? Name(id) : it->second + "[j]";
    };
    for (size_t k = 0; k < ops.size(); ++k) {
      const int id = ops[k];
      const KOp& op = k_.ops[static_cast<size_t>(id)];
      const std::string type = CType(op.type);
      // A value that is only a read gets no slot and no loop of its own: its readers load it
      // (a copy loop per block would cost a store per element and a pass over the block).
      const bool cached_read = cached_ready_.count(id) != 0;
      if (cached_read || op.kind == OpKind::kLoad || op.kind == OpKind::kConst) {
        const std::string expr = cached_read ? fmt::format("c{}[i + j]", id) : Expr(op, "(i + j)", name);
        inline_expr[id] = "(" + expr + ")";
        if (cached_.count(id) && !cached_read)
          body += fmt::format("{}for (int j = 0; j < {}; ++j) c{}[i + j] = {};\n", indent, b, id, expr);
        continue;
      }
      // Free the slots of values whose last reader came before this op.
      for (auto it = live.begin(); it != live.end();) {
        if (last_use[it->first] < static_cast<int>(k)) {
          free_slots[CType(k_.ops[static_cast<size_t>(it->first)].type)].push_back(it->second);
          it = live.erase(it);
        } else {
          ++it;
        }
      }
      std::string slot;
      if (!free_slots[type].empty()) {
        slot = free_slots[type].back();
        free_slots[type].pop_back();
      } else {
        slot = fmt::format("s{}", next++);
        decls += fmt::format("{}{} {}[{}];\n", indent, type, slot, b);
      }
      slot_of[id] = slot;
      live.emplace_back(id, slot);
      // (values already in a row cache were inlined above; what is cached here is stored to it)
      const std::string to_cache = cached_.count(id) ? fmt::format(" c{}[i + j] = {}[j];", id, slot) : "";
      if (op.kind == OpKind::kConcat && RowConcat(op)) {
        body += RowConcatFill(op, slot, b, indent);
        if (!to_cache.empty()) body += fmt::format("{}for (int j = 0; j < {}; ++j){}\n", indent, b, to_cache);
      } else {
        body += fmt::format("{}for (int j = 0; j < {}; ++j) {{ {}[j] = {};{} }}\n", indent, b, slot,
                            Expr(op, "(i + j)", name), to_cache);
      }
    }
    out_ += decls + body;
    std::map<int, std::string> result = inline_expr;
    for (const auto& [id, slot] : slot_of) result[id] = slot + "[j]";
    return result;
  }

  // The 16 lanes folded pairwise in one expression: four dependent steps instead of fifteen,
  // which on rows of a few hundred elements (attention scores) is a tenth of the row's time.
  std::string FoldLanes(KFn fn, const std::string& acc) const {
    std::vector<std::string> level;
    for (int l = 0; l < 16; ++l) level.push_back(fmt::format("{}[{}]", acc, l));
    while (level.size() > 1) {
      std::vector<std::string> next;
      for (size_t l = 0; l + 1 < level.size(); l += 2) next.push_back(Combine(fn, level[l], level[l + 1]));
      level = std::move(next);
    }
    return level[0];
  }

  // A reduction over the row: blocks op by op, then 16 independent lanes per block (the
  // compiler vectorizes without reassociating: no fast-math), the lanes folded, the tail.
  void WriteReduction(int id) override {
    const KOp& op = k_.ops[static_cast<size_t>(id)];
    const int operand = op.args[0];
    const bool row_operand = k_.ops[static_cast<size_t>(operand)].row;
    const std::vector<int> body = ElementClosure({operand});
    const std::string acc = fmt::format("acc{}", id);
    out_ += fmt::format("    float {};\n", Name(id));
    const bool sum = op.fn == KFn::kSum;
    out_ += fmt::format("    {{\n      float {}[16];\n      for (int l = 0; l < 16; ++l) {}[l] = {};\n", acc, acc,
                        ReduceInit(op.fn));
    if (sum) out_ += "      GeBlockSum cascade;\n";
    out_ += "      int64_t i = lo;\n";
    for (const int b : BlockSizes()) {
      out_ += fmt::format("      for (; i + {0} <= hi; i += {0}) {{\n", b);
      auto slots = EmitBlock(body, {operand}, b, "        ");
      const std::string value = row_operand ? Name(operand) : slots.at(operand);
      out_ += fmt::format(
          "        for (int jj = 0; jj < {}; jj += 16)\n          for (int l = 0; l < 16; ++l) {{\n"
          "            const int j = jj + l;\n            {}[l] = {};\n          }}\n",
          b, acc, Combine(op.fn, acc + "[l]", value));
      if (sum) out_ += fmt::format("        cascade.add({});\n", acc);
      out_ += "      }\n";
    }
    if (sum) out_ += fmt::format("      cascade.total({});\n", acc);
    out_ += fmt::format("      float red = {};\n", FoldLanes(op.fn, acc));
    FinishReduction(id, body);
  }

  // Element loops run op by op over blocks (see BlockSizes), then the scalar tail.
  void WriteElements(const std::vector<int>& body, const std::vector<int>& roots) override {
    out_ += "    int64_t i = lo;\n";
    for (const int b : BlockSizes()) {
      out_ += fmt::format("    for (; i + {0} <= hi; i += {0}) {{\n", b);
      auto slots = EmitBlock(body, roots, b, "      ");
      for (const KStore& s : k_.stores) {
        if (!IsElementOutput(s.output)) continue;
        const bool row = k_.ops[static_cast<size_t>(s.op)].row;
        out_ += fmt::format(
            "      for (int j = 0; j < {}; ++j) out{}[obase + i + j] = {};\n", b, s.output,
            StoreValue(k_.outputs[static_cast<size_t>(s.output)].desc.dtype, row ? Name(s.op) : slots.at(s.op)));
      }
      out_ += "    }\n";
    }
    WriteScalarTail(body);
  }
};

}  // namespace

std::unique_ptr<KernelWriter> MakeBlockLoopWriter(const KernelIR& k, SizeMode mode) {
  return std::make_unique<BlockLoopWriter>(k, mode);
}

}  // namespace ge::autofuse
