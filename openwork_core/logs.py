"""structlog setup (daemon-api.md §1 logs; DESIGN.md §4.7).

Every event goes to two places through one stdlib ``QueueHandler`` (file and terminal writes
happen on a listener thread, never on the event loop):

- ``OPENWORK_HOME/logs/openwork.log``: JSON lines, rotated at ``ROTATE_BYTES`` with
  ``ROTATE_KEEP`` old files;
- stderr: readable console lines on a TTY, JSON lines otherwise (or as ``OPENWORK_LOG_FORMAT``
  says).

``session_id`` / ``turn_id`` are bound through structlog contextvars by the runtime and merged
into every line; libraries' stdlib records pass through the same chain (httpx at WARNING: its
per-request INFO line repeats our ``model.call``). A record is rendered once for both JSON sinks.
"""

from __future__ import annotations

import logging
import logging.handlers
import queue
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import structlog

LOG_FILE_NAME = "openwork.log"
ROTATE_BYTES = 10 * 1024 * 1024
ROTATE_KEEP = 5

_SHARED: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,  # in the caller's thread, where the exception is
]


class _RecordQueueHandler(logging.handlers.QueueHandler):
    """Queue the record as is: the listener's handlers format it with structlog."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        return record


@dataclass
class LogSetup:
    """What ``configure_logging`` started; ``close`` flushes and stops the writer thread."""

    listener: logging.handlers.QueueListener
    file: Path | None
    stderr_json: bool
    """stderr carries JSON lines (then nothing else may be written there)."""

    def close(self) -> None:
        self.listener.stop()
        for handler in self.listener.handlers:
            handler.close()


def _formatter(json: bool) -> structlog.stdlib.ProcessorFormatter:
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )


class _FormattedOnce(logging.Formatter):
    """One rendering per record for every handler that shares it: the JSON file and JSON
    stderr write the same line, and ``RotatingFileHandler`` formats each record twice on its
    own (once to decide on a rollover, once to write). Only the listener thread formats."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self._inner = inner
        self._last: tuple[logging.LogRecord | None, str] = (None, "")

    def format(self, record: logging.LogRecord) -> str:
        last, text = self._last
        if last is not record:
            text = self._inner.format(record)
            self._last = (record, text)
        return text


QUIET_LIBRARY_LOGGERS = ("httpx", "httpx2", "mcp")
"""Libraries whose INFO lines repeat one of ours: httpx logs every request (``HTTP Request:
POST …``) — once per model call, beside our own ``model.call`` line. Their warnings stay."""


FILE_LOG = "openwork.log_file"
"""A logger whose records go to the log file only (what stderr already showed another way)."""
FILE_ONLY_LOGGERS = ("pgserver", FILE_LOG)
"""Loggers whose records go to the log file only (issue 24 point 6): the embedded PostgreSQL's
own lines (each command it runs, its output, ``PostmasterInfo(…)``) are no start-up noise."""


def _not_file_only(record: logging.LogRecord) -> bool:
    return not any(
        record.name == name or record.name.startswith(f"{name}.") for name in FILE_ONLY_LOGGERS
    )


def configure_logging(
    log_format: Literal["json", "console"] | None = None,
    *,
    log_dir: Path | None = None,
    level: int = logging.INFO,
) -> LogSetup:
    """Configure structlog and the root logger; ``log_dir`` adds the rotated JSON file."""
    stderr_json = log_format == "json" or (log_format is None and not sys.stderr.isatty())
    json_lines = _FormattedOnce(_formatter(True))
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(json_lines if stderr_json else _formatter(False))
    stderr.addFilter(_not_file_only)
    handlers: list[logging.Handler] = [stderr]
    file: Path | None = None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        file = log_dir / LOG_FILE_NAME
        rotating = logging.handlers.RotatingFileHandler(
            file, maxBytes=ROTATE_BYTES, backupCount=ROTATE_KEEP, encoding="utf-8"
        )
        rotating.setFormatter(json_lines)
        handlers.append(rotating)
    records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    listener = logging.handlers.QueueListener(records, *handlers, respect_handler_level=False)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(_RecordQueueHandler(records))
    root.setLevel(level)
    for name in QUIET_LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    listener.start()
    return LogSetup(listener, file, stderr_json)
