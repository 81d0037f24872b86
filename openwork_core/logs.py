"""structlog setup (daemon-api.md §1 logs; DESIGN.md §4.7).

Every event goes to two places through one stdlib ``QueueHandler`` (file and terminal writes
happen on a listener thread, never on the event loop):

- ``OPENWORK_HOME/logs/openwork.log``: JSON lines, rotated at ``ROTATE_BYTES`` with
  ``ROTATE_KEEP`` old files;
- stderr: readable console lines on a TTY, JSON lines otherwise (or as ``OPENWORK_LOG_FORMAT``
  says).

``session_id`` / ``turn_id`` are bound through structlog contextvars by the runtime and merged
into every line; libraries' stdlib records pass through the same chain.
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


def configure_logging(
    log_format: Literal["json", "console"] | None = None,
    *,
    log_dir: Path | None = None,
    level: int = logging.INFO,
) -> LogSetup:
    """Configure structlog and the root logger; ``log_dir`` adds the rotated JSON file."""
    stderr_json = log_format == "json" or (log_format is None and not sys.stderr.isatty())
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(_formatter(stderr_json))
    handlers: list[logging.Handler] = [stderr]
    file: Path | None = None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        file = log_dir / LOG_FILE_NAME
        rotating = logging.handlers.RotatingFileHandler(
            file, maxBytes=ROTATE_BYTES, backupCount=ROTATE_KEEP, encoding="utf-8"
        )
        rotating.setFormatter(_formatter(True))
        handlers.append(rotating)
    records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    listener = logging.handlers.QueueListener(records, *handlers, respect_handler_level=False)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(_RecordQueueHandler(records))
    root.setLevel(level)
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    listener.start()
    return LogSetup(listener, file, stderr_json)
