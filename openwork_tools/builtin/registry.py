"""``builtin_registry()``: the seven built-in tools (tools.md §3)."""

from __future__ import annotations

from openwork_tools.builtin.read import ReadTool
from openwork_tools.registry import ToolRegistry

BUILTIN_TOOL_IDS = ("read",)


def builtin_registry() -> ToolRegistry:
    return ToolRegistry([ReadTool()])
