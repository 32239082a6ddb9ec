// The CPU device's thread setup for the engine's stream threads (cpu_device.cc).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "devices/cpu/cpu_device.h"

extern "C" __attribute__((weak)) int MKL_Get_Max_Threads();

namespace ge {
namespace {

// What a stream's thread runs with after its first kernels: ATen sets a new thread up on its
// first parallel_for (per library), and after torch.set_num_threads(n) that setup sets the
// thread to n threads; MKL follows its own process-wide setting. A thread given one core must
// keep one for ATen's, this library's and MKL's kernels alike.
TEST(CpuDeviceTest, AStreamThreadKeepsItsShareAfterItsFirstKernels) {
  cpu::RegisterCpuDevice();
  auto device = DeviceRegistry::Get(cpu::kCpuDeviceName);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  const int before = at::get_num_threads();
  at::set_num_threads(std::max(2, before));  // as a user's torch.set_num_threads does
  int omp_after_kernels = 0, mkl_after_kernels = 0;
  std::thread stream([&] {
    (*device)->SetThreadParallelism(1);
    at::parallel_for(0, 1 << 16, 1, [](int64_t, int64_t) {});  // this library's parallel_for
    at::Tensor x = at::rand({256, 1024});
    (void)at::softmax(x, 1);  // libtorch's
    (void)at::mm(x, x.t());   // MKL's
    omp_after_kernels = at::get_num_threads();
    mkl_after_kernels = MKL_Get_Max_Threads != nullptr ? MKL_Get_Max_Threads() : 1;
  });
  stream.join();
  at::set_num_threads(before);
  EXPECT_EQ(omp_after_kernels, 1);
  EXPECT_EQ(mkl_after_kernels, 1);
}

// The caller's thread narrowed for a run and set back: MKL follows it there and back, and then
// goes by its process-wide setting again (a later torch.set_num_threads applies to it).
TEST(CpuDeviceTest, TheCallersThreadGetsItsWidthBackForMklToo) {
  cpu::RegisterCpuDevice();
  auto device = DeviceRegistry::Get(cpu::kCpuDeviceName);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  if (MKL_Get_Max_Threads == nullptr) GTEST_SKIP() << "this torch has no MKL";
  const int before = at::get_num_threads();
  at::set_num_threads(std::max(2, before));
  const int width = at::get_num_threads();
  const int previous = (*device)->SetThreadParallelism(1);
  EXPECT_EQ(MKL_Get_Max_Threads(), 1);
  (*device)->SetThreadParallelism(previous);
  EXPECT_EQ(MKL_Get_Max_Threads(), width);
  at::set_num_threads(width + 1);
  EXPECT_EQ(MKL_Get_Max_Threads(), width + 1);
  at::set_num_threads(before);
}

}  // namespace
}  // namespace ge
