"""The decomposition table given to AOT autograd: ops without a native converter that break
down into ops that have one. Ops we convert natively are deliberately kept whole."""
import torch
from torch._decomp import get_decompositions

aten = torch.ops.aten

# Only ops whose decompositions land on converted ops: decomposing others early would make
# errors name an inner op instead of the user's. Grows with op coverage.
_DECOMPOSED = [
    aten.square,
    aten._safe_softmax,  # softmax, then rows that are all -inf become 0 (SDPA's math path)
    aten._weight_norm_interface,  # v * g / |v| (wav2vec2-style positional convolutions)
]


def default_decompositions():
    return get_decompositions(_DECOMPOSED)
