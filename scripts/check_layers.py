#!/usr/bin/env python3
"""The house rules of csrc/, checked on every build (CMake target `check_layers`) and by lint.

Each engine layer may include only itself and the layers listed for it (transitively closed
below); the engine includes no torch, pybind11 or Python header; only devices and python see
torch. A violation names the file, the line and the rule, and exits 1.
Usage: check_layers.py [ROOT] [--stamp FILE] (the stamp is touched on success, for CMake)."""
import pathlib
import re
import sys

# Engine layers, lowest first, with the layers each may include directly. docs/architecture.md
# draws this graph; CMakeLists.txt links one library per layer in the same order.
LAYERS = {
    "base": [],
    "ir": ["base"],
    "ops": ["ir"],
    "es": ["ops"],
    "symbolic": ["ops"],
    "serialize": ["symbolic"],
    "passes": ["ops"],
    "runtime": ["serialize"],
    "autofuse": ["passes", "runtime"],
    "compiler": ["autofuse"],
    "session": ["compiler"],  # csrc/ge/session.*
}
FOREIGN = re.compile(r'#include\s*[<"](torch/|ATen/|c10/|pybind11/|Python\.h)')
GE_INCLUDE = re.compile(r'#include\s*"ge/([a-z_]+)/')


def allowed(layer):
    """The layers `layer` may include: itself and everything below it."""
    seen, todo = {layer}, list(LAYERS[layer])
    while todo:
        below = todo.pop()
        if below not in seen:
            seen.add(below)
            todo.extend(LAYERS[below])
    return seen


def layer_of(path, root):
    parts = path.relative_to(root / "csrc" / "ge").parts
    return "session" if len(parts) == 1 else parts[0]


def check(root):
    problems = []
    engine = root / "csrc" / "ge"
    for path in sorted(p for p in engine.rglob("*") if p.suffix in (".h", ".cc")):
        layer = layer_of(path, root)
        if layer not in LAYERS:
            problems.append(f"{path.relative_to(root)}: directory '{layer}' is not a layer of scripts/check_layers.py")
            continue
        ok = allowed(layer)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if FOREIGN.search(line):
                problems.append(f"{path.relative_to(root)}:{number}: the engine includes no torch/pybind11/Python "
                                f"header: {line.strip()}")
            match = GE_INCLUDE.search(line)
            if match and match.group(1) not in ok:
                problems.append(f"{path.relative_to(root)}:{number}: layer '{layer}' may not include layer "
                                f"'{match.group(1)}' (allowed: {', '.join(sorted(ok))}): {line.strip()}")
    for path in sorted((root / "csrc" / "devices").rglob("*")):
        if path.suffix in (".h", ".cc"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r'#include\s*[<"](python/|pybind11/|Python\.h)', line):
                    problems.append(f"{path.relative_to(root)}:{number}: devices do not see Python: {line.strip()}")
    return problems


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    if problems:
        return 1
    if "--stamp" in argv:
        pathlib.Path(argv[argv.index("--stamp") + 1]).touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
