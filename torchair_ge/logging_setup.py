"""The `torchair_ge` Python logger: level WARNING unless TNG_LOG_LEVEL says otherwise, and the
engine's line format, `[torchair_ge LEVEL pid:tid] file:line message`, so Python and C++ lines
read alike. The handler stays quiet when the application configured logging itself (a handler
on the root logger): records then go out through the application's handlers only."""
import logging
import os
import threading

FORMAT = "[torchair_ge %(levelname)s %(process)d:%(native_tid)d] %(filename)s:%(lineno)d %(message)s"
# TNG_LOG_LEVEL names and numbers -> Python levels (EVENT lines are INFO-level records in Python).
_LEVELS = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING, "3": logging.ERROR, "4": logging.CRITICAL + 1,
           "5": logging.INFO, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING,
           "ERROR": logging.ERROR, "OFF": logging.CRITICAL + 1, "EVENT": logging.INFO}

logger = logging.getLogger("torchair_ge")


class _EngineFormatHandler(logging.StreamHandler):
    def filter(self, record):
        record.native_tid = threading.get_native_id()
        return not logging.getLogger().handlers and super().filter(record)


def setup():
    if not any(isinstance(h, _EngineFormatHandler) for h in logger.handlers):
        handler = _EngineFormatHandler()
        handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(handler)
    level = os.environ.get("TNG_LOG_LEVEL", "").strip().upper()
    if logger.level == logging.NOTSET:
        logger.setLevel(_LEVELS.get(level, logging.WARNING))
        if level and level not in _LEVELS:  # the engine reads it too and also falls back to WARNING
            logger.warning("TNG_LOG_LEVEL=%r is not a log level (DEBUG, INFO, WARNING, ERROR, OFF, EVENT or 0-5); "
                           "logging at WARNING", os.environ["TNG_LOG_LEVEL"])


def set_log_level(level):
    """Sets both the Python logger and the engine: "DEBUG", "INFO", "WARNING", "ERROR", "OFF" or
    "EVENT" (engine timings; Python at INFO)."""
    from torchair_ge import _C

    name = str(level).upper()
    if name not in _LEVELS or name.isdigit():
        raise ValueError(f"unknown log level {level!r}; allowed: DEBUG, INFO, WARNING, ERROR, OFF, EVENT")
    _C.set_log_level(name)
    logger.setLevel(_LEVELS[name])
