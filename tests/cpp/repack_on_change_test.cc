// RepackOnChange packs a weight that is a graph input on the first call and again only after its
// bytes changed: in any chunk of its digest, through any alias, in any layout; a packing that
// fails is retried by the next call.
#include "devices/cpu/kernels/repack_on_change.h"

#include <gtest/gtest.h>

#include <ATen/ops/zeros.h>

#include <cstring>

namespace ge::cpu {
namespace {

// A packing that copies the weight's bytes and counts its calls.
struct CountingPack {
  int calls = 0;
  bool fail = false;
  RepackOnChange::Pack Fn() {
    return [this](const at::Tensor& weight, void* packed) -> Status {
      ++calls;
      if (fail) return Internal("packing failed");
      std::memcpy(packed, weight.const_data_ptr(), weight.nbytes());
      return {};
    };
  }
};

TEST(RepackOnChangeTest, PacksOnceUntilTheBytesChange) {
  // 2.5 MiB: three digest chunks, the last one short
  at::Tensor weight = at::zeros({5, 128 * 1024});
  CountingPack pack;
  RepackOnChange repack(weight, weight.nbytes(), pack.Fn());
  repack.Packed();
  repack.Packed();
  EXPECT_EQ(pack.calls, 1);
  // a change in the last, short chunk, written through a raw pointer (no version counter moves)
  weight.data_ptr<float>()[weight.numel() - 1] = 1.f;
  const at::Tensor& packed = repack.Packed();
  EXPECT_EQ(pack.calls, 2);
  EXPECT_EQ(static_cast<const float*>(packed.const_data_ptr())[weight.numel() - 1], 1.f);
  repack.Packed();
  EXPECT_EQ(pack.calls, 2);
  // a change in the first chunk, through a view
  weight[0][0].fill_(2.f);
  repack.Packed();
  EXPECT_EQ(pack.calls, 3);
}

TEST(RepackOnChangeTest, AWeightInAnotherLayoutIsDigestedAsStored) {
  at::Tensor storage = at::zeros({64, 32});
  const at::Tensor transposed = storage.t();  // dense, not contiguous
  CountingPack pack;
  RepackOnChange repack(transposed, transposed.nbytes(), pack.Fn());
  repack.Packed();
  storage[63][31].fill_(3.f);
  repack.Packed();
  EXPECT_EQ(pack.calls, 2);
}

TEST(RepackOnChangeTest, AFailedPackingIsRetried) {
  at::Tensor weight = at::zeros({16});
  CountingPack pack;
  pack.fail = true;
  RepackOnChange repack(weight, weight.nbytes(), pack.Fn());
  EXPECT_ANY_THROW(repack.Packed());
  pack.fail = false;
  repack.Packed();  // the bytes did not change, but they were never packed
  EXPECT_EQ(pack.calls, 2);
}

}  // namespace
}  // namespace ge::cpu
