#include "ge/autofuse/cpp_codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ge/autofuse/cpp_scalar.h"
#include "ge/autofuse/cpp_vector.h"
#include "ge/autofuse/kernel_addressing.h"
#include "ge/runtime/fused_kernel_abi.h"

namespace ge::autofuse {
namespace {

// Elements per work item when a kernel's single row is cut into chunks (a multiple of every
// unrolled vector step).
constexpr int64_t kChunk = 1024;
// The cost model's price of a task: work (VCost units x elements) below which waking another
// pool thread costs more than it saves (~5 us: a VCost unit is roughly 1/16 of a cycle per
// element in vector code, and waking a thread and joining it costs a few thousand cycles).
constexpr int64_t kMinTaskWork = int64_t{1} << 18;

class KernelWriter {
 public:
  KernelWriter(const KernelIR& k, SizeMode mode, KernelStyle style)
      : k_(k),
        rank_(static_cast<int>(k.shape.size())),
        run_time_sizes_(mode == SizeMode::kRunTime),
        chunked_(Chunked(k)),
        at_(k, run_time_sizes_, chunked_),
        vector_(style == KernelStyle::kVector && Vectorizable(k)) {}

  // The kernel's text; sizes() then holds the values its run-time sizes read, in order. With
  // run-time sizes a kernel whose loops would share values gets a second body that keeps them
  // in row caches of kCachedRow elements, which the entry picks when a row fits.
  std::string Write() {
    const std::string row = at_.RowSize();
    const bool cached_body = run_time_sizes_ && !chunked_ && LoopRoots().size() >= 2;
    WriteBody("", !run_time_sizes_, row);
    if (cached_body) WriteBody("_cached", true, row);
    WriteEntry(row, cached_body);
    return out_;
  }

  const std::vector<int64_t>& sizes() const { return at_.sizes(); }
  const std::vector<std::optional<SymExpr>>& size_exprs() const { return at_.size_exprs(); }

 private:
  // Row caches hold up to this many elements when the row length is known only at run time.
  static constexpr int64_t kCachedRow = 4096;

  // Without reductions a single row (all axes inner) is cut into chunks so that it runs in parallel.
  static bool Chunked(const KernelIR& k) {
    bool reduces = false;
    for (const KOp& op : k.ops) reduces = reduces || op.kind == OpKind::kReduce;
    return k.inner_from == 0 && !reduces;
  }

  // The roots of each loop over a row: one per reduction, then the element loop's stores.
  std::vector<std::vector<int>> LoopRoots() const {
    std::vector<std::vector<int>> loop_roots;
    for (const KOp& op : k_.ops)
      if (op.kind == OpKind::kReduce) loop_roots.push_back({op.args[0]});
    std::vector<int> element_roots;
    for (const KStore& st : k_.stores)
      if (IsElementOutput(st.output)) element_roots.push_back(st.op);
    if (!element_roots.empty()) loop_roots.push_back(element_roots);
    return loop_roots;
  }

  void WriteBody(const std::string& suffix, bool caches, const std::string& row) {
    emitted_row_.clear();
    cached_.clear();
    cached_ready_.clear();
    out_ += fmt::format("// {}\nstatic void {}_body{}(int64_t item_begin, int64_t item_end, void* ctx) {{\n", Summary(),
                        k_.name, suffix);
    out_ += "  const GeKernelCall* call = static_cast<const GeKernelCall*>(ctx);\n";
    out_ += "  void* const* bufs = call->buffers;\n  const int64_t* __restrict S = call->sizes;\n  (void)S;\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      out_ += fmt::format("  const {0}* __restrict in{1} = static_cast<const {0}*>(bufs[{1}]);\n",
                          StorageCType(k_.inputs[i].desc.dtype), i);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      out_ += fmt::format("  {0}* __restrict out{1} = static_cast<{0}*>(bufs[{2}]);\n",
                          StorageCType(k_.outputs[o].desc.dtype), o, k_.inputs.size() + o);
    out_ += "  for (int64_t r = item_begin; r < item_end; ++r) {\n";
    if (chunked_) {
      out_ += fmt::format("    const int64_t lo = r * {0}, hi = lo + {0} < {1} ? lo + {0} : {1};\n", kChunk, row);
      out_ += "    const int64_t obase = 0;\n";
    } else {
      out_ += fmt::format("    const int64_t lo = 0, hi = {};\n    const int64_t obase = r * {};\n", row, row);
    }
    WriteBases();
    if (caches) PlanCaches(LoopRoots());
    for (size_t i = 0; i < k_.ops.size(); ++i)
      if (k_.ops[i].kind == OpKind::kReduce) WriteReduction(static_cast<int>(i));
    WriteElementLoop();
    for (const KStore& s : k_.stores) {
      const KOp& op = k_.ops[static_cast<size_t>(s.op)];
      if (!op.row || IsElementOutput(s.output)) continue;
      EmitRow(s.op);
      out_ += fmt::format("    out{}[r] = {};\n", s.output,
                          StoreValue(k_.outputs[static_cast<size_t>(s.output)].desc.dtype, Name(s.op)));
    }
    out_ += "  }\n}\n\n";
  }

  // The exported function: how many work items, how many per thread, then the body over them.
  void WriteEntry(const std::string& row, bool cached_body) {
    out_ += fmt::format(
        "extern \"C\" __attribute__((visibility(\"default\"))) void {0}(void* const* buffers, const int64_t* sizes, "
        "const GeKernelRuntime* runtime) {{\n  const int64_t* S = sizes;\n  (void)S;\n",
        k_.name);
    // Items per task from the cost model: enough that a task's work pays for waking its thread.
    const int64_t cost = ElementCost();
    if (chunked_) {
      out_ += fmt::format("  const int64_t items = ({} + {}) / {}, grain = {};\n", row, kChunk - 1, kChunk,
                          std::max<int64_t>(1, kMinTaskWork / (kChunk * cost)));
    } else {
      out_ += fmt::format("  const int64_t row = {}, items = {};\n", row, at_.RowCount());
      out_ += fmt::format("  const int64_t work = (row < 1 ? 1 : row) * {};\n", cost);
      out_ += fmt::format("  const int64_t grain = work >= {0} ? 1 : ({0} + work - 1) / work;\n", kMinTaskWork);
    }
    out_ += "  const GeKernelCall call{buffers, sizes};\n";
    const std::string body =
        cached_body ? fmt::format("({} <= {} ? &{}_body_cached : &{}_body)", row, kCachedRow, k_.name, k_.name)
                    : fmt::format("&{}_body", k_.name);
    out_ += fmt::format("  runtime->parallel_for(items, grain, {}, const_cast<GeKernelCall*>(&call));\n}}\n\n", body);
  }

  // The work of one element of a row: every element-level op's VCost, and one for the stores.
  int64_t ElementCost() const {
    int64_t cost = static_cast<int64_t>(k_.stores.size());
    for (const KOp& op : k_.ops)
      if (!op.row) cost += VCost(op);
    return std::max<int64_t>(cost, 1) * (vector_ ? 1 : 2);  // block loops store and reload every op
  }

  std::string Summary() const {
    if (run_time_sizes_)  // the text must not depend on the sizes: instances share it
      return fmt::format("{}: rank {}, inner from axis {}, {} ops, sizes at run time", k_.name, rank_, k_.inner_from,
                         k_.ops.size());
    return fmt::format("{}: shape {}, {} rows x {}, {} ops", k_.name, ShapeToString(k_.shape), k_.rows(), k_.row_size(),
                       k_.ops.size());
  }

  bool IsElementOutput(int output) const {
    return k_.outputs[static_cast<size_t>(output)].desc.NumElements() == k_.rows() * k_.row_size();
  }

  // Each input's offset for this row from the outer coordinates (literal strides).
  void WriteBases() {
    if (chunked_) {
      for (size_t i = 0; i < at_.num_inputs(); ++i) out_ += fmt::format("    const int64_t base{} = 0;\n", i);
      return;
    }
    out_ += "    int64_t rest = r;\n";
    for (int d = k_.inner_from - 1; d >= 0; --d) {
      if (d == 0)
        out_ += fmt::format("    const int64_t o{} = rest;\n", d);
      else
        out_ += fmt::format("    const int64_t o{0} = rest % {1}; rest /= {1};\n", d, at_.Dim(d));
    }
    out_ += "    (void)rest;\n";
    for (size_t i = 0; i < at_.num_inputs(); ++i) {
      std::string expr = "0";
      for (int d = 0; d < k_.inner_from; ++d)
        if (at_.plan(i).strides[static_cast<size_t>(d)] != 0) expr += fmt::format(" + o{} * {}", d, at_.Stride(i, d));
      out_ += fmt::format("    const int64_t base{} = {};\n", i, expr);
    }
  }

  static std::string Name(int op) { return fmt::format("v{}", op); }

  std::string Expr(const KOp& op, const std::string& index) const {
    return Expr(op, index, [](int id) { return Name(id); });
  }

  // `name(id)` spells an operand: a scalar `v<id>`, or an element of a block's slot array.
  template <typename Namer>
  std::string Expr(const KOp& op, const std::string& index, const Namer& name) const {
    auto a = [&](size_t n) { return name(op.args[n]); };
    switch (op.kind) {
      case OpKind::kLoad: {
        const size_t b = static_cast<size_t>(op.buffer);
        return LoadExpr(k_.inputs[b].desc.dtype, fmt::format("in{}", b), at_.InnerIndex(b, index));
      }
      case OpKind::kConst:
        if (op.type == ScalarType::kBool) return op.value != 0 ? "true" : "false";
        if (op.type == ScalarType::kInt64) return fmt::format("int64_t{{{}}}", static_cast<int64_t>(op.value));
        return FloatLiteral(op.value);
      case OpKind::kUnary: return UnaryExpr(op.fn, a(0));
      case OpKind::kBinary: return BinaryExpr(op.fn, a(0), a(1));
      case OpKind::kSelect: return fmt::format("({} ? {} : {})", a(0), a(1), a(2));
      case OpKind::kCast: {
        const ScalarType from = k_.ops[static_cast<size_t>(op.args[0])].type;
        if (from == ScalarType::kBool && op.type == ScalarType::kFloat) return fmt::format("({} ? 1.f : 0.f)", a(0));
        return fmt::format("static_cast<{}>({})", CType(op.type), a(0));
      }
      case OpKind::kReduce: break;
      case OpKind::kConcat: return ConcatExpr(op, index);
    }
    return "?";
  }

  // A concat element: the part whose range along the axis holds the coordinate, read at the
  // coordinate shifted into that part (a chain of selects; only the chosen part is read).
  std::string ConcatExpr(const KOp& op, const std::string& index) const {
    const std::string at = at_.Coordinate(op.axis, index);
    std::string expr;
    for (size_t k = op.buffers.size(); k-- > 0;) {
      const int b = op.buffers[k];
      const Shape& s = k_.inputs[static_cast<size_t>(b)].desc.shape;
      std::string address = "0";
      for (int d = rank_ - 1; d >= 0; --d) {
        const std::string c =
            d == op.axis ? fmt::format("({} - {})", at, at_.PartStart(op, k)) : at_.Coordinate(d, index);
        if (s[static_cast<size_t>(d)] != 1) address += fmt::format(" + {} * {}", c, at_.PartStride(b, d));
      }
      const std::string load = LoadExpr(k_.inputs[static_cast<size_t>(b)].desc.dtype, fmt::format("in{}", b), address);
      expr = expr.empty() ? load : fmt::format("({} < {} ? {} : {})", at, at_.PartEnd(op, k), load, expr);
    }
    return expr;
  }

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

  // Row-level values once per row, with what they need, in op order.
  void EmitRow(int id) {
    if (emitted_row_.count(id)) return;
    const KOp& op = k_.ops[static_cast<size_t>(id)];
    if (op.kind == OpKind::kReduce) return;  // written by WriteReduction before anyone reads it
    for (int a : op.args) EmitRow(a);
    out_ += fmt::format("    const {} {} = {};\n", CType(op.type), Name(id), Expr(op, "0"));
    emitted_row_.insert(id);
  }

  // The element-level ops `roots` need, in op order: row-level operands are emitted first (once
  // per row) and values cached by an earlier loop are read back instead of recomputed.
  std::vector<int> ElementClosure(const std::vector<int>& roots) {
    std::set<int> need;
    std::vector<int> stack = roots;
    while (!stack.empty()) {
      const int id = stack.back();
      stack.pop_back();
      const KOp& op = k_.ops[static_cast<size_t>(id)];
      if (op.row) {
        EmitRow(id);
        continue;
      }
      if (!need.insert(id).second || cached_ready_.count(id)) continue;
      for (int a : op.args) stack.push_back(a);
    }
    return {need.begin(), need.end()};
  }

  // Element-level values that several loops of a row need (softmax's exp, a norm's centered
  // input) are kept in a per-row stack array by the first loop instead of being recomputed,
  // when the row is short enough.
  void PlanCaches(const std::vector<std::vector<int>>& loop_roots) {
    // With run-time sizes the caches have kCachedRow elements (the entry calls this body only
    // for rows that fit); with literal sizes, the row's own length.
    const int64_t cache_row = run_time_sizes_ ? kCachedRow : k_.row_size();
    if (chunked_ || loop_roots.size() < 2 || cache_row > kCachedRow) return;
    // Walk each loop's operands back; the first values met that an earlier loop computes are
    // the ones worth keeping (what they were computed from is then not needed again).
    std::set<int> computed_before;
    int64_t budget = 16384;  // floats of stack per row
    for (const auto& roots : loop_roots) {
      std::set<int> seen;
      std::vector<int> stack = roots;
      while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        const KOp& op = k_.ops[static_cast<size_t>(id)];
        if (op.row || !seen.insert(id).second) continue;
        // (vector kernels keep float values only: a mask has no vector store to a row cache)
        const bool cacheable = op.kind != OpKind::kLoad && (!vector_ || op.type == ScalarType::kFloat);
        if (computed_before.count(id) && cacheable && budget >= cache_row) {
          if (cached_.insert(id).second) {
            budget -= cache_row;
            out_ += fmt::format("    {} c{}[{}];\n", CType(op.type), id, cache_row);
          }
          continue;
        }
        for (int a : op.args) stack.push_back(a);
      }
      computed_before.insert(seen.begin(), seen.end());
    }
  }

  void EmitElements(const std::vector<int>& ops, const std::string& index, const std::string& indent) {
    for (int id : ops) {
      const KOp& op = k_.ops[static_cast<size_t>(id)];
      if (cached_ready_.count(id)) {
        out_ += fmt::format("{}const {} {} = c{}[{}];\n", indent, CType(op.type), Name(id), id, index);
        continue;
      }
      out_ += fmt::format("{}const {} {} = {};\n", indent, CType(op.type), Name(id), Expr(op, index));
      if (cached_.count(id)) out_ += fmt::format("{}c{}[{}] = {};\n", indent, id, index, Name(id));
    }
  }

  // After a loop: the values it cached are there for the loops that follow.
  void MarkCached(const std::vector<int>& ops) {
    for (int id : ops)
      if (cached_.count(id)) cached_ready_.insert(id);
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
  void WriteReduction(int id) {
    if (vector_) return WriteVectorReduction(id);
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

  // A reduction's scalar tail from `red` (the folded lanes) on, and its result.
  void FinishReduction(int id, const std::vector<int>& body) {
    const KOp& op = k_.ops[static_cast<size_t>(id)];
    const int operand = op.args[0];
    out_ += "      for (; i < hi; ++i) {\n";
    EmitElements(body, "i", "        ");
    out_ += fmt::format("        red = {};\n      }}\n", Combine(op.fn, "red", Name(operand)));
    out_ += fmt::format("      {} = red;\n    }}\n", Name(id));
    MarkCached(body);
    emitted_row_.insert(id);
  }

  void WriteElementLoop() {
    std::vector<int> roots;
    for (const KStore& s : k_.stores)
      if (IsElementOutput(s.output)) roots.push_back(s.op);
    if (roots.empty()) return;
    const std::vector<int> body = ElementClosure(roots);
    if (vector_) return WriteVectorElementLoop(body, roots);
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

  // The elements after the last whole block or vector step, one at a time, and their stores.
  void WriteScalarTail(const std::vector<int>& body) {
    out_ += "    for (; i < hi; ++i) {\n";
    EmitElements(body, "i", "      ");
    for (const KStore& s : k_.stores)
      if (IsElementOutput(s.output))
        out_ += fmt::format("      out{}[obase + i] = {};\n", s.output,
                            StoreValue(k_.outputs[static_cast<size_t>(s.output)].desc.dtype, Name(s.op)));
    out_ += "    }\n";
  }

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
  void WriteVectorElementLoop(const std::vector<int>& body, const std::vector<int>& roots) {
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
  void WriteVectorReduction(int id) {
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
  // of them fit AVX2's 16 vector registers (AVX-512 has 32).
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
    int unroll = 8;
    while (unroll > 1 && static_cast<size_t>(unroll) * peak > 16) unroll /= 2;
    return unroll;
  }

  // One step's vectors: every element op of `ops` once per unrolled copy, copy by copy within
  // each op so that the copies' independent chains interleave.
  void EmitVectors(const std::vector<int>& ops, const std::vector<std::string>& lanes, const std::string& indent) {
    for (int id : ops) {
      const KOp& op = k_.ops[static_cast<size_t>(id)];
      for (size_t u = 0; u < lanes.size(); ++u) {
        const std::string value = cached_ready_.count(id) ? fmt::format("GeV::load_unaligned(c{} + {})", id, lanes[u])
                                                          : VectorExpr(op, lanes[u], u);
        out_ += fmt::format("{}const {} {} = {};\n", indent, VType(op.type), VName(id, u), value);
        if (cached_.count(id) && !cached_ready_.count(id))
          out_ += fmt::format("{}{}.store_unaligned(c{} + {});\n", indent, VName(id, u), id, lanes[u]);
      }
    }
  }

  // An element op as a vector of the elements from `index` on; operands are this copy's vectors,
  // or row-level scalars broadcast.
  std::string VectorExpr(const KOp& op, const std::string& index, size_t u) const {
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
      case OpKind::kBinary: return VBinary(op.fn, a(0), a(1));
      case OpKind::kSelect: return VSelect(op.type, a(0), a(1), a(2));
      case OpKind::kCast: return VCast(k_.ops[static_cast<size_t>(op.args[0])].type, op.type, a(0));
      case OpKind::kReduce:
      case OpKind::kConcat: break;  // reductions are row-level; Vectorizable excludes element concats
    }
    return "?";
  }

  const KernelIR& k_;
  int rank_;
  bool run_time_sizes_;
  bool chunked_;
  KernelAddressing at_;  // sizes, strides and index expressions
  bool vector_;
  std::set<int> emitted_row_;
  std::set<int> cached_, cached_ready_;  // element values kept per row; those already computed
  std::string out_;
};

}  // namespace

GeneratedKernels GenerateCpp(const std::vector<KernelIR>& kernels, SizeMode mode, KernelStyle style) {
  GeneratedKernels out;
  out.prelude = "// Generated by torchair_ge auto-fusion: one function per fused group.\n";
  out.prelude += kScalarPrelude;
  // xsimd only where a kernel uses it: a graph whose kernels all keep blocks needs no library.
  const bool vectors = style == KernelStyle::kVector && std::any_of(kernels.begin(), kernels.end(), Vectorizable);
  if (vectors) out.prelude += kVectorPrelude;
  out.prelude += kFusedKernelAbiSource;
  // What a kernel's body gets from its entry through parallel_for.
  out.prelude += "\nstruct GeKernelCall { void* const* buffers; const int64_t* sizes; };\n";
  out.body = "\n";
  for (const KernelIR& k : kernels) {
    KernelWriter writer(k, mode, style);
    out.body += writer.Write();
    out.sizes.push_back(writer.sizes());
    out.size_exprs.push_back(writer.size_exprs());
  }
  return out;
}

}  // namespace ge::autofuse
