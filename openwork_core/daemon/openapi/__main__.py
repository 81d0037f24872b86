"""``python -m openwork_core.daemon.openapi > docs/openapi.json``: write the served document."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, cast

from openwork_core.daemon.app import create_app
from openwork_core.daemon.openapi import document_bytes
from openwork_core.service import OpenWorkCore
from openwork_core.version import app_version


def served_document() -> dict[str, Any]:
    """The document the daemon serves, built without a database (no route is called)."""
    app = create_app(
        cast(OpenWorkCore, None),
        token="unused",
        allowed_origins=frozenset(),
        allow_remote=False,
        version=app_version(),
        shutdown=asyncio.Event(),
    )
    return app.openapi()


def main() -> None:
    sys.stdout.buffer.write(document_bytes(served_document()))


if __name__ == "__main__":
    main()
