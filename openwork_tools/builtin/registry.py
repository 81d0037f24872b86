"""``builtin_registry()``: the seven built-in tools (tools.md §3)."""

from __future__ import annotations

from openwork_tools.builtin.edit import EditTool
from openwork_tools.builtin.glob_files import GlobTool
from openwork_tools.builtin.grep import GrepTool
from openwork_tools.builtin.list_dir import ListTool
from openwork_tools.builtin.read import ReadTool
from openwork_tools.builtin.write import WriteTool
from openwork_tools.registry import ToolRegistry

BUILTIN_TOOL_IDS = ("read", "write", "edit", "grep", "glob", "list")
"""The default agent's file tools in toolset order (bash is appended when it lands)."""


def builtin_registry() -> ToolRegistry:
    return ToolRegistry([ReadTool(), WriteTool(), EditTool(), GrepTool(), GlobTool(), ListTool()])
