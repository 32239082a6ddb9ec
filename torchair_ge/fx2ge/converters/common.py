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


def common_dtype(a, b):
    """torch's promoted dtype of two operands (IR values or Python scalars). An IR value is
    probed by an empty tensor of its rank, so 0-d values count as scalars, as in torch."""
    def probe(v):
        if isinstance(v, ge.Tensor):
            return torch.empty([0] * len(v.shape) if len(v.shape) else (), dtype=ge.ge_to_torch(v.dtype))
        return v
    return torch.result_type(probe(a), probe(b))


def int_vector(values):
    return ge.Const([int(v) for v in values], torch.int64)


_RANGE_DTYPES = (torch.int32, torch.int64, torch.float32, torch.float64)


def arange(start, end, step=1, dtype=torch.int64):
    """torch.arange(start, end, step) as a Range node over scalar constants (not a constant of
    the values: a graph with symbolic sizes then differs between sizes only in those scalars,
    fx2ge/size_template.py). Folded into a constant when the graph is compiled."""
    compute = dtype if dtype in _RANGE_DTYPES else torch.float32
    values = ge.Range(*(ge.Const(v, compute) for v in (start, end, step)))
    return values if compute == dtype else ge.Cast(values, dtype)


def normalize_dim(dim, rank):
    return dim + rank if dim < 0 else dim


def pair(value):
    """torch's int-or-list window arguments as a pair."""
    if isinstance(value, int):
        return [value, value]
    value = list(value)
    return value * 2 if len(value) == 1 else value
