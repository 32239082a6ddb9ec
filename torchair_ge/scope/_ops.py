"""The operators the scope API traces into graphs. scope_enter/scope_exit return nothing and
are marked side-effecting, so Dynamo and AOT autograd keep them in program order; the
converter (fx2ge/interpreter.py) labels every node made between them."""
import torch
from torch.fx.node import has_side_effect

USER_STREAM_KEY = "_user_stream_label"


# str[] arguments: torch.library.custom_op cannot infer them, so these two are defined by schema.
_lib = torch.library.Library("torchair_ge", "FRAGMENT")
_lib.define("scope_enter(str[] keys, str[] values) -> ()")
_lib.define("scope_exit() -> ()")


def _scope_enter(keys, values):
    if len(keys) != len(values):
        raise ValueError(f"scope_enter: {len(keys)} keys but {len(values)} values")


_lib.impl("scope_enter", _scope_enter, "CompositeExplicitAutograd")
_lib.impl("scope_exit", lambda: None, "CompositeExplicitAutograd")


@torch.library.custom_op("torchair_ge::wait_tensor", mutates_args=())
def wait_tensor(x: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    return x.clone()


@wait_tensor.register_fake
def _(x, dependency):
    return torch.empty_like(x)


def _wait_backward(ctx, grad):
    return grad, None


wait_tensor.register_autograd(_wait_backward)

for _op in (torch.ops.torchair_ge.scope_enter.default, torch.ops.torchair_ge.scope_exit.default):
    has_side_effect(_op)

SCOPE_ENTER = torch.ops.torchair_ge.scope_enter.default
SCOPE_EXIT = torch.ops.torchair_ge.scope_exit.default
WAIT_TENSOR = torch.ops.torchair_ge.wait_tensor.default


class npu_stream_switch:  # noqa: N801  (TorchAir's name)
    """`with npu_stream_switch(tag):` -- the ops inside run on the stream labelled `tag`."""

    def __init__(self, stream_tag: str, stream_priority: int = 0):
        if not isinstance(stream_tag, str) or not stream_tag:
            raise ValueError(f"npu_stream_switch: stream_tag must be a non-empty string, got {stream_tag!r}")
        self.keys = [USER_STREAM_KEY, "_user_stream_priority"]
        self.values = [stream_tag, str(int(stream_priority))]

    def __enter__(self):
        torch.ops.torchair_ge.scope_enter(self.keys, self.values)
        return self

    def __exit__(self, *exc):
        torch.ops.torchair_ge.scope_exit()
        return False


def npu_wait_tensor(self: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    """`self`, whose readers in a compiled graph run only after `dependency` has been computed."""
    return torch.ops.torchair_ge.wait_tensor(self, dependency)
