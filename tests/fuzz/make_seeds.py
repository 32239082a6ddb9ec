"""Seed corpora for the fuzz harnesses, from real exports and dumps: small models exported with
dynamo_export (model files, static and with symbolic sizes; their weights inline), their converted graphs as text, .npy inputs,
and op-plugin definitions in the example plugin's style. Usage: make_seeds.py OUT_DIR"""
import os
import pathlib
import sys
import tempfile

import numpy as np
import torch

import torchair_ge


class TinyAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.out, self.norm = torch.nn.Linear(16, 48), torch.nn.Linear(16, 16), torch.nn.LayerNorm(16)

    def forward(self, x, mask):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        scores = (q @ k.transpose(-1, -2)) / 4 + mask
        return self.out(torch.softmax(scores, dim=-1) @ v) + x


def models():
    torch.manual_seed(0)
    yield "mlp", torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)), (torch.randn(2, 8),)
    yield "conv", torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                      torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()), (torch.randn(1, 3, 8, 8),)
    yield "attention", TinyAttention(), (torch.randn(2, 5, 16), torch.zeros(2, 5, 5))


PLUGIN_SEEDS = [
    b"SoftShrink\0x\0y\0lambd:float",
    b"ScaleAdd\0x,bias?\0y\0alpha:float,mode:string,axes:list_int,keep:bool",
    b"TwoOut\0a,b\0y,z\0n:int,w:list_float",
]


SIZE_EXPR_SEEDS = ["2*s0+1", "(1+(-1+s1)//2)*(64+64*(-1+s1)//4)<=20480", "max(s0, min(s1, 8))-s2%3", "s0!=s1"]


def main(out):
    out = pathlib.Path(out)
    for name in ("model_file", "graph_text", "op_plugin", "npy", "size_expr"):
        (out / name).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, inputs in models():
            result = torchair_ge.dynamo_export(*inputs, model=model.eval(), export_path=os.path.join(tmp, name))
            (out / "model_file" / f"{name}.tgm").write_bytes(pathlib.Path(result.model_path).read_bytes())
            if name != "conv":  # with symbolic sizes: a size template (symbols, sites, guards)
                result = torchair_ge.dynamo_export(*inputs, model=model.eval(), dynamic=True,
                                                   export_path=os.path.join(tmp, name + "_dynamic"))
                (out / "model_file" / f"{name}_dynamic.tgm").write_bytes(pathlib.Path(result.model_path).read_bytes())
            (out / "graph_text" / f"{name}.txt").write_text(pathlib.Path(result.pbtxt_path).read_text())
            for k, path in enumerate(result.input_paths):
                (out / "npy" / f"{name}_{k}.npy").write_bytes(pathlib.Path(path).read_bytes())
    np.save(out / "npy" / "bool.npy", np.array([True, False]))
    np.save(out / "npy" / "scalar.npy", np.float64(2.5))
    for k, seed in enumerate(PLUGIN_SEEDS):
        (out / "op_plugin" / f"def_{k}").write_bytes(seed)
    for k, seed in enumerate(SIZE_EXPR_SEEDS):
        (out / "size_expr" / f"expr_{k}").write_text(seed)
    print(f"fuzz seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
