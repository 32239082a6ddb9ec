// KernelWriter: the C++ text of one generated kernel. The writer owns what every kernel has --
// the body over rows (or chunks of a single row), each input's base offset, row-level values
// computed once per row, row caches shared by a row's loops, the stores of row-level outputs,
// and the exported entry that runs the body through the runtime's parallel_for. How a row's
// element loop and reductions are spelled is the loop style's: block_loop_writer.cc (B-wide
// stack arrays op by op, which the compiler vectorizes) or vector_loop_writer.cc (one xsimd
// vector per unrolled copy through the whole chain, in registers). A vector kernel of rows
// shorter than a vector also gets a body with one row per lane (row_lanes_writer.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ge/autofuse/cpp_codegen.h"
#include "ge/autofuse/kernel_addressing.h"
#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

class KernelWriter {
 public:
  virtual ~KernelWriter() = default;
  KernelWriter(const KernelWriter&) = delete;
  KernelWriter& operator=(const KernelWriter&) = delete;

  // The kernel's text; sizes() then holds the values its run-time sizes read, in order. With
  // run-time sizes a kernel whose loops would share values gets a second body that keeps them
  // in row caches of kCachedRow elements, which the entry picks when a row fits.
  std::string Write();

  const std::vector<int64_t>& sizes() const { return at_.sizes(); }
  const std::vector<std::optional<SymExpr>>& size_exprs() const { return at_.size_exprs(); }

 protected:
  // `vector`: the style keeps values in vector registers (it decides the cost model's price of
  // an element and which values a row cache can hold).
  KernelWriter(const KernelIR& k, SizeMode mode, bool vector);

  // Elements per work item when a kernel's single row is cut into chunks (a multiple of every
  // unrolled vector step).
  static constexpr int64_t kChunk = 1024;
  // Row caches hold up to this many elements when the row length is known only at run time.
  static constexpr int64_t kCachedRow = 4096;

  // The loop style: the element loop over [lo, hi) computing `body` (element ops in op order)
  // and storing every element output (`roots` are the stored values), and row reduction `id`
  // (its value in `v<id>`).
  virtual void WriteElements(const std::vector<int>& body, const std::vector<int>& roots) = 0;
  virtual void WriteReduction(int id) = 0;

  // Spelling values. `name(id)` spells an operand: a scalar `v<id>`, or an element of a block's
  // slot array.
  using OperandNamer = std::function<std::string(int)>;
  static std::string Name(int op);
  std::string Expr(const KOp& op, const std::string& index) const;
  std::string Expr(const KOp& op, const std::string& index, const OperandNamer& name) const;
  bool IsElementOutput(int output) const;

  // The element-level ops `roots` need, in op order (row-level operands are emitted on the way).
  std::vector<int> ElementClosure(const std::vector<int>& roots);
  // Element ops one at a time at `index` (reading cached values back, storing those to cache).
  void EmitElements(const std::vector<int>& ops, const std::string& index, const std::string& indent);
  // After a loop: the values it cached are there for the loops that follow.
  void MarkCached(const std::vector<int>& ops);
  // A reduction's scalar tail from `red` (the folded lanes) on, and its result.
  void FinishReduction(int id, const std::vector<int>& body);
  // The elements after the last whole block or vector step, one at a time, and their stores.
  void WriteScalarTail(const std::vector<int>& body);

  const KernelIR& k_;
  const int rank_;
  const bool run_time_sizes_;
  const bool chunked_;
  KernelAddressing at_;  // sizes, strides and index expressions
  const bool vector_;
  std::set<int> emitted_row_;
  std::set<int> cached_, cached_ready_;  // element values kept per row; those already computed
  std::string out_;

 private:
  static bool Chunked(const KernelIR& k);
  std::vector<std::vector<int>> LoopRoots() const;
  void WriteBody(const std::string& suffix, bool caches, const std::string& row);
  // `lanes`: the kernel also has a body over groups of rows in lanes (row_lanes_writer.h).
  void WriteEntry(const std::string& row, bool cached_body, bool lanes);
  int64_t ElementCost() const;
  std::string Summary() const;
  void WriteBases();
  std::string ConcatExpr(const KOp& op, const std::string& index) const;
  void EmitRow(int id);
  void PlanCaches(const std::vector<std::vector<int>>& loop_roots);
  void WriteElementLoop();
};

// A body's first lines: its call's buffers as typed pointers `in<i>` and `out<o>`, and S.
std::string BufferPointers(const KernelIR& k);

// The writers of the two loop styles (KernelStyle).
std::unique_ptr<KernelWriter> MakeBlockLoopWriter(const KernelIR& k, SizeMode mode);
std::unique_ptr<KernelWriter> MakeVectorLoopWriter(const KernelIR& k, SizeMode mode);

}  // namespace ge::autofuse
