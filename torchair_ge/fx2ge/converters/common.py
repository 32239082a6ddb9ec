"""Helpers shared by converters: dtype promotion and constants."""
import torch

from torchair_ge import ge


def to_dtype(value, dtype):
    """An IR value of `dtype`: IR values are cast if needed, Python scalars become constants."""
    if isinstance(value, ge.Tensor):
        return ge.Cast(value, dtype)
    return ge.Const(value, dtype)


def promote(meta_outputs, *values):
    """Casts every operand to the op's result dtype, which torch's meta already computed."""
    return [to_dtype(v, meta_outputs.dtype) for v in values]


def int_vector(values):
    return ge.Const([int(v) for v in values], torch.int64)


def normalize_dim(dim, rank):
    return dim + rank if dim < 0 else dim


def pair(value):
    """torch's int-or-list window arguments as a pair."""
    if isinstance(value, int):
        return [value, value]
    value = list(value)
    return value * 2 if len(value) == 1 else value
