"""API keys set at runtime (issue 14 point 7): ``OPENWORK_HOME/run/provider-keys.json``.

The file is the daemon's secret like its token (``run/`` is 0700 and the whole home is hidden
from every tool: ``ToolSessionContext.secret_dirs``); it is 0600 and written atomically (a 0600
temp file in the same directory, fsync, rename). Keys never go to PostgreSQL, the log or a
response. ``ProviderKeys`` keeps the map in memory (this daemon is the file's only writer: the
home lock), so a rotation is seen by the next model call without a restart."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

KEYS_FILE = "provider-keys.json"


def keys_path(home: Path) -> Path:
    return home / "run" / KEYS_FILE


def read_keys(path: Path) -> dict[str, str]:
    """The stored keys; a missing file is none, an unreadable one is none and a warning."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("provider_keys.unreadable", path=str(path), error=type(exc).__name__)
        return {}
    if not isinstance(raw, dict):
        return {}
    return {str(k): v for k, v in raw.items() if isinstance(v, str) and v}


def write_keys(path: Path, keys: Mapping[str, str]) -> None:
    """Atomically replace the file (0600 from creation; ``run/`` created 0700)."""
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    tmp = directory / f".{path.name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(dict(sorted(keys.items())), handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.chmod(path, 0o600)


class ProviderKeys:
    """The runtime keys by provider id (loaded once; every change written through)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._keys: dict[str, str] | None = None

    def __repr__(self) -> str:  # never show a key
        return f"ProviderKeys({str(self._path)!r}, {len(self._loaded())} keys)"

    def load(self) -> None:
        """Read the file now (off the event loop, at start)."""
        self._keys = read_keys(self._path)

    def _loaded(self) -> dict[str, str]:
        if self._keys is None:
            self._keys = read_keys(self._path)
        return self._keys

    def get(self, provider_id: str) -> str | None:
        return self._loaded().get(provider_id)

    def set(self, provider_id: str, key: str | None) -> None:
        """Store (or, with ``None``, delete) the provider's key; the file first, then memory."""
        keys = dict(self._loaded())
        if key is None:
            if provider_id not in keys:
                return
            del keys[provider_id]
        else:
            keys[provider_id] = key
        write_keys(self._path, keys)
        self._keys = keys
        log.info("provider_keys.changed", provider=provider_id, stored=key is not None)
