#include "ge/compiler/work_limits.h"

#include <limits>

namespace ge {
namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

// Elements of a static desc; 0 for a dimension not known yet (an instance checks its own).
int64_t StaticElements(const TensorDesc& desc) { return desc.IsStatic() ? desc.NumElements() : 0; }

}  // namespace

Expected<WorkLimits> WorkLimits::FromOptions(const Options& options) {
  WorkLimits limits;
  GE_ASSIGN_OR_RETURN(limits.max_tensor_elements, CountOption(options, option::kMaxTensorElements));
  GE_ASSIGN_OR_RETURN(limits.max_work_per_run, CountOption(options, option::kMaxWorkPerRun));
  return limits;
}

int64_t GraphWork(const Graph& graph) {
  int64_t work = 0;
  for (const Node* node : graph.nodes()) {
    for (const Value& input : node->inputs())
      if (input.valid()) work = SaturatingAdd(work, StaticElements(input.node->output_desc(input.index)));
    for (int o = 0; o < node->num_outputs(); ++o) work = SaturatingAdd(work, StaticElements(node->output_desc(o)));
  }
  return work;
}

Status CheckWorkLimits(const Graph& graph, const WorkLimits& limits) {
  for (const Node* node : graph.nodes()) {
    for (int o = 0; o < node->num_outputs(); ++o) {
      const TensorDesc& desc = node->output_desc(o);
      if (StaticElements(desc) > limits.max_tensor_elements)
        return InvalidArgument(
            "{} output {} {} has {} elements, more than ge.maxTensorElements={} allows "
            "($TORCHAIR_GE_MAX_TENSOR_ELEMENTS raises it)",
            node->ToString(), o, desc.ToString(), desc.NumElements(), limits.max_tensor_elements);
    }
  }
  const int64_t work = GraphWork(graph);
  if (work > limits.max_work_per_run)
    return InvalidArgument(
        "graph '{}' reads and writes {} elements per run, more than ge.maxWorkPerRun={} allows "
        "($TORCHAIR_GE_MAX_WORK_PER_RUN raises it)",
        graph.name(), work, limits.max_work_per_run);
  return {};
}

}  // namespace ge
