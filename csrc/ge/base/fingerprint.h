// Stable names for things that outlive a process: a hash that is the same in every run and
// build (cache keys, checksums), and the identity of the CPU that code or measurements were
// made for (-march=native kernels, kernel timings: neither may move to another kind of machine
// through a shared cache).
#pragma once

#include <string>
#include <string_view>

namespace ge {

// 128-bit FNV-1a (two 64-bit lanes with different offsets) as 32 hex digits. Not keyed: it
// tells accidents apart, not attackers.
std::string Fingerprint(std::string_view data);

// The first processor's model name and feature flags (/proc/cpuinfo), read once.
const std::string& HostCpuIdentity();

}  // namespace ge
