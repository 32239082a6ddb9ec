"""python -m torchair_ge.debug compare TARGET [--rtol R] [--atol A] [--dump-dir D]

TARGET is `path/to/file.py:function` or `package.module:function`; the function takes no
arguments and returns (model, inputs), inputs a tuple. Prints the CompareReport; the exit status
is 1 when some node differs beyond tolerance, 0 otherwise."""
import argparse
import importlib
import runpy
import sys

from torchair_ge.debug.compare import compare_with_eager


def load_target(target):
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise SystemExit(f"target {target!r} must look like file.py:function or module:function")
    namespace = runpy.run_path(where) if where.endswith(".py") else vars(importlib.import_module(where))
    if name not in namespace:
        raise SystemExit(f"{where} defines no {name!r}")
    made = namespace[name]()
    if not (isinstance(made, tuple) and len(made) == 2):
        raise SystemExit(f"{target} must return (model, inputs)")
    model, inputs = made
    return model, tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m torchair_ge.debug", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    compare = sub.add_parser("compare", help="name the first FX node whose graph output differs from eager")
    compare.add_argument("target", help="file.py:function or module:function returning (model, inputs)")
    compare.add_argument("--rtol", type=float, default=1e-3)
    compare.add_argument("--atol", type=float, default=1e-3)
    compare.add_argument("--dump-dir", default=None, help="where the data dump goes (default: a temporary dir)")
    args = parser.parse_args(argv)
    model, inputs = load_target(args.target)
    report = compare_with_eager(model, *inputs, rtol=args.rtol, atol=args.atol, dump_dir=args.dump_dir)
    print(report)
    print(f"data dump: {report.dump_dir}")
    return 1 if report.first_mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
