// Rows in lanes: the vector style for kernels of many rows shorter than a vector (a softmax over
// the four experts of a gate, a sum of a few columns per row). There the row-wise loops of
// vector_loop_writer.cc run none of their vector steps and leave every element to the scalar
// tail -- a scalar exp per element and a pass per reduction. Here one row goes to each lane:
// a vector holds element j of kGeW consecutive rows (gathered through each row's base), every op
// runs once per element of the (fully unrolled) row, a reduction combines the row's element
// vectors lane by lane, and results are scattered back. The rows after the last whole group of
// kGeW run through the kernel's row body.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "ge/autofuse/kernel_addressing.h"
#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

// The largest element offset a lane may gather from or scatter to (the indices are int32).
inline constexpr int64_t kMaxLaneOffset = std::numeric_limits<int32_t>::max();

// Whether a vector kernel runs its rows in lanes: rows shorter than the target's float vector
// (with run-time sizes, of an extent every instance shares); with literal sizes at least one
// group of rows and every offset within kMaxLaneOffset (with run-time sizes the kernel's entry
// checks that); every value a float or a bool (row-level ones too), no concat.
bool RunsRowsInLanes(const KernelIR& k, bool run_time_sizes);

// The body `<name>_lanes(group_begin, group_end, ctx)` over groups of kGeW rows, one per lane.
std::string WriteRowLanesBody(const KernelIR& k, const KernelAddressing& at);

}  // namespace ge::autofuse
