// Names of the IR ops that passes, auto-fusion and devices recognise by type, so that a
// comparison is a checked constant rather than a string literal. (Data, Const, NetOutput,
// TorchOp and FusedKernel, which the IR itself knows, are in ge/ir/graph.h.)
#pragma once

namespace ge {

inline constexpr const char* kOpAdd = "Add";
inline constexpr const char* kOpAssign = "Assign";
inline constexpr const char* kOpBatchMatMulV2 = "BatchMatMulV2";
inline constexpr const char* kOpBatchNorm = "BatchNorm";
inline constexpr const char* kOpCast = "Cast";
inline constexpr const char* kOpConcatV2 = "ConcatV2";
inline constexpr const char* kOpConv2D = "Conv2D";
inline constexpr const char* kOpFlatten = "Flatten";
inline constexpr const char* kOpFusedMatMul = "FusedMatMul";
inline constexpr const char* kOpFusedConv2D = "FusedConv2D";
inline constexpr const char* kOpGatherV2 = "GatherV2";
inline constexpr const char* kOpIdentity = "Identity";
inline constexpr const char* kOpMatMulV2 = "MatMulV2";
inline constexpr const char* kOpMul = "Mul";
inline constexpr const char* kOpNeg = "Neg";
inline constexpr const char* kOpRealDiv = "RealDiv";
inline constexpr const char* kOpReshape = "Reshape";
inline constexpr const char* kOpRotaryMul = "RotaryMul";
inline constexpr const char* kOpSoftmaxV2 = "SoftmaxV2";
inline constexpr const char* kOpSafeSoftmax = "SafeSoftmax";
inline constexpr const char* kOpStridedSliceV2 = "StridedSliceV2";
inline constexpr const char* kOpTranspose = "Transpose";

}  // namespace ge
