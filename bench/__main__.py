"""python -m bench [--models a,b] [--quick] [--threads N] [--systems eager,inductor,...] [--no-training] [--out DIR]"""
import argparse
import os
import sys

from bench import models as zoo
from bench import report, runner


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--models", help=f"comma-separated subset of: {', '.join(zoo.ZOO)}")
    parser.add_argument("--systems", help="comma-separated subset of: eager, inductor, torchair_ge, onnxruntime")
    parser.add_argument("--quick", action="store_true", help=f"few repetitions, models {runner.QUICK_MODELS} by default")
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads (default: all cores)")
    parser.add_argument("--no-overhead", action="store_true", help="skip the per-task host-overhead benchmark")
    parser.add_argument("--no-dynamic", action="store_true", help="skip the dynamic-shape workloads")
    parser.add_argument("--no-generate", action="store_true",
                        help="skip the transformers generate() workload, the attention benchmark and transformers' models")
    parser.add_argument("--no-training", action="store_true", help="skip the training-step workloads")
    parser.add_argument("--no-streams", action="store_true",
                        help="skip the streams vs one stream and tensor-parallel benchmarks")
    parser.add_argument("--no-warm-start", action="store_true",
                        help="skip the fresh-process first calls with empty and filled caches")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"), help="output directory")
    args = parser.parse_args(argv)
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()] if s else None  # noqa: E731
    results = runner.run(split(args.models), args.quick, args.threads, split(args.systems), not args.no_overhead,
                         dynamic_shapes=not args.no_dynamic, generation=not args.no_generate,
                         training=not args.no_training, streams=not args.no_streams,
                         warm_start=not args.no_warm_start)
    paths = report.write(results, args.out, "quick" if args.quick else "latest")
    full_default_run = not (args.quick or args.models or args.systems or args.no_overhead or args.no_dynamic
                            or args.no_generate or args.no_training or args.no_streams or args.no_warm_start)
    doc = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "performance.md")
    if full_default_run and os.path.exists(doc) and report.update_doc(results, doc):
        paths["doc"] = doc
    print(report.markdown(results))
    print("wrote " + ", ".join(paths.values()))
    bad = [(m["name"], r["system"]) for m in results["models"] for r in m["systems"] if r["status"] in ("wrong", "error")]
    bad += [(f"training {w['name']}", r["system"]) for w in results.get("training", {}).get("workloads", [])
            for r in w["systems"] if "error" in r]
    if results.get("transformers_zoo"):
        from bench import transformers_zoo
        bad += transformers_zoo.wrong_training(results["transformers_zoo"])
    if bad:
        print(f"FAILED: outputs wrong or errors for {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
