"""The decomposition table given to AOT autograd: ops without a native converter that break
down into ops that have one. Ops we convert natively are deliberately kept whole."""
import torch
from torch._decomp import get_decompositions

aten = torch.ops.aten

# Only ops whose decompositions land on converted ops: decomposing others early would make
# errors name an inner op instead of the user's. Grows with op coverage.
_DECOMPOSED = [
    aten.square,
    aten._weight_norm_interface,  # v * g / |v| (wav2vec2-style positional convolutions)
    # Training: backward ops and training-mode forwards that break down into elementwise ops and
    # reductions, which auto-fusion then fuses (as Inductor lowers them).
    aten.threshold_backward,
    aten.gelu_backward,
    aten.silu_backward,
    aten.sigmoid_backward,
    aten.tanh_backward,
    aten.hardtanh_backward,
    aten.leaky_relu_backward,
    aten.elu_backward,
    aten._softmax_backward_data,
    aten._log_softmax_backward_data,
    aten.native_layer_norm_backward,
    aten.native_batch_norm_backward,
    aten._native_batch_norm_legit_functional,
    aten.embedding_dense_backward,
    aten._unsafe_masked_index_put_accumulate,  # embedding's backward: IndexPut(accumulate)
    aten.nll_loss_forward,
    aten.nll_loss_backward,
    aten.mse_loss,
    aten.mse_loss_backward,
    aten.native_dropout_backward,
    aten.max_pool2d_with_indices_backward,
    aten.select_backward,  # zeros, then select_scatter
    aten.slice_backward,  # zeros, then slice_scatter
]


def default_decompositions():
    return get_decompositions(_DECOMPOSED)
