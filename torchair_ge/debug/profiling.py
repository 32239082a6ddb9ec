"""Profiles of compiled graphs (config.profiling.enable): every task of every run is timed by the
engine; this module collects the runs, renders a Chrome trace (chrome://tracing, Perfetto) and a
per-op-type table, and writes both at exit (or when `write_profile()` is called)."""
import atexit
import csv
import json
import logging
import os
import sys
import threading
from dataclasses import dataclass, field

logger = logging.getLogger("torchair_ge")

_lock = threading.Lock()
_live = {}       # graph id -> (session, profile path) of graphs compiled with profiling on
_collected = {}  # graph id -> list of profile dicts taken from the engine
_last_path = ["./"]  # profiling.path of the most recently compiled profiled graph


@dataclass
class OpRow:
    op_type: str
    engine: str
    count: int = 0
    total_us: float = 0.0
    share: float = 0.0

    @property
    def average_us(self):
        return self.total_us / self.count if self.count else 0.0


@dataclass
class ProfileReport:
    """What the profiled runs of some graphs add up to."""
    graphs: dict = field(default_factory=dict)  # graph id -> list of profile dicts
    rows: list = field(default_factory=list)    # OpRow, largest total first
    runs: int = 0
    run_us: float = 0.0   # sum of the engine's run spans
    task_us: float = 0.0  # sum of all task spans

    def table(self):
        """The per-op-type table as text."""
        lines = [f"{'op type':<24} {'engine':<14} {'count':>7} {'total us':>12} {'avg us':>10} {'share':>7}"]
        for r in self.rows:
            lines.append(f"{r.op_type:<24} {r.engine:<14} {r.count:>7} {r.total_us:>12.1f} {r.average_us:>10.2f} "
                         f"{100 * r.share:>6.1f}%")
        lines.append(f"{self.runs} runs: tasks {self.task_us:.1f} us of {self.run_us:.1f} us in the engine "
                     f"({100 * self.task_us / self.run_us if self.run_us else 0:.1f}%)")
        return "\n".join(lines)

    def chrome_trace(self):
        """A Chrome trace: one lane per graph and stream, each run a span with its tasks nested."""
        events, pid = [], os.getpid()
        starts = [int(p["run_times"][:, 0].min()) for ps in self.graphs.values() for p in ps if p["run_times"].numel()]
        origin = min(starts) if starts else 0
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "torchair_ge"}})
        for gid, profiles in sorted(self.graphs.items()):
            for p in profiles:
                lanes = sorted(set(p["task_streams"]))
                for s in lanes:
                    events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": gid * 100 + s,
                                   "args": {"name": f"{p['graph_name']} stream {s}"}})
                runs, tasks = p["run_times"].tolist(), p["task_times"].tolist()
                for r, (start, end) in enumerate(runs):
                    events.append({"name": f"{p['graph_name']} run", "cat": "graph", "ph": "X", "pid": pid,
                                   "tid": gid * 100 + lanes[0] if lanes else gid * 100,
                                   "ts": (start - origin) / 1e3, "dur": (end - start) / 1e3,
                                   "args": {"run": r, "thread": p["threads"][r]}})
                    for t, (ts, te) in enumerate(tasks[r]):
                        events.append({"name": p["task_types"][t], "cat": p["task_engines"][t], "ph": "X",
                                       "pid": pid, "tid": gid * 100 + p["task_streams"][t],
                                       "ts": (ts - origin) / 1e3, "dur": (te - ts) / 1e3,
                                       "args": {"node": p["task_names"][t], "engine": p["task_engines"][t]}})
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def write(self, path="./"):
        """Writes torchair_ge_trace_pid<pid>[_n].json and torchair_ge_ops_pid<pid>[_n].csv; returns both paths."""
        os.makedirs(path, exist_ok=True)
        stem, n = f"torchair_ge_trace_pid{os.getpid()}", 0
        while os.path.exists(os.path.join(path, stem + (f"_{n}" if n else "") + ".json")):
            n += 1
        suffix = f"_{n}" if n else ""
        trace_path = os.path.join(path, stem + suffix + ".json")
        table_path = os.path.join(path, f"torchair_ge_ops_pid{os.getpid()}{suffix}.csv")
        with open(trace_path, "w") as f:
            json.dump(self.chrome_trace(), f)
        with open(table_path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["op_type", "engine", "count", "total_us", "average_us", "share"])
            for r in self.rows:
                w.writerow([r.op_type, r.engine, r.count, f"{r.total_us:.3f}", f"{r.average_us:.3f}", f"{r.share:.5f}"])
        return trace_path, table_path


def register(session, graph_id, path):
    """Called by the backend for each graph compiled with profiling on."""
    with _lock:
        _live[graph_id] = (session, path)
        _last_path[0] = path


def unregister(graph_id):
    """Called before the graph leaves the session: its runs so far are kept."""
    _pull(graph_id)
    with _lock:
        _live.pop(graph_id, None)


def _pull(graph_id):
    with _lock:
        entry = _live.get(graph_id)
    if entry is None:
        return
    profile = entry[0].take_profile(graph_id)
    if profile["dropped_runs"]:
        logger.warning("profiling graph %d: %d runs were not recorded (the log was full)", graph_id,
                       profile["dropped_runs"])
    if profile["run_times"].shape[0]:
        with _lock:
            _collected.setdefault(graph_id, []).append(profile)


def report(take=True):
    """The profiled runs of every graph so far as a ProfileReport. With take=True (default) they
    are consumed: the next report covers only later runs."""
    with _lock:
        ids = list(_live)
    for gid in ids:
        _pull(gid)
    with _lock:
        graphs = {gid: list(ps) for gid, ps in _collected.items()}
        if take:
            _collected.clear()
    out = ProfileReport(graphs=graphs)
    rows = {}
    for profiles in graphs.values():
        for p in profiles:
            spans = (p["task_times"][..., 1] - p["task_times"][..., 0]).sum(dim=0).tolist()  # ns per task
            runs = p["run_times"].shape[0]
            out.runs += runs
            out.run_us += float((p["run_times"][:, 1] - p["run_times"][:, 0]).sum()) / 1e3
            for t, ns in enumerate(spans):
                row = rows.setdefault((p["task_types"][t], p["task_engines"][t]),
                                      OpRow(p["task_types"][t], p["task_engines"][t]))
                row.count += runs
                row.total_us += ns / 1e3
    out.task_us = sum(r.total_us for r in rows.values())
    for r in rows.values():
        r.share = r.total_us / out.task_us if out.task_us else 0.0
    out.rows = sorted(rows.values(), key=lambda r: -r.total_us)
    return out


def write_profile(path=None):
    """Writes the trace and the table of the runs so far (consuming them), prints the table and
    returns (trace path, table path); None when nothing was profiled. `path` defaults to the
    configured profiling.path of the profiled graphs."""
    rep = report(take=True)
    if not rep.runs:
        return None
    paths = rep.write(path or _last_path[0])
    print(f"torchair_ge profile ({rep.runs} runs): trace {paths[0]}, table {paths[1]}\n{rep.table()}", file=sys.stderr)
    return paths


@atexit.register
def _write_at_exit():
    try:
        write_profile()
    except Exception as e:  # never let a profile turn a clean exit into a crash
        logger.warning("could not write the torchair_ge profile at exit: %s", e)
