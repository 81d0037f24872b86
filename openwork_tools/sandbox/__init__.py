"""The Linux sandbox backend: bubblewrap profile, self-check, danger detection."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openwork_tools.sandbox.bwrap import bwrap_argv, sandbox_environment, workspace_writable
    from openwork_tools.sandbox.danger import detect_danger
    from openwork_tools.sandbox.probe import probe_sandbox, run_self_check

_EXPORTS = {
    "bwrap_argv": "openwork_tools.sandbox.bwrap",
    "detect_danger": "openwork_tools.sandbox.danger",
    "probe_sandbox": "openwork_tools.sandbox.probe",
    "run_self_check": "openwork_tools.sandbox.probe",
    "sandbox_environment": "openwork_tools.sandbox.bwrap",
    "workspace_writable": "openwork_tools.sandbox.bwrap",
}
"""Each public name's module: nothing is imported until a name is used."""

__all__ = [
    "bwrap_argv",
    "detect_danger",
    "probe_sandbox",
    "run_self_check",
    "sandbox_environment",
    "workspace_writable",
]

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error

    def __getattr__(name: str) -> object:
        """A public name, imported from its module on first use (PEP 562) and kept."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
