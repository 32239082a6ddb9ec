"""Collectives inside a compiled graph (docs/distributed.md): a tensor-parallel MLP block split
over the ranks -- the first layer by columns, the second by rows, one all_reduce joining the
partial sums -- compiled with the torchair_ge backend on the gloo process group, checked against
the whole block computed in one process.

    torchrun --nproc_per_node=2 examples/distributed.py
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

import torchair_ge  # noqa: F401  (registers the "torchair_ge" backend)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same full weights on every rank
    hidden, inner = 64, 256
    w1, w2 = torch.randn(inner, hidden) / hidden**0.5, torch.randn(hidden, inner) / inner**0.5
    x = torch.randn(8, hidden)
    shard = inner // world
    w1_part = w1[rank * shard:(rank + 1) * shard]     # this rank's columns of the first layer
    w2_part = w2[:, rank * shard:(rank + 1) * shard]  # and the matching rows of the second

    def block(x):
        partial = torch.relu(x @ w1_part.t()) @ w2_part.t()
        return funcol.all_reduce(partial, "sum", dist.group.WORLD) + x

    compiled = torch.compile(block, backend="torchair_ge", dynamic=False)
    out = compiled(x)
    whole = torch.relu(x @ w1.t()) @ w2.t() + x
    torch.testing.assert_close(out, whole, rtol=1e-4, atol=1e-4)
    if rank == 0:
        print(f"tensor-parallel MLP block on {world} ranks, compiled with torchair_ge: equal to the whole block "
              f"(max abs diff {(out - whole).abs().max().item():.2e})")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
