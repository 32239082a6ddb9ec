"""Dim gears (TorchAir's `torchair.inference.set_dim_gears`): a dimension that only takes a
few known sizes compiles one static engine instance per size combination, up front.

    torchair_ge.inference.set_dim_gears(x, {0: [2, 4, 8]})
    compiled = torch.compile(model, backend=torchair_ge.get_npu_backend())
    compiled(x)   # compiles the instances for batch 2, 4 and 8; any of them runs without compiling

`config.inference_config.dynamic_gears_merge_policy` combines the gears of several dims:
"zip" (the default: the i-th gear of every dim together, lists of equal length) or "product"
(every combination). At most 100 combinations; each dim needs at least 2 gears, none below 2
(Dynamo specializes sizes 0 and 1). A size outside [smallest gear, largest gear] fails
Dynamo's guard and recompiles (a new graph, with the same gears); a size inside the range that
is not a gear is an error naming the gears (docs/dynamic_shapes.md)."""
import itertools

import torch
import torch._dynamo

_GEARS_ATTR = "_torchair_ge_dim_gears"
MAX_GEAR_COMBINATIONS = 100


def set_dim_gears(tensor, dim_gears):
    """Marks the dims of `tensor` in `dim_gears` ({dim: [sizes]}) dynamic, limited to those sizes."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"set_dim_gears takes a tensor, got {type(tensor).__name__}")
    if not isinstance(dim_gears, dict) or not dim_gears:
        raise ValueError(f"dim_gears must be a non-empty dict {{dim: [sizes]}}, got {dim_gears!r}")
    checked = {}
    for dim, gears in dim_gears.items():
        if isinstance(dim, bool) or not isinstance(dim, int) or not -tensor.dim() <= dim < tensor.dim():
            raise ValueError(f"set_dim_gears: dim {dim!r} is not a dim of a {tensor.dim()}-d tensor")
        dim %= tensor.dim()
        if not isinstance(gears, (list, tuple)) or len(gears) < 2:
            raise ValueError(f"set_dim_gears: dim {dim} needs a list of at least 2 sizes, got {gears!r}")
        if any(isinstance(g, bool) or not isinstance(g, int) or g < 2 for g in gears):
            raise ValueError(f"set_dim_gears: dim {dim}: every gear must be an int >= 2 (Dynamo specializes 0 "
                             f"and 1), got {list(gears)}")
        if len(set(gears)) != len(gears):
            raise ValueError(f"set_dim_gears: dim {dim}: repeated gears in {list(gears)}")
        if tensor.shape[dim] not in gears:
            raise ValueError(f"set_dim_gears: dim {dim} of this tensor is {tensor.shape[dim]}, not one of its "
                             f"gears {list(gears)}")
        checked[dim] = list(gears)
    setattr(tensor, _GEARS_ATTR, checked)
    torch._dynamo.mark_dynamic(tensor, list(checked))


def dim_gears_of(tensor):
    return getattr(tensor, _GEARS_ATTR, None)


def gear_symbols(gm, example_inputs):
    """Symbol -> gears for the geared dims of Dynamo's inputs (`gm` is Dynamo's graph, whose
    placeholders carry the symbolic example values). Adds the range guard of each: a size
    outside [min, max] of its gears makes Dynamo recompile instead of calling this graph."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    symbols = {}
    for node, real in zip(placeholders, example_inputs):
        gears = dim_gears_of(real) if isinstance(real, torch.Tensor) else None
        fake = node.meta.get("example_value")
        if not gears or not isinstance(fake, torch.Tensor):
            continue
        for dim, sizes in gears.items():
            size = fake.shape[dim]
            if not isinstance(size, torch.SymInt):
                raise ValueError(f"set_dim_gears: dim {dim} of input '{node.name}' was specialized by Dynamo "
                                 f"(size {size}); its gears {sizes} cannot apply")
            torch._check(size >= min(sizes))
            torch._check(size <= max(sizes))
            symbols[size.node.expr] = sizes
    return symbols


def gear_combinations(symbols, gears, policy):
    """The allowed keys (tuples in `symbols` order; None where a symbol has no gears) under the
    merge policy "zip" or "product"; raises ValueError past 100 combinations or for zip lists of
    different lengths."""
    geared = [s for s in symbols if s in gears]
    lists = [gears[s] for s in geared]
    if policy == "zip":
        if len({len(g) for g in lists}) > 1:
            raise ValueError(f"dynamic_gears_merge_policy 'zip' needs gear lists of one length, got "
                             f"{ {str(s): gears[s] for s in geared} }")
        combos = list(zip(*lists))
    else:
        combos = list(itertools.product(*lists))
    if len(combos) > MAX_GEAR_COMBINATIONS:
        raise ValueError(f"{len(combos)} gear combinations ({policy} of {[len(g) for g in lists]} gears); "
                         f"at most {MAX_GEAR_COMBINATIONS}")
    position = {s: k for k, s in enumerate(geared)}
    return [tuple(combo[position[s]] if s in position else None for s in symbols) for combo in combos]


from torchair_ge.cache_compile import cache_compile  # noqa: E402, F401  (after the gear helpers backend.py imports)
