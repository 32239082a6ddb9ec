"""The process-wide engine session: GEInitialize once, one Session, unique graph ids."""
import itertools
import threading

from torchair_ge import _C

_lock = threading.Lock()
_session = None
_graph_ids = itertools.count(1)


def default_session():
    global _session
    with _lock:
        if _session is None:
            if not _C.ge_is_initialized():
                _C.ge_initialize({"ge.device": "cpu"})
            _session = _C.Session({})
        return _session


def next_graph_id():
    with _lock:
        return next(_graph_ids)
