#include "ge/autofuse/autofuse_stage.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "ge/autofuse/cpp_codegen.h"
#include "ge/autofuse/cpp_vector.h"
#include "ge/autofuse/fusible_ops.h"
#include "ge/autofuse/library_epilogues.h"
#include "ge/base/logging.h"
#include "ge/ir/annotations.h"
#include "ge/ops/rewrite_utils.h"

namespace ge::autofuse {
namespace {

struct LoweredGroup {
  FusionGroup group;
  KernelIR ir;
  std::vector<Value> inputs;  // by kernel input buffer (valid until an earlier group is replaced)
  std::vector<std::pair<std::string, int>> input_names;  // the same, by producer name: stable across replacements
  std::vector<Value> outputs;                            // by kernel output
  struct Producer {
    Node* node;                   // a library op whose output the kernel reads as input `buffer`
    std::vector<Node*> reshapes;  // plain reshapes between it and the kernel (same bytes)
    int buffer;
  };
  std::vector<Producer> producers;
};

// Library ops whose output a fused group may consume in the same task, right after they wrote
// it (an epilogue: bias + activation, residual add, softmax of scores, ...): the device says
// which op types it can run that way.
bool CanBeProducer(const Node* node, const KernelFactory& device) {
  return device.CanBeFusedProducer(node->type()) && node->num_outputs() == 1 && !HasControlEdges(node) &&
         ScalarTypeOf(node->output_desc(0).dtype) == ScalarType::kFloat &&
         !IsMutatedValue(Value{const_cast<Node*>(node), 0});
}

// Producers for a group: library ops read by the group only (so they run nowhere else),
// possibly through plain reshapes read only by the group (the kernel reads the same bytes), and
// through one kernel input only: a producer's output lives in that input's scratch buffer, so a
// value the kernel reads as two inputs (Phi-3's fused gate-up projection, its two halves sliced
// by two loads) keeps its library op -- the second input would read a value that is gone.
std::vector<LoweredGroup::Producer> FindProducers(const FusionGroup& g, const std::vector<Value>& inputs,
                                                  const KernelFactory& device) {
  const std::set<const Node*> members(g.nodes.begin(), g.nodes.end());
  std::vector<LoweredGroup::Producer> out;
  std::set<const Node*> shared;  // producers more than one kernel input reaches
  for (size_t b = 0; b < inputs.size(); ++b) {
    const Value v = inputs[b];
    bool only_group = true;
    for (const Use& use : v.node->users(v.index)) only_group = only_group && members.count(use.user);
    if (!only_group || FeedsNetOutput(v)) continue;
    std::vector<Node*> chain;
    Node* node = v.node;
    while (IsSameBytesReshape(node) && node->input(0).valid() &&
           node->input(0).node->users(node->input(0).index).size() == 1 && !FeedsNetOutput(node->input(0))) {
      chain.push_back(node);
      node = node->input(0).node;
    }
    if (!CanBeProducer(node, device) || node->users(0).size() != 1) continue;
    bool taken = false;
    for (const auto& p : out) taken = taken || p.node == node;
    if (taken)
      shared.insert(node);
    else
      out.push_back({node, std::move(chain), static_cast<int>(b)});
  }
  out.erase(std::remove_if(out.begin(), out.end(), [&](const auto& p) { return shared.count(p.node) > 0; }), out.end());
  return out;
}

// For a kernel without reductions: the first axis from which every input it reads is either
// whole and contiguous or constant along every later axis, so rows are as long as possible and
// read without index arithmetic.
int ChooseInnerFrom(const KernelIR& ir) {
  const int rank = static_cast<int>(ir.shape.size());
  std::vector<std::vector<int64_t>> strides;
  for (const KBuffer& in : ir.inputs)
    if (!in.concat_part) strides.push_back(IterationStrides(in, ir.shape));
  for (int k = 0; k < rank; ++k) {
    bool ok = true;
    for (const auto& st : strides) {
      bool whole = true, constant = true;
      int64_t expect = 1;
      for (int d = rank - 1; d >= k; --d) {
        const int64_t dim = ir.shape[static_cast<size_t>(d)];
        if (dim != 1 && st[static_cast<size_t>(d)] != expect) whole = false;
        if (dim != 1 && st[static_cast<size_t>(d)] != 0) constant = false;
        expect *= dim;
      }
      ok = ok && (whole || constant);
    }
    if (ok) return k;
  }
  return std::max(rank - 1, 0);
}

Expected<LoweredGroup> LowerGroup(const FusionGroup& g, const std::string& name, const KernelFactory& device) {
  const std::set<const Node*> members(g.nodes.begin(), g.nodes.end());
  // Without reductions the row split is chosen once the inputs are known (below).
  const int rank = static_cast<int>(g.shape.size());
  KernelBuilder b(name, g.shape, g.row_axis ? *g.row_axis : rank);
  std::map<std::pair<const Node*, int>, int> value_op;
  for (const Node* n : g.nodes) {
    auto info = Fusible(n);
    if (!info) return Internal("{} is in a fusion group but not fusible", n->ToString());
    std::vector<int> args;
    for (int i = 0; !info->loads_from_outside && i < info->DataInputs(n); ++i) {
      const Value v = n->input(i);
      if (!v.valid()) {
        args.push_back(-1);
      } else if (members.count(v.node)) {
        args.push_back(value_op.at({v.node, v.index}));
      } else {
        GE_ASSIGN_OR_RETURN(int id, b.External(v));
        args.push_back(id);
      }
    }
    GE_ASSIGN_OR_RETURN(std::vector<int> outs, LowerNode(b, n, args));
    for (size_t o = 0; o < outs.size(); ++o) {
      // Values stay floats inside the kernel; a float16/bfloat16 result is rounded to its dtype
      // where the unfused op would have stored it, so fused chains give eager's numbers.
      int id = outs[o];
      const DataType t = n->output_desc(static_cast<int>(o)).dtype;
      const KOp& op = b.op(id);
      const bool rounded = op.kind == OpKind::kLoad ||
                           (op.kind == OpKind::kUnary && (op.fn == KFn::kRoundF16 || op.fn == KFn::kRoundBF16));
      if ((t == DataType::kFloat16 || t == DataType::kBFloat16) && !rounded)
        id = b.Unary(t == DataType::kFloat16 ? KFn::kRoundF16 : KFn::kRoundBF16, id);
      value_op[{n, static_cast<int>(o)}] = id;
    }
  }
  LoweredGroup out;
  out.group = g;
  for (Node* n : g.nodes)
    for (int o = 0; o < n->num_outputs(); ++o) {
      bool outside = false;
      for (const Use& use : n->users(o)) outside = outside || !members.count(use.user);
      if (!outside) continue;
      b.Store(value_op.at({n, o}), n->output_desc(o));
      out.outputs.push_back(n->output(o));
    }
  out.inputs = b.external_inputs();
  for (const Value& v : out.inputs) out.input_names.emplace_back(v.node->name(), v.index);
  out.producers = FindProducers(g, out.inputs, device);
  out.ir = b.Take();
  if (!g.row_axis) {
    out.ir.inner_from = ChooseInnerFrom(out.ir);
    // A concat reads its parts by coordinate: rows along the last axis give it the coordinate
    // without division (and make a concat along an outer axis pick its part once per row).
    for (const KOp& op : out.ir.ops)
      if (op.kind == OpKind::kConcat)
        out.ir.inner_from = std::max(out.ir.inner_from, static_cast<int>(out.ir.shape.size()) - 1);
    out.ir.ResetRowLevels();
  }
  GE_RETURN_IF_ERROR(out.ir.Verify());
  return out;
}

// The kernel input buffers that library producers fill (not inputs of the task).
std::set<int> ProducerBuffers(const LoweredGroup& lowered) {
  std::set<int> buffers;
  for (const auto& p : lowered.producers) buffers.insert(p.buffer);
  return buffers;
}

// KernelIR::InputsStorableOver per output, as task inputs: the producers' inputs come first,
// then the kernel's own inputs that no producer fills, in buffer order (ReplaceGroup).
std::vector<std::vector<int>> StorableOver(const LoweredGroup& lowered, int producer_inputs) {
  const std::set<int> producer_buffers = ProducerBuffers(lowered);
  std::map<int, int> task_input;
  for (int b = 0, next = producer_inputs; b < static_cast<int>(lowered.input_names.size()); ++b)
    if (!producer_buffers.count(b)) task_input[b] = next++;
  std::vector<std::vector<int>> out(lowered.outputs.size());
  for (size_t o = 0; o < out.size(); ++o)
    for (int b : lowered.ir.InputsStorableOver(static_cast<int>(o)))
      if (task_input.count(b)) out[o].push_back(task_input.at(b));
  return out;
}

// The typed description of a lowered group's kernel, which the device receives.
FusedKernelDef DefineKernel(const LoweredGroup& lowered, std::vector<int64_t> sizes,
                            const std::vector<std::optional<SymExpr>>& size_exprs) {
  FusedKernelDef def;
  def.symbol = lowered.ir.name;
  def.sizes = std::move(sizes);
  for (const std::optional<SymExpr>& e : size_exprs) {
    if (!e) {
      def.size_exprs.clear();
      break;
    }
    def.size_exprs.push_back(*e);
  }
  def.kernel_ir = lowered.ir.ToString();
  for (const auto& p : lowered.producers) {
    FusedProducerDef producer{p.node->type(),       p.node->name(), {},
                              p.node->num_inputs(), p.buffer,       p.node->output_desc(0)};
    for (const auto& [key, value] : p.node->attrs())
      if (key.rfind('_', 0) != 0) producer.attrs.emplace(key, value);
    def.producers.push_back(std::move(producer));
    def.fused_ops.push_back(p.node->type() + ":" + p.node->name());
    for (auto it = p.reshapes.rbegin(); it != p.reshapes.rend(); ++it)
      def.fused_ops.push_back((*it)->type() + ":" + (*it)->name());
  }
  for (const Node* n : lowered.group.nodes) def.fused_ops.push_back(n->type() + ":" + n->name());
  for (const Value& v : lowered.outputs) def.outputs.push_back(v.node->output_desc(v.index));
  def.storable_over = StorableOver(lowered, def.ProducerInputs());
  return def;
}

// The definition again as attributes of the FusedKernel node, for dumps and InferShape only: the
// device reads the typed definition (TaskDef::fused_kernel).
void AnnotateForDumps(Node* fused, const FusedKernelDef& def) {
  if (!def.producers.empty()) {
    std::vector<std::string> types;
    std::vector<int64_t> inputs, buffers, dtypes, ranks, dims;
    for (size_t k = 0; k < def.producers.size(); ++k) {
      const FusedProducerDef& p = def.producers[k];
      types.push_back(p.type);
      inputs.push_back(p.num_inputs);
      buffers.push_back(p.buffer);
      dtypes.push_back(static_cast<int64_t>(p.output.dtype));
      ranks.push_back(static_cast<int64_t>(p.output.shape.size()));
      dims.insert(dims.end(), p.output.shape.begin(), p.output.shape.end());
      for (const auto& [key, value] : p.attrs) fused->SetAttr(fmt::format("producer{}.{}", k, key), value);
    }
    fused->SetAttr("producers", types);
    fused->SetAttr("producer_inputs", inputs);
    fused->SetAttr("producer_buffers", buffers);
    fused->SetAttr("producer_dtypes", dtypes);
    fused->SetAttr("producer_ranks", ranks);
    fused->SetAttr("producer_shapes", dims);
  }
  std::vector<int64_t> dtypes, ranks, dims;
  for (const TensorDesc& desc : def.outputs) {
    dtypes.push_back(static_cast<int64_t>(desc.dtype));
    ranks.push_back(static_cast<int64_t>(desc.shape.size()));
    dims.insert(dims.end(), desc.shape.begin(), desc.shape.end());
  }
  fused->SetAttr("kernel", def.symbol);
  fused->SetAttr("kernel_ir", def.kernel_ir);
  fused->SetAttr("fused_ops", def.fused_ops);
  fused->SetAttr("output_dtypes", dtypes);
  fused->SetAttr("output_ranks", ranks);
  fused->SetAttr("output_shapes", dims);
}

// `replaced` maps values (by node name) of groups replaced earlier to the fused outputs that
// now carry them: a group may read another group's output, whose node is gone by then.
using Replaced = std::map<std::pair<std::string, int>, Value>;
Expected<Node*> ReplaceGroup(Graph& graph, const LoweredGroup& lowered, const FusedKernelDef& def, int64_t index,
                             Replaced* replaced) {
  const FusionGroup& g = lowered.group;
  auto current = [&](const std::pair<std::string, int>& name) -> Value {
    auto it = replaced->find(name);
    return it != replaced->end() ? it->second : Value{graph.FindNode(name.first), name.second};
  };
  // Producers' inputs first (in order), then the kernel's other inputs; their outputs are scratch.
  std::vector<Value> inputs;
  for (const auto& p : lowered.producers)
    for (const Value& v : p.node->inputs()) inputs.push_back(v);  // live edges: already rewired
  const std::set<int> producer_buffers = ProducerBuffers(lowered);
  for (size_t i = 0; i < lowered.input_names.size(); ++i)
    if (!producer_buffers.count(static_cast<int>(i))) inputs.push_back(current(lowered.input_names[i]));
  Node* fused = graph.AddNode(kOpFusedKernel, lowered.ir.name, inputs, static_cast<int>(lowered.outputs.size()));
  for (size_t k = 0; k < def.outputs.size(); ++k) fused->output_desc(static_cast<int>(k)) = def.outputs[k];
  AnnotateForDumps(fused, def);
  fused->SetAttr(kAttrFusedGroup, index);
  if (!g.user_stream.empty()) fused->SetAttr(kAttrUserStream, g.user_stream);
  // Named after the node that makes its last output, the value users see.
  const Node* last = lowered.outputs.back().node;
  for (const char* key : {kAttrFxNode, kAttrSource})
    if (last->HasAttr(key)) fused->SetAttr(key, last->attrs().at(key));
  for (size_t k = 0; k < lowered.outputs.size(); ++k) {
    graph.ReplaceAllUsesWith(lowered.outputs[k], fused->output(static_cast<int>(k)));
    (*replaced)[{lowered.outputs[k].node->name(), lowered.outputs[k].index}] = fused->output(static_cast<int>(k));
  }
  for (Node* member : g.nodes) graph.MoveControlOutputs(member, fused);  // ordered before in-place updates
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) GE_RETURN_IF_ERROR(graph.RemoveNode(*it));
  for (const auto& p : lowered.producers) {
    for (Node* reshape : p.reshapes) GE_RETURN_IF_ERROR(graph.RemoveNode(reshape));
    GE_RETURN_IF_ERROR(graph.RemoveNode(p.node));
  }
  return fused;
}

// Vector kernels need xsimd's headers; without them (a machine set up by hand) the graph gets
// block kernels and the process one warning naming the package.
bool MissingVectorLibrary(const Status& failed) {
  if (failed.message().find(kMissingVectorLibrary) == std::string::npos) return false;
  static std::once_flag warned;
  std::call_once(warned, [] {
    GE_LOGW(
        "xsimd headers not found (Debian/Ubuntu: apt install libxsimd-dev): generated kernels use blocks, "
        "which are slower on long elementwise chains");
  });
  return true;
}

}  // namespace

Expected<AutofuseOptions> AutofuseOptions::FromOptions(const Options& options) {
  AutofuseOptions out;
  GE_ASSIGN_OR_RETURN(bool autofuse, BoolOption(options, option::kAutofuse));
  GE_ASSIGN_OR_RETURN(bool static_compile, BoolOption(options, option::kStaticKernelCompile));
  out.enabled = autofuse && static_compile;
  GE_ASSIGN_OR_RETURN(out.compiler.compiler, OptionValue(options, option::kKernelCompiler));
  GE_ASSIGN_OR_RETURN(out.compiler.cache_dir, OptionValue(options, option::kKernelCacheDir));
  GE_ASSIGN_OR_RETURN(out.compiler.trust.allow_symlinks, BoolOption(options, option::kKernelCacheAllowSymlinks));
  GE_ASSIGN_OR_RETURN(out.compiler.max_entries, PositiveIntOption(options, option::kKernelCacheMaxEntries));
  GE_ASSIGN_OR_RETURN(out.compiler.timeout_seconds, PositiveIntOption(options, option::kKernelCompileTimeout));
  GE_ASSIGN_OR_RETURN(out.compiler.fast_math, BoolOption(options, option::kKernelFastMath));
  GE_ASSIGN_OR_RETURN(bool run_time_sizes, BoolOption(options, option::kKernelRunTimeSizes));
  out.sizes = run_time_sizes ? SizeMode::kRunTime : SizeMode::kLiteral;
  GE_ASSIGN_OR_RETURN(std::string codegen, OptionValue(options, option::kKernelCodegen));
  out.style = codegen == "blocks" ? KernelStyle::kBlocks : KernelStyle::kVector;
  return out;
}

Expected<AutofuseResult> RunAutofuse(Graph& graph, const AutofuseOptions& options, const KernelFactory& device,
                                     AutofuseStats* stats) {
  if (!options.enabled) return AutofuseResult{};
  GE_ASSIGN_OR_RETURN(stats->library_epilogues, FoldLibraryEpilogues(graph));
  const std::vector<FusionGroup> groups = FindFusionGroups(graph, options.grouping);
  if (groups.empty()) return AutofuseResult{};
  std::vector<LoweredGroup> lowered;
  for (const FusionGroup& candidate : groups) {
    auto group = LowerGroup(candidate, fmt::format("ge_fused_{}", lowered.size()), device);
    if (!group.ok()) {  // a lowering gap is a bug, but not the user's problem: that group keeps its library kernels
      GE_LOGW("graph '{}': a group of {} nodes is not fused: {}", graph.name(), candidate.nodes.size(),
              group.status().ToString());
      continue;
    }
    if (group->outputs.empty()) continue;
    if (candidate.nodes.size() < 2 && group->producers.empty()) continue;  // the library kernel is as good
    lowered.push_back(std::move(group).value());
  }
  if (lowered.empty()) return AutofuseResult{};
  std::vector<KernelIR> kernels;
  for (const LoweredGroup& l : lowered) kernels.push_back(l.ir);
  KernelBuildInfo build;
  GeneratedKernels generated = GenerateCpp(kernels, options.sizes, options.style);
  auto library = BuildKernelLibrary(generated.prelude, generated.kernels, options.compiler, &build);
  if (!library.ok() && options.style == KernelStyle::kVector && MissingVectorLibrary(library.status())) {
    generated = GenerateCpp(kernels, options.sizes, KernelStyle::kBlocks);
    library = BuildKernelLibrary(generated.prelude, generated.kernels, options.compiler, &build);
  }
  stats->source = build.source;
  if (!library.ok()) {
    stats->fallback = library.status().message();
    GE_LOGW("graph '{}': generated kernels unavailable, running library kernels instead: {}", graph.name(),
            stats->fallback);
    return AutofuseResult{};
  }
  stats->cache_hit = build.cache_hit;
  stats->build_ms = build.compile_ms;
  stats->library = build.library;
  AutofuseResult result;
  result.library = std::move(library).value();
  Replaced replaced;
  for (size_t i = 0; i < lowered.size(); ++i) {
    auto def = std::make_shared<const FusedKernelDef>(
        DefineKernel(lowered[i], std::move(generated.sizes[i]), generated.size_exprs[i]));
    GE_ASSIGN_OR_RETURN(Node * fused, ReplaceGroup(graph, lowered[i], *def, static_cast<int64_t>(i), &replaced));
    ++stats->kernels;
    if (!def->sizes.empty() && def->size_exprs.size() == def->sizes.size()) ++stats->size_expr_kernels;
    result.kernels[fused] = std::move(def);
    stats->fused_nodes += static_cast<int>(lowered[i].group.nodes.size() + lowered[i].producers.size());
  }
  return result;
}

}  // namespace ge::autofuse
