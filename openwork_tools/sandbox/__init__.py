"""The Linux sandbox backend: bubblewrap profile, self-check, danger detection."""

from openwork_tools.sandbox.bwrap import bwrap_argv, sandbox_environment, workspace_writable
from openwork_tools.sandbox.danger import detect_danger
from openwork_tools.sandbox.probe import probe_sandbox, run_self_check

__all__ = [
    "bwrap_argv",
    "detect_danger",
    "probe_sandbox",
    "run_self_check",
    "sandbox_environment",
    "workspace_writable",
]
