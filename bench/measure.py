"""Timing and memory, measured the same way for every system."""
import ctypes
import gc
import random
import statistics
import threading
import time

_PAGE = 4096


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def _release_freed_memory():
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def peak_rss_growth(fn, runs):
    """Peak RSS during `runs` calls of fn, minus RSS before them (the loaded, warmed-up model)."""
    _release_freed_memory()
    base = rss_bytes()
    peak = base
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, rss_bytes())
            time.sleep(0.0005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        for _ in range(runs):
            fn()
    finally:
        stop.set()
        sampler.join()
    peak = max(peak, rss_bytes())
    return max(0, peak - base)


def _calibrate(fn, target_s):
    """Calls per batch so that one batch takes about target_s."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(10000, int(target_s / once)))


def interleaved_latency(runners, rounds, batch_target_s=0.02, seed=0):
    """Per-call latency samples (seconds) for each runner. Each round runs one batch of every
    runner, in a shuffled order, so drift of the machine hits all of them alike."""
    for fn in runners.values():
        for _ in range(3):
            fn()
    batch = {name: _calibrate(fn, batch_target_s) for name, fn in runners.items()}
    samples = {name: [] for name in runners}
    order = list(runners)
    rng = random.Random(seed)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            fn, n = runners[name], batch[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n)
    return samples


def summarize(samples):
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"median_ms": statistics.median(ordered) * 1e3, "p90_ms": p90 * 1e3, "rounds": len(ordered)}


class CountingBackend:
    """A torch.compile backend that counts the graphs Dynamo hands it."""

    def __init__(self, backend):
        self.backend, self.graphs = backend, 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.backend(gm, example_inputs)
