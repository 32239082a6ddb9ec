"""Op plugins: new IR ops (prototype, shape inference, CPU kernel) from a user's own shared
library, written in C against one header (docs/custom_ops.md, examples/op_plugin/soft_shrink.c)."""
import os

from torchair_ge import _C


def get_include():
    """The directory holding torchair_ge/op_plugin.h, for `-I` when building a plugin."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def load_op_plugin(path):
    """Loads the plugin library at `path` (once per process) and returns the op types it
    registered; they are then ordinary engine ops: `ge.<Type>(...)` or `ge.custom_op("<Type>", ...)`."""
    return list(_C.load_op_plugin(os.fspath(path)))
