// Collectives over a torch.distributed process group (GE's Hcom ops): `group` names the group as
// c10d registers it (the functional collectives' group_name). Each rank runs the same graph;
// the kernels complete the collective inside their task.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Status CheckReduction(InferContext& ctx) {
  const auto op = ctx.Attr<std::string>("reduction");
  if (op != "sum" && op != "avg" && op != "product" && op != "min" && op != "max")
    return ctx.Error("reduction must be sum, avg, product, min or max; got '{}'", op);
  return {};
}

Status CheckRankSize(InferContext& ctx) {
  if (ctx.Attr<int64_t>("rank_size") <= 0) return ctx.Error("rank_size must be positive");
  if (ctx.Input(0).rank() == 0) return ctx.Error("x must have at least one dim");
  return {};
}

// The rows of x (dim 0) from every rank, rank after rank.
Status InferAllGather(InferContext& ctx) {
  GE_RETURN_IF_ERROR(CheckRankSize(ctx));
  Shape out = ctx.Input(0).shape;
  out[0] *= ctx.Attr<int64_t>("rank_size");
  ctx.Output(0).SetShape(out);
  return {};
}

// This rank's share of the reduced rows.
Status InferReduceScatter(InferContext& ctx) {
  GE_RETURN_IF_ERROR(CheckReduction(ctx));
  GE_RETURN_IF_ERROR(CheckRankSize(ctx));
  Shape out = ctx.Input(0).shape;
  const int64_t ranks = ctx.Attr<int64_t>("rank_size");
  if (out[0] >= 0 && out[0] % ranks != 0)
    return ctx.Error("dim 0 ({}) is not divisible by rank_size {}", out[0], ranks);
  out[0] /= ranks;
  ctx.Output(0).SetShape(out);
  return {};
}

// Rows sent to and received from each rank: dim 0 of x is the sum of send_counts, of y the sum
// of recv_counts.
Status InferAllToAll(InferContext& ctx) {
  const auto send = ctx.Attr<std::vector<int64_t>>("send_counts");
  const auto recv = ctx.Attr<std::vector<int64_t>>("recv_counts");
  if (ctx.Input(0).rank() == 0 || send.empty() || send.size() != recv.size())
    return ctx.Error("needs x with a dim 0 and send_counts/recv_counts of one length (the group size)");
  int64_t sent = 0, received = 0;
  for (size_t r = 0; r < send.size(); ++r) {
    if (send[r] < 0 || recv[r] < 0) return ctx.Error("counts must not be negative");
    sent += send[r];
    received += recv[r];
  }
  Shape out = ctx.Input(0).shape;
  if (out[0] >= 0 && out[0] != sent) return ctx.Error("dim 0 of x is {}, send_counts sum to {}", out[0], sent);
  out[0] = received;
  ctx.Output(0).SetShape(out);
  return {};
}

OpDef Collective(const char* type, bool in_input_memory = false) {
  return std::move(OpDef(type)
                       .TypeVar("T", dtypes::kNumeric)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("group", AttrType::kString)
                       .Communicates(in_input_memory));
}

// Symbolic forms (the node is verified; see ops/symbolic_infer.h): dim 0 scales with the group.
InferSymbolicFn InferSymbolicDim0(SymExpr::Op op) {
  return [op](SymbolicInferContext& ctx) {
    SymDims out = ctx.Dims(0);
    if (out.empty()) return;
    out[0] = SymExpr::Combine(op, out[0], SymExpr::Constant(ctx.Attr<int64_t>("rank_size")));
    ctx.SetOutput(0, std::move(out));
  };
}

void InferSymbolicAllToAll(SymbolicInferContext& ctx) {
  SymDims out = ctx.Dims(0);
  if (out.empty()) return;
  int64_t received = 0;
  for (int64_t count : ctx.Attr<std::vector<int64_t>>("recv_counts")) received += count;
  out[0] = SymExpr::Constant(received);
  ctx.SetOutput(0, std::move(out));
}

}  // namespace

void RegisterCollectiveOps(OpRegistry& r) {
  // GE's copy op: what the copy-insertion pass puts before a collective that works in its
  // input's memory. Unlike Identity, no pass removes it.
  (void)r.Register(OpDef("TensorMove")
                       .TypeVar("T", dtypes::kAll)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = x, a copy in bytes of its own (never removed as a no-op)")
                       .Build());
  (void)r.Register(Collective("HcomAllReduce", true)
                       .Attr("reduction", AttrType::kString, std::string("sum"))
                       .Infer([](InferContext& ctx) -> Status {
                         GE_RETURN_IF_ERROR(CheckReduction(ctx));
                         return InferSameAsFirstInput(ctx);
                       })
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("x reduced elementwise over every rank of `group` (sum, avg, product, min, max)")
                       .Build());
  (void)r.Register(Collective("HcomAllGather")
                       .Attr("rank_size", AttrType::kInt)
                       .Infer(InferAllGather)
                       .InferSymbolic(InferSymbolicDim0(SymExpr::Op::kMul))
                       .Doc("x of every rank of `group` concatenated along dim 0, in rank order")
                       .Build());
  (void)r.Register(Collective("HcomReduceScatter")
                       .Attr("reduction", AttrType::kString, std::string("sum"))
                       .Attr("rank_size", AttrType::kInt)
                       .Infer(InferReduceScatter)
                       .InferSymbolic(InferSymbolicDim0(SymExpr::Op::kFloorDiv))
                       .Doc("x reduced over the ranks, then split along dim 0: this rank's part")
                       .Build());
  (void)r.Register(Collective("HcomBroadcast", true)
                       .Attr("root_rank", AttrType::kInt)
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("x of rank `root_rank` on every rank")
                       .Build());
  (void)r.Register(Collective("HcomAllToAllV")
                       .Attr("send_counts", AttrType::kListInt)
                       .Attr("recv_counts", AttrType::kListInt)
                       .Infer(InferAllToAll)
                       .InferSymbolic(InferSymbolicAllToAll)
                       .Doc("rows of x sent to each rank (send_counts, in rank order) and received from each "
                            "(recv_counts): torch's all_to_all_single")
                       .Build());
}

}  // namespace ge
