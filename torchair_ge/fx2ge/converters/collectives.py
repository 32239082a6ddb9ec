"""torch.distributed's functional collectives (what Dynamo traces for `funcol.*` and for in-graph
`dist.all_reduce(t)`) as the engine's Hcom ops, run on the process group the graph names. The
engine's kernels complete each collective inside its task, so `wait_tensor` of a value made in the
graph has nothing left to wait for: it is the value itself. `wait_tensor` of a graph input (a
collective issued in eager or in another graph) is done by the caller before the run, through
c10d's work registry (ConvertedGraph.waited_inputs)."""
import torch

from torchair_ge import ge
from torchair_ge.fx2ge.registry import register_fx_node_ge_converter

c10d = torch.ops._c10d_functional

_REDUCTIONS = {"sum": "sum", "avg": "avg", "product": "product", "min": "min", "max": "max"}


def _group(group_name):
    """The group's registered name; a converter leaves anything else (a group object) alone."""
    return group_name if isinstance(group_name, str) else None


@register_fx_node_ge_converter(c10d.all_reduce.default)
def convert_all_reduce(input, reduce_op, group_name, *, meta_outputs=None):
    reduction, group = _REDUCTIONS.get(reduce_op.lower()), _group(group_name)
    if reduction is None or group is None:
        return NotImplemented  # premul_sum and friends: refused with the collectives' message
    return ge.HcomAllReduce(input, reduction=reduction, group=group)


@register_fx_node_ge_converter(c10d.all_gather_into_tensor.default)
def convert_all_gather(input, group_size, group_name, *, meta_outputs=None):
    group = _group(group_name)
    if group is None or not input.shape:
        return NotImplemented
    return ge.HcomAllGather(input, rank_size=int(group_size), group=group)


@register_fx_node_ge_converter(c10d.reduce_scatter_tensor.default)
def convert_reduce_scatter(input, reduce_op, group_size, group_name, *, meta_outputs=None):
    reduction, group = _REDUCTIONS.get(reduce_op.lower()), _group(group_name)
    if reduction is None or group is None or not input.shape:
        return NotImplemented
    return ge.HcomReduceScatter(input, reduction=reduction, rank_size=int(group_size), group=group)


@register_fx_node_ge_converter(c10d.broadcast.default)
def convert_broadcast(input, src, group_name, *, meta_outputs=None):
    group = _group(group_name)
    if group is None:
        return NotImplemented
    return ge.HcomBroadcast(input, root_rank=int(src), group=group)


@register_fx_node_ge_converter(c10d.all_to_all_single.default)
def convert_all_to_all_single(input, output_split_sizes, input_split_sizes, group_name, *, meta_outputs=None):
    group = _group(group_name)
    if group is None or not input.shape or not all(isinstance(n, int) for n in output_split_sizes + input_split_sizes):
        return NotImplemented
    return ge.HcomAllToAllV(input, send_counts=[int(n) for n in input_split_sizes],
                            recv_counts=[int(n) for n in output_split_sizes], group=group)


@register_fx_node_ge_converter(c10d.wait_tensor.default)
def convert_wait_tensor(tensor, *, meta_outputs=None):
    return tensor
