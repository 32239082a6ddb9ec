"""Input mutations after functionalization. With keep_inference_input_mutations, AOT autograd
leaves `copy_(input, new_value)` at the end of the graph for every input the model mutates.

- In general that becomes Assign(input, new_value): the new value is computed, then written
  into the caller's tensor.
- The static KV-cache pattern `copy_(input, index_copy(input, dim, index, source))` becomes one
  InplaceIndexCopy on the input: only the new rows move, never the whole cache.
- A functionalized custom op that mutates graph inputs writes them in their own memory
  (custom_ops.py): the copy_ back is dropped.

The engine's prepare stage orders every reader of the old value before the write."""
import operator

import torch

from torchair_ge.fx2ge.custom_ops import FUNCTIONALIZED, inputs_updated_in_place

aten = torch.ops.aten


def _depends_on(node, ancestor):
    """Whether `ancestor` is among the nodes `node` is computed from."""
    seen, stack = set(), list(node.all_input_nodes)
    while stack:
        n = stack.pop()
        if n is ancestor:
            return True
        if n not in seen:
            seen.add(n)
            stack.extend(n.all_input_nodes)
    return False


def _written_by_custom_op(source, target):
    """Whether `source` is a functionalized custom op's update of graph input `target` made in
    the input's own memory (custom_ops.inputs_updated_in_place)."""
    if not isinstance(source, torch.fx.Node) or source.target is not operator.getitem:
        return False
    node, index = source.args
    return node.target in FUNCTIONALIZED and inputs_updated_in_place(node).get(index) is target


def plan_inplace_updates(gm):
    """{index_copy node: the placeholder it updates in place}, and the copy_ nodes that this (or a
    custom op updating a graph input in place) makes redundant."""
    inplace, absorbed = {}, set()
    for node in gm.graph.nodes:
        if node.target is not aten.copy_.default or node.args[0].op != "placeholder":
            continue
        target, source = node.args[0], node.args[1]
        if _written_by_custom_op(source, target):
            absorbed.add(node)
            continue
        if not isinstance(source, torch.fx.Node) or source.target is not aten.index_copy.default:
            continue
        if source.args[0] is not target or source in inplace:
            continue
        old_value_readers = [u for u in target.users if u not in (source, node)]
        if any(_depends_on(reader, source) for reader in old_value_readers):
            continue  # a reader needs the old and the new value: compute the update functionally
        inplace[source] = target
        absorbed.add(node)
    return inplace, absorbed
