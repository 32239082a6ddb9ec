"""Built-in converters, one module per op family. Importing this package registers them."""
from torchair_ge.fx2ge.converters import (  # noqa: F401
    activation,
    attention,
    collectives,
    comparison,
    composite,
    conv_pool,
    elementwise,
    foreach,
    indexing,
    math_extra,
    matmul,
    norm,
    reduce,
    selection,
    shape,
)
