// Which nodes may read their input's bytes in place instead of copying them.
#pragma once

#include <optional>

#include "ge/ir/graph.h"

namespace ge {

// When node's single output is a contiguous block of input 0's row-major bytes, the byte
// offset of that block: 0 for reshapes (Reshape, Flatten, Identity), the start of the block for
// a StridedSliceV2 or a constant single-index GatherV2 (select) that takes one contiguous run of
// elements, e.g. rows of a matrix or any slice whose leading dims are 1. nullopt otherwise, and
// whenever either side is updated in place (a view would see an update that a copy taken
// earlier would not) or the node has control edges.
std::optional<int64_t> ViewByteOffset(const Node* node);

// A select or slice whose output is not one contiguous block but a strided view of input 0:
// where it starts and the element stride of each output axis. Same exclusions as above.
struct StridedLayout {
  int64_t byte_offset = 0;
  std::vector<int64_t> strides;
};
std::optional<StridedLayout> StridedViewOf(const Node* node);

}  // namespace ge
