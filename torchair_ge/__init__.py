"""torchair_ge: a torch.compile backend with a GE-style graph engine and a CPU reference device.

    import torch, torchair_ge
    model = torch.compile(model, backend=torchair_ge.get_npu_backend())
"""
import torch  # noqa: F401  (loads libtorch before the extension)

from torchair_ge import ge, inference, scope
from torchair_ge.logging_setup import set_log_level, setup as _setup_logging
from torchair_ge.backend import get_compiler, get_npu_backend
from torchair_ge.configs import CompilerConfig
from torchair_ge.export import dynamo_export, load_model
from torchair_ge.fx2ge import register_fx_node_ge_converter
from torchair_ge.patterns import register_replacement
from torchair_ge.plugins import get_include, load_op_plugin

__version__ = "0.1.0"
_setup_logging()

__all__ = ["CompilerConfig", "get_compiler", "get_npu_backend", "register_fx_node_ge_converter", "ge", "register_replacement",
           "inference", "scope", "set_log_level", "load_op_plugin", "get_include", "dynamo_export", "load_model"]
