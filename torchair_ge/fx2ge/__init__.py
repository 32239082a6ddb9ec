from torchair_ge.fx2ge.registry import register_fx_node_ge_converter, lookup_converter

__all__ = ["register_fx_node_ge_converter", "lookup_converter"]
