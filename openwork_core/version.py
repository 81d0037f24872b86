"""The distribution's version."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def app_version() -> str:
    try:
        return version("openwork-core")
    except PackageNotFoundError:
        return "0.0.0"
