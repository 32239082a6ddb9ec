"""The graph being built: converters and ge.* op functions add to the innermost active builder."""
import contextlib
import threading

_state = threading.local()


@contextlib.contextmanager
def graph_context(builder):
    stack = _state.__dict__.setdefault("stack", [])
    stack.append(builder)
    try:
        yield builder
    finally:
        stack.pop()


def current_builder():
    stack = getattr(_state, "stack", None)
    if not stack:
        raise RuntimeError("no graph is being built: use torchair_ge.ge.graph_context(GraphBuilder(...))")
    return stack[-1]
