from torchair_ge.configs.compiler_config import CompilerConfig

__all__ = ["CompilerConfig"]
