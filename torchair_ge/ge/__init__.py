"""The Python face of the engine's graph builder.

Every op type registered in the engine is available as a function (`ge.Add(x, y)`); `Const`
and `Cast` take torch dtypes too."""
from torchair_ge._C import DataType, Format
from torchair_ge._C import EsTensor as Tensor
from torchair_ge._C import GraphBuilder
from torchair_ge.ge.dtypes import ge_to_torch, torch_to_ge
from torchair_ge.ge.graph import current_builder, graph_context
from torchair_ge._C import op_types
from torchair_ge.ge.ops import Cast, Const, TensorSpec, custom_op, op, op_function

__all__ = ["DataType", "Format", "Tensor", "TensorSpec", "GraphBuilder", "graph_context", "current_builder", "op",
           "custom_op", "op_types", "Const", "Cast", "torch_to_ge", "ge_to_torch"]


def __getattr__(name):
    if name[:1].isupper():
        return op_function(name)
    raise AttributeError(f"module 'torchair_ge.ge' has no attribute {name!r}")
