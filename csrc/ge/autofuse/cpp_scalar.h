// How generated kernels spell scalars: the prelude of inline helpers every translation unit
// starts with (float16/bfloat16 conversions, NaN-propagating max/min, call-free exp, tanh,
// sigmoid, erf), C types, loads and stores per dtype, and the expressions for IR functions.
#pragma once

#include "ge/autofuse/kernel_fn.h"

#include <string>

#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

extern const char* const kScalarPrelude;

std::string FloatLiteral(double v);
const char* CType(ScalarType t);       // the type a value has inside a kernel
const char* StorageCType(DataType t);  // the element type of a buffer of `t`
std::string LoadExpr(DataType t, const std::string& ptr, const std::string& index);  // as a kernel value
std::string StoreValue(DataType t, const std::string& v);                            // back to storage
std::string UnaryExpr(KFn fn, const std::string& x);
std::string BinaryExpr(KFn fn, const std::string& a, const std::string& b);
std::string Combine(KFn fn, const std::string& acc, const std::string& v);  // a reduction step
const char* ReduceInit(KFn fn);

}  // namespace ge::autofuse
