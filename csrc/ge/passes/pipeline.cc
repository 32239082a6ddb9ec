// The optimizer pipeline: which passes run, in which stage, at which level, under which
// option. Adding a pass = writing its class and adding a row here.
#include "ge/passes/pass_manager.h"
#include "ge/passes/passes.h"

namespace ge {

const std::vector<PassStage>& OptimizerStages() {
  static const std::vector<PassStage> stages = {
      // On the graph as converted: clean up what conversion left behind.
      {"optimize_original",
       {
           {"DeadCodeElimination", CreateDeadCodeEliminationPass, OptLevel::kO1,
            &OptimizerOptions::dead_code_elimination},
           {"ConstantMerge", CreateConstantMergePass, OptLevel::kO1},
           {"CommonSubexpressionElimination", CreateCommonSubexpressionEliminationPass, OptLevel::kO3, nullptr, true},
           {"NoOpElimination", CreateNoOpEliminationPass, OptLevel::kO1, nullptr, true},
       }},
      // Fold data movement and epilogues into the kernels that can absorb them.
      {"optimize_stage1",
       {
           {"TransposeMatMulFold", CreateTransposeMatMulFoldPass, OptLevel::kO3},
           {"ConcatFlatten", CreateConcatFlattenPass, OptLevel::kO3},
           {"ReduceOverPack", CreateReduceOverPackPass, OptLevel::kO3},
           {"MatMulBiasFold", CreateMatMulBiasFoldPass, OptLevel::kO3},
           {"BatchNormFold", CreateBatchNormFoldPass, OptLevel::kO3},
           // After the folds, so that weight transposes become flags rather than folded copies.
           {"ConstantFolding", CreateConstantFoldingPass, OptLevel::kO1, &OptimizerOptions::constant_folding},
           // Declarative rules (rewrite_rules.h): built-in FusedAttention and user rules. After
           // the constants are folded: a causal SDPA's mask is a constant by then (is_causal).
           {"PatternRewrite", CreatePatternRewritePass, OptLevel::kO3, nullptr, true},
       }},
      // Tidy up after the folds and check the result is still well typed.
      {"optimize_stage2",
       {
           {"NoOpElimination", CreateNoOpEliminationPass, OptLevel::kO1, nullptr, true},
           {"DeadCodeElimination", CreateDeadCodeEliminationPass, OptLevel::kO1,
            &OptimizerOptions::dead_code_elimination},
           // After the folds (a BatchNorm folds into an NCHW convolution only).
           {"ChannelsLast", CreateChannelsLastPass, OptLevel::kO3},
           {"InferShape", CreateInferShapePass, OptLevel::kO1},
       }},
  };
  return stages;
}

std::vector<std::string> OptimizerPassNames() {
  std::vector<std::string> names;
  for (const PassStage& stage : OptimizerStages())
    for (const PassEntry& entry : stage.passes)
      if (std::find(names.begin(), names.end(), entry.name) == names.end()) names.push_back(entry.name);
  return names;
}

}  // namespace ge
