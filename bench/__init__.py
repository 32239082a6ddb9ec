"""Benchmarks: eager vs Inductor vs torchair_ge (vs ONNX Runtime) on the model zoo. `python -m bench`."""
