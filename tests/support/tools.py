"""Helpers shared by the tools tests."""

from __future__ import annotations

from openwork_tools import SandboxMode, SandboxPolicy, SandboxStatus, ToolCallContext

AVAILABLE = SandboxStatus(available=True)
UNAVAILABLE = SandboxStatus(available=False, reason="bwrap is not installed")


def call_ctx(
    call_id: str = "call_1", mode: SandboxMode = SandboxMode.AUTO, **kwargs: object
) -> ToolCallContext:
    return ToolCallContext(call_id=call_id, policy=SandboxPolicy(mode), **kwargs)  # type: ignore[arg-type]
