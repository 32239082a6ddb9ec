#include "ge/autofuse/kernel_writer.h"

#include <fmt/format.h>

#include <algorithm>

#include "ge/autofuse/cpp_scalar.h"
#include "ge/autofuse/cpp_vector.h"
#include "ge/autofuse/row_lanes_writer.h"

namespace ge::autofuse {
namespace {

// The cost model's price of a task: work (VCost units x elements) below which waking another
// pool thread costs more than it saves (~5 us: a VCost unit is roughly 1/16 of a cycle per
// element in vector code, and waking a thread and joining it costs a few thousand cycles).
constexpr int64_t kMinTaskWork = int64_t{1} << 18;

}  // namespace

std::string BufferPointers(const KernelIR& k) {
  std::string out = "  const GeKernelCall* call = static_cast<const GeKernelCall*>(ctx);\n";
  out += "  void* const* bufs = call->buffers;\n  const int64_t* __restrict S = call->sizes;\n  (void)S;\n";
  for (size_t i = 0; i < k.inputs.size(); ++i)
    out += fmt::format("  const {0}* __restrict in{1} = static_cast<const {0}*>(bufs[{1}]);\n",
                       StorageCType(k.inputs[i].desc.dtype), i);
  for (size_t o = 0; o < k.outputs.size(); ++o)
    out += fmt::format("  {0}* __restrict out{1} = static_cast<{0}*>(bufs[{2}]);\n",
                       StorageCType(k.outputs[o].desc.dtype), o, k.inputs.size() + o);
  return out;
}

KernelWriter::KernelWriter(const KernelIR& k, SizeMode mode, bool vector)
    : k_(k),
      rank_(static_cast<int>(k.shape.size())),
      run_time_sizes_(mode == SizeMode::kRunTime),
      chunked_(Chunked(k)),
      at_(k, run_time_sizes_, chunked_),
      vector_(vector) {}

std::string KernelWriter::Write() {
  const std::string row = at_.RowSize();
  const bool cached_body = run_time_sizes_ && !chunked_ && LoopRoots().size() >= 2;
  const bool lanes = vector_ && RunsRowsInLanes(k_, run_time_sizes_);
  WriteBody("", !run_time_sizes_, row);
  if (cached_body) WriteBody("_cached", true, row);
  if (lanes) out_ += WriteRowLanesBody(k_, at_);
  WriteEntry(row, cached_body, lanes);
  return out_;
}

// Without reductions a single row (all axes inner) is cut into chunks so that it runs in parallel.
bool KernelWriter::Chunked(const KernelIR& k) {
  bool reduces = false;
  for (const KOp& op : k.ops) reduces = reduces || op.kind == OpKind::kReduce;
  return k.inner_from == 0 && !reduces;
}

// The roots of each loop over a row: one per reduction, then the element loop's stores.
std::vector<std::vector<int>> KernelWriter::LoopRoots() const {
  std::vector<std::vector<int>> loop_roots;
  for (const KOp& op : k_.ops)
    if (op.kind == OpKind::kReduce) loop_roots.push_back({op.args[0]});
  std::vector<int> element_roots;
  for (const KStore& st : k_.stores)
    if (IsElementOutput(st.output)) element_roots.push_back(st.op);
  if (!element_roots.empty()) loop_roots.push_back(element_roots);
  return loop_roots;
}

void KernelWriter::WriteBody(const std::string& suffix, bool caches, const std::string& row) {
  emitted_row_.clear();
  cached_.clear();
  cached_ready_.clear();
  out_ += fmt::format("// {}\nstatic void {}_body{}(int64_t item_begin, int64_t item_end, void* ctx) {{\n", Summary(),
                      k_.name, suffix);
  out_ += BufferPointers(k_);
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
void KernelWriter::WriteEntry(const std::string& row, bool cached_body, bool lanes) {
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
    // With rows in lanes (row_lanes_writer.h) an item is a group of kGeW rows; the rows after
    // the last whole group run through the row body once the groups are done.
    // (offsets past int32 -- only possible with run-time sizes -- leave every row to the row body)
    out_ += lanes ? fmt::format("  const int64_t row = {}, rows = {}, items = rows * row <= {} ? rows / kGeW : 0;\n",
                                row, at_.RowCount(), kMaxLaneOffset)
                  : fmt::format("  const int64_t row = {}, items = {};\n", row, at_.RowCount());
    out_ += fmt::format("  const int64_t work = (row < 1 ? 1 : row) * {}{};\n", cost, lanes ? " * kGeW" : "");
    out_ += fmt::format("  const int64_t grain = work >= {0} ? 1 : ({0} + work - 1) / work;\n", kMinTaskWork);
  }
  out_ += "  const GeKernelCall call{buffers, sizes};\n";
  if (lanes) {
    out_ += fmt::format(
        "  runtime->parallel_for(items, grain, &{0}_lanes, const_cast<GeKernelCall*>(&call));\n"
        "  if (items * kGeW < rows) {0}_body(items * kGeW, rows, const_cast<GeKernelCall*>(&call));\n}}\n\n",
        k_.name);
    return;
  }
  const std::string body =
      cached_body ? fmt::format("({} <= {} ? &{}_body_cached : &{}_body)", row, kCachedRow, k_.name, k_.name)
                  : fmt::format("&{}_body", k_.name);
  out_ += fmt::format("  runtime->parallel_for(items, grain, {}, const_cast<GeKernelCall*>(&call));\n}}\n\n", body);
}

// The work of one element of a row: every element-level op's VCost, and one for the stores.
int64_t KernelWriter::ElementCost() const {
  int64_t cost = static_cast<int64_t>(k_.stores.size());
  for (const KOp& op : k_.ops)
    if (!op.row) cost += VCost(op);
  return std::max<int64_t>(cost, 1) * (vector_ ? 1 : 2);  // block loops store and reload every op
}

std::string KernelWriter::Summary() const {
  if (run_time_sizes_)  // the text must not depend on the sizes: instances share it
    return fmt::format("{}: rank {}, inner from axis {}, {} ops, sizes at run time", k_.name, rank_, k_.inner_from,
                       k_.ops.size());
  return fmt::format("{}: shape {}, {} rows x {}, {} ops", k_.name, ShapeToString(k_.shape), k_.rows(), k_.row_size(),
                     k_.ops.size());
}

bool KernelWriter::IsElementOutput(int output) const {
  return k_.outputs[static_cast<size_t>(output)].desc.NumElements() == k_.rows() * k_.row_size();
}

// Each input's offset for this row from the outer coordinates (literal strides).
void KernelWriter::WriteBases() {
  if (chunked_) {
    for (size_t i = 0; i < at_.num_inputs(); ++i)
      out_ += fmt::format("    const int64_t base{} = {};\n", i, at_.Origin(i));
    return;
  }
  out_ += at_.OuterCoordinates("r", "    ");
  for (size_t i = 0; i < at_.num_inputs(); ++i)
    out_ += fmt::format("    const int64_t base{} = {};\n", i, at_.RowBase(i));
}

std::string KernelWriter::Name(int op) { return fmt::format("v{}", op); }

std::string KernelWriter::Expr(const KOp& op, const std::string& index) const {
  return Expr(op, index, [](int id) { return Name(id); });
}

std::string KernelWriter::Expr(const KOp& op, const std::string& index, const OperandNamer& name) const {
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
std::string KernelWriter::ConcatExpr(const KOp& op, const std::string& index) const {
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

// Row-level values once per row, with what they need, in op order.
void KernelWriter::EmitRow(int id) {
  if (emitted_row_.count(id)) return;
  const KOp& op = k_.ops[static_cast<size_t>(id)];
  if (op.kind == OpKind::kReduce) return;  // written by WriteReduction before anyone reads it
  for (int a : op.args) EmitRow(a);
  out_ += fmt::format("    const {} {} = {};\n", CType(op.type), Name(id), Expr(op, "0"));
  emitted_row_.insert(id);
}

// The element-level ops `roots` need, in op order: row-level operands are emitted first (once
// per row) and values cached by an earlier loop are read back instead of recomputed.
std::vector<int> KernelWriter::ElementClosure(const std::vector<int>& roots) {
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
void KernelWriter::PlanCaches(const std::vector<std::vector<int>>& loop_roots) {
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

void KernelWriter::EmitElements(const std::vector<int>& ops, const std::string& index, const std::string& indent) {
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

void KernelWriter::MarkCached(const std::vector<int>& ops) {
  for (int id : ops)
    if (cached_.count(id)) cached_ready_.insert(id);
}

void KernelWriter::FinishReduction(int id, const std::vector<int>& body) {
  const KOp& op = k_.ops[static_cast<size_t>(id)];
  const int operand = op.args[0];
  out_ += "      for (; i < hi; ++i) {\n";
  EmitElements(body, "i", "        ");
  out_ += fmt::format("        red = {};\n      }}\n", Combine(op.fn, "red", Name(operand)));
  out_ += fmt::format("      {} = red;\n    }}\n", Name(id));
  MarkCached(body);
  emitted_row_.insert(id);
}

void KernelWriter::WriteElementLoop() {
  std::vector<int> roots;
  for (const KStore& s : k_.stores)
    if (IsElementOutput(s.output)) roots.push_back(s.op);
  if (roots.empty()) return;
  const std::vector<int> body = ElementClosure(roots);
  WriteElements(body, roots);
}

void KernelWriter::WriteScalarTail(const std::vector<int>& body) {
  out_ += "    for (; i < hi; ++i) {\n";
  EmitElements(body, "i", "      ");
  for (const KStore& s : k_.stores)
    if (IsElementOutput(s.output))
      out_ += fmt::format("      out{}[obase + i] = {};\n", s.output,
                          StoreValue(k_.outputs[static_cast<size_t>(s.output)].desc.dtype, Name(s.op)));
  out_ += "    }\n";
}

}  // namespace ge::autofuse
