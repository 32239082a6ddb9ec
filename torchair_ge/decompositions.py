"""The decomposition table given to AOT autograd: ops without a native converter that break
down into ops that have one. Ops we convert natively are deliberately kept whole."""
import torch
from torch._decomp import get_decompositions

aten = torch.ops.aten

_DECOMPOSED = [
    aten.silu,
    aten.hardtanh,
    aten.mv,
    aten.addmv,
    aten.dot,
    aten.square,
    aten.elu,
    aten.leaky_relu,
    aten.hardsigmoid,
    aten.hardswish,
    aten.softplus,
    aten._log_softmax,
    aten.native_dropout,
    aten.expand_as,
]


def default_decompositions():
    return get_decompositions(_DECOMPOSED)
