// Factories of the optimizer's passes, one class per file in this directory.
#pragma once

#include <memory>

#include "ge/passes/pass.h"

namespace ge {

std::unique_ptr<GraphPass> CreateDeadCodeEliminationPass();
std::unique_ptr<GraphPass> CreateConstantMergePass();
std::unique_ptr<GraphPass> CreateCommonSubexpressionEliminationPass();
std::unique_ptr<GraphPass> CreateNoOpEliminationPass();
std::unique_ptr<GraphPass> CreateConstantFoldingPass();
std::unique_ptr<GraphPass> CreateTransposeMatMulFoldPass();
std::unique_ptr<GraphPass> CreateConcatFlattenPass();
std::unique_ptr<GraphPass> CreateReduceOverPackPass();
std::unique_ptr<GraphPass> CreateMatMulBiasFoldPass();
std::unique_ptr<GraphPass> CreateBatchNormFoldPass();
std::unique_ptr<GraphPass> CreatePatternRewritePass();
std::unique_ptr<GraphPass> CreateChannelsLastPass();
std::unique_ptr<GraphPass> CreateInferShapePass();

}  // namespace ge
