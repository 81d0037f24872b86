"""Named fault points for the kill -9 matrix (faults issue, point 7).

``OPENWORK_FAULTPOINT=name[:nth]`` makes the process SIGKILL itself the ``nth`` time (default 1)
it passes the point ``name``. Unset, ``faultpoint`` is one comparison: inert. It lives in the
lowest package so the tools (bash) and the core can both mark their points."""

from __future__ import annotations

import os
import signal
from typing import Final, Literal, TypeAlias

FaultPoint: TypeAlias = Literal[
    "turn_row_committed",
    "world_state_row_committed",
    "model_streaming",
    "assistant_committed",
    "tool_result_before_commit",
    "tool_result_committed",
    "read_only_tool_running",
    "bash_running",
    "summary_streaming",
    "checkpoint_committed",
    "watermark_advanced",
    "sub_agent_spawning",
    "sse_attached",
]

FAULT_POINTS: Final[tuple[FaultPoint, ...]] = FaultPoint.__args__  # type: ignore[attr-defined]


def parse_faultpoint(spec: str | None) -> tuple[str, int] | None:
    """``name[:nth]`` → (name, nth); ``None`` when unset or blank."""
    if not spec or not spec.strip():
        return None
    name, _, nth = spec.strip().partition(":")
    return name, int(nth) if nth else 1


_ARMED: Final = parse_faultpoint(os.environ.get("OPENWORK_FAULTPOINT"))
_passes: dict[str, int] = {}


def faultpoint(name: FaultPoint) -> None:
    """Kill this process here when the armed point is ``name`` and this is its nth pass."""
    if _ARMED is None or _ARMED[0] != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] == _ARMED[1]:
        os.kill(os.getpid(), signal.SIGKILL)
