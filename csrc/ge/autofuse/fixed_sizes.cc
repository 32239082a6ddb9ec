#include "ge/autofuse/fixed_sizes.h"

#include <map>

namespace ge::autofuse {

// An iteration axis is fixed when a buffer spanning it says so: an input's dims other than 1
// are the iteration's, right-aligned (broadcasting); a concat part's too, except along the concat
// axis, whose extent is fixed when every part's is; an output's when it is shaped like the
// iteration space. An extent of 1 is 1 in every instance (Dynamo specializes sizes 0 and 1).
FixedSizes::FixedSizes(const KernelIR& k) {
  for (const KBuffer& in : k.inputs) inputs_.push_back(in.desc.FixedDims());
  const int rank = static_cast<int>(k.shape.size());
  axes_.assign(static_cast<size_t>(rank), false);
  std::map<int, bool> concat_axes;  // concat axis -> every part's extent fixed
  for (const KOp& op : k.ops)
    if (op.kind == OpKind::kConcat) concat_axes[op.axis] = Parts(op, op.buffers.size() - 1, true);
  auto learn = [&](const TensorDesc& desc, const std::vector<bool>& dims, bool concat_part) {
    const int offset = rank - static_cast<int>(dims.size());
    for (int j = 0; j < static_cast<int>(dims.size()); ++j) {
      const int d = j + offset;
      if (d < 0 || (concat_part && concat_axes.count(d))) continue;
      const int64_t dim = desc.shape[static_cast<size_t>(j)];
      if (dims[static_cast<size_t>(j)] && dim != 1 && dim == k.shape[static_cast<size_t>(d)])
        axes_[static_cast<size_t>(d)] = true;
    }
  };
  for (size_t i = 0; i < k.inputs.size(); ++i)
    if (k.inputs[i].strides.empty()) learn(k.inputs[i].desc, inputs_[i], k.inputs[i].concat_part);
  for (const KBuffer& out : k.outputs)
    if (out.desc.shape == k.shape) learn(out.desc, out.desc.FixedDims(), false);
  for (const auto& [axis, parts_fixed] : concat_axes)
    if (parts_fixed) axes_[static_cast<size_t>(axis)] = true;
  for (size_t d = 0; d < axes_.size(); ++d) axes_[d] = axes_[d] || k.shape[d] == 1;
}

bool FixedSizes::Axes(int from, int to) const {
  for (int d = from; d < to; ++d)
    if (!axes_[static_cast<size_t>(d)]) return false;
  return true;
}

bool FixedSizes::InputDims(size_t input, int from) const {
  const std::vector<bool>& dims = inputs_[input];
  for (size_t d = static_cast<size_t>(from); d < dims.size(); ++d)
    if (!dims[d]) return false;
  return true;
}

bool FixedSizes::Parts(const KOp& concat, size_t k, bool through) const {
  for (size_t j = 0; j < k + (through ? 1 : 0); ++j)
    if (!inputs_[static_cast<size_t>(concat.buffers[j])][static_cast<size_t>(concat.axis)]) return false;
  return true;
}

}  // namespace ge::autofuse
