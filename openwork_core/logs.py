"""structlog setup: JSON lines when stderr is not a TTY (or OPENWORK_LOG_FORMAT=json), console
otherwise. Session and turn ids are bound through contextvars by the runtime."""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog


def configure_logging(log_format: Literal["json", "console"] | None = None) -> None:
    use_json = log_format == "json" or (log_format is None and not sys.stderr.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
