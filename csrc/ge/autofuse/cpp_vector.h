// How vector kernels spell values: xsimd batches of the widest float vector the target has
// (`GeV`, `GeB` for its masks; kGeW lanes), one vector of lanes at a time through every op of
// a fused chain, so the chain stays in registers. Transcendental functions come from xsimd's
// vectorized math; the few functions xsimd lacks run per lane through the scalar helpers.
// kVectorPrelude follows kScalarPrelude in a translation unit (it uses its helpers).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

extern const char* const kVectorPrelude;
// What the prelude's #error says when xsimd's headers are missing (the stage recognizes it).
extern const char* const kMissingVectorLibrary;

// Whether a kernel can be written with vectors: every element-level value is a float or a
// bool, read from and stored to float/float16/bfloat16/bool buffers, and no element-level
// concat (row-level values are scalars, computed once per row, of any type).
bool Vectorizable(const KernelIR& k);
// The buffer dtypes vector code loads and stores: float, float16, bfloat16, bool.
bool VectorStorage(DataType t);

// The vector registers and the float lanes of a vector (kGeW) on the CPU the kernels are
// compiled for (-march=native: this one): 32 and 16 with AVX-512, 16 and 8 with AVX2.
int TargetVectorRegisters();
int TargetFloatLanes();

const char* VType(ScalarType t);                                                   // the vector type of a value
std::string VBroadcast(ScalarType t, const std::string& scalar);                   // a row-level scalar in every lane
std::string VLoad(DataType t, const std::string& pointer);                         // kGeW contiguous elements
std::string VStore(DataType t, const std::string& pointer, const std::string& v);  // a statement
// A vector whose lane l is the scalar expression `element_of_l` (it reads `l`): strided reads.
std::string VGather(DataType t, const std::string& element_of_l);
std::string VUnary(KFn fn, const std::string& x);
std::string VBinary(KFn fn, const std::string& a, const std::string& b);
// The element float adds and subtracts of `ops` (in issue order) to write as a multiply-add by
// one (VBinaryOnTheMultiplier), so that the chain's multiplies and adds come out even: on CPUs
// with separate add and multiply pipes the busier pair sets its pace (ge_vadd_fma's comment).
std::set<int> AddsForTheMultiplier(const KernelIR& k, const std::vector<int>& ops);
std::string VBinaryOnTheMultiplier(KFn fn, const std::string& a, const std::string& b);  // kAdd or kSub
std::string VSelect(ScalarType t, const std::string& c, const std::string& a, const std::string& b);
std::string VCast(ScalarType from, ScalarType to, const std::string& x);
std::string VCombine(KFn fn, const std::string& acc, const std::string& v);  // a reduction step
std::string VFold(KFn fn, const std::string& v);                             // all lanes to one float
// Per-element cost of an op in rough "simple vector instruction" units: the cost model of
// how much work a kernel's element is, which decides how many threads it pays to wake.
int VCost(const KOp& op);

}  // namespace ge::autofuse
