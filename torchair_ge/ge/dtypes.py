"""torch.dtype <-> engine DataType."""
import torch

from torchair_ge._C import DataType

_TORCH_TO_GE = {
    torch.float32: DataType.DT_FLOAT,
    torch.float16: DataType.DT_FLOAT16,
    torch.bfloat16: DataType.DT_BF16,
    torch.float64: DataType.DT_DOUBLE,
    torch.int8: DataType.DT_INT8,
    torch.int16: DataType.DT_INT16,
    torch.int32: DataType.DT_INT32,
    torch.int64: DataType.DT_INT64,
    torch.uint8: DataType.DT_UINT8,
    torch.bool: DataType.DT_BOOL,
}
_GE_TO_TORCH = {v: k for k, v in _TORCH_TO_GE.items()}


def torch_to_ge(dtype):
    if isinstance(dtype, DataType):
        return dtype
    try:
        return _TORCH_TO_GE[dtype]
    except KeyError:
        raise TypeError(f"torch dtype {dtype} is not supported by torchair_ge") from None


def ge_to_torch(dtype):
    return _GE_TO_TORCH[dtype]
