class ConversionError(RuntimeError):
    """An FX node could not be turned into IR: names the node, its op and where it came from."""


class UnsupportedOpError(ConversionError):
    """ATen ops with no converter. `missing_ops` lists every one in the graph (as strings such
    as "aten.cumsum.default"), so a single compile names all that a model needs."""

    def __init__(self, message, missing_ops=()):
        super().__init__(message)
        self.missing_ops = list(missing_ops)


class DynamicShapeError(ConversionError):
    """A symbolic size the backend cannot handle (a data-dependent size), or a call whose inputs
    do not fit the sizes the graph was compiled for."""


class NotProduced:
    """Placeholder for an op output the IR does not compute (e.g. max-pool indices).
    Using it raises a ConversionError that says which output it was."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return f"NotProduced({self.what})"
