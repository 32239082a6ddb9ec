"""TorchAir's scope API: put ops on a stream of their own, and make a tensor's readers wait.

    from torchair_ge.scope import npu_stream_switch, npu_wait_tensor

    with npu_stream_switch("expert1"):
        a = expert1(x)                 # on stream "expert1", beside the default streams
    b = expert2(x)
    out = npu_wait_tensor(b, a) + a    # readers of the returned b also wait for a

Both work in eager too (the stream switch does nothing there; npu_wait_tensor returns a copy).
In a compiled graph the ops made inside the `with` block carry the label, and the engine runs
every label on a stream of its own (docs/streams.md). `stream_priority` is accepted for
TorchAir's signature; the CPU device has no stream priorities.
"""
from torchair_ge.scope._ops import npu_stream_switch, npu_wait_tensor

__all__ = ["npu_stream_switch", "npu_wait_tensor"]
