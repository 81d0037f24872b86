"""``builtin_registry()``: the seven built-in tools (tools.md §3)."""

from __future__ import annotations

from openwork_tools.builtin.bash import BashTool
from openwork_tools.builtin.edit import EditTool
from openwork_tools.builtin.glob_files import GlobTool
from openwork_tools.builtin.grep import GrepTool
from openwork_tools.builtin.list_dir import ListTool
from openwork_tools.builtin.read import ReadTool
from openwork_tools.builtin.write import WriteTool
from openwork_tools.definition import AnyTool
from openwork_tools.registry import ToolRegistry

BUILTIN_TOOL_IDS = ("read", "write", "edit", "grep", "glob", "list", "bash")
"""The default agent's built-in tools in toolset order (tools.md §3)."""
EXPLORER_TOOL_IDS = ("read", "grep", "glob", "list", "bash")


def builtin_registry() -> ToolRegistry:
    tools: list[AnyTool] = [
        ReadTool(),
        WriteTool(),
        EditTool(),
        GrepTool(),
        GlobTool(),
        ListTool(),
        BashTool(),
    ]
    return ToolRegistry(tools)
