// The loop-level kernel IR of one fused group: loads with broadcast strides, scalar ops,
// reductions over a row and stores, over a static iteration space. The C++ generator reads
// only this; the grouping and lowering code writes it.
//
// The iteration space `shape` splits at `inner_from`: the axes before it are the outer axes
// (one "row" per outer index, rows run in parallel), the axes from it on are the row's inner
// elements. Reductions always reduce exactly a whole row. Every value is either element-level
// (one per iteration point) or row-level (one per row: reductions, loads that do not vary
// within a row, and ops on those).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ge/autofuse/kernel_fn.h"
#include "ge/ir/tensor_desc.h"

namespace ge::autofuse {

// The scalar types values have inside a kernel: every floating dtype computes in float.
enum class ScalarType : uint8_t { kFloat, kBool, kInt64 };

enum class OpKind : uint8_t {
  kLoad,    // input `buffer` at the current point (broadcast as its shape says)
  kConst,   // `value`
  kUnary,   // fn(args[0])
  kBinary,  // fn(args[0], args[1])
  kSelect,  // args[0] ? args[1] : args[2]
  kCast,    // args[0] converted to `type`
  kReduce,  // fn ("sum", "max", "min") of args[0] over the row; row-level
  kConcat,  // the element of the concatenation of inputs `buffers` along `axis` (starting at `offsets`)
};

struct KOp {
  OpKind kind;
  ScalarType type = ScalarType::kFloat;
  KFn fn = KFn::kNone;           // kUnary/kBinary/kReduce: the function (kernel_fn.h)
  std::vector<int> args;         // operand op indices (always earlier ops)
  int buffer = -1;               // kLoad: input index
  std::vector<int> buffers;      // kConcat: the parts, in order
  std::vector<int64_t> offsets;  // kConcat: where each part starts along `axis`
  int axis = 0;                  // kConcat
  double value = 0;              // kConst
  bool row = false;              // row-level: computed once per row
};

struct KBuffer {
  TensorDesc desc;  // for inputs: broadcasts to the iteration shape (right-aligned)
  // Inputs read through a permutation (a fused Transpose): the element stride of each
  // iteration axis. Empty: derived from `desc` by right-aligned broadcasting.
  std::vector<int64_t> strides;
  bool concat_part = false;  // read only by a kConcat (its own addressing; no broadcasting)
  // Inputs read through a slice (a fused StridedSliceV2; `strides` set): the element the
  // iteration space's origin reads.
  int64_t offset = 0;
};

// The element stride of every iteration axis for reading `buffer` over `shape` (0 where it
// broadcasts).
std::vector<int64_t> IterationStrides(const KBuffer& buffer, const Shape& shape);

struct KStore {
  int output;  // output index
  int op;      // the value stored; a row-level value is stored once per row
};

struct KernelIR {
  std::string name;  // the C symbol
  Shape shape;       // iteration space
  int inner_from = 0;
  std::vector<KBuffer> inputs;
  std::vector<KBuffer> outputs;  // rows() * row_size() elements, or rows() for a row-level value stored once per row
  std::vector<KOp> ops;          // in dependency order
  std::vector<KStore> stores;

  int64_t rows() const;      // product of the outer axes
  int64_t row_size() const;  // product of the inner axes
  // A readable, deterministic listing (dumps, cache keys, test failure messages).
  std::string ToString() const;
  // Consistency: operand indices, kinds vs types, row-levelness, store shapes.
  Status Verify() const;
  // Whether `op` is row-level: a load that does not vary over the inner axes, a reduction or
  // constant, or an op on row-level values only (its operands' flags are taken as they are).
  bool RowLevel(const KOp& op) const;
  // Recomputes every op's flag, after inner_from changed.
  void ResetRowLevels();
  // The inputs whose bytes `output` may be stored over: the kernel computes each element in one
  // pass (no reduction, no concatenation) and stores it after every load of that point, so an
  // input read only at the element being stored -- shaped, typed and laid out like the output --
  // is never read after that element is overwritten.
  std::vector<int> InputsStorableOver(int output) const;
};

std::string_view ScalarTypeName(ScalarType type);
// The kernel-level scalar type of a tensor dtype; nullopt for dtypes a kernel cannot hold.
std::optional<ScalarType> ScalarTypeOf(DataType dtype);

}  // namespace ge::autofuse
