"""Issue 27 point 3: the MCP tools in the Tool Surface — after the built-in and control tools,
sorted, dispatched by the same toolset, frozen at load and refreshed only at a turn boundary after
the servers changed; their approval card (point 4)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from openwork_core.mcp.config import ApprovalPolicy
from openwork_core.mcp.listing import ListedTool
from openwork_core.mcp.surface import McpSurface, ServerShare
from openwork_core.mcp.tool import McpTool, asks
from openwork_core.session.approval import (
    NON_INTERACTIVE_TEXT,
    ApprovalCard,
    CardMcpCall,
    DenialSource,
    NeedsCard,
    PermissionRequest,
    RuleDenial,
    Run,
    authorize,
)
from openwork_core.session.toolset import Registered, RootSurface, TurnToolset
from openwork_core.session.updates import PermissionRequested, SessionUpdateEnvelope
from openwork_core.session.wire import wire_json
from openwork_tools.builtin.registry import builtin_registry
from openwork_tools.context import ToolSessionContext
from openwork_tools.definition import RiskHint
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.registry import ToolsetConfig

DEFAULT_IDS = ("read", "write", "edit", "grep", "glob", "list", "bash")


class _NoConnections:
    def connection(self, server: str) -> None:
        return None


def _tool(name: str, server: str = "git", *, read_only: bool = False, ask: bool = True) -> McpTool:
    listed = ListedTool(
        name=name.split("__")[-1],
        description=f"{name} does things",
        input_schema={"type": "object", "properties": {"repo": {"type": "string"}}},
        read_only=read_only,
    )
    return McpTool(tool_id=name, server=server, listed=listed, ask=ask, lookup=_NoConnections())


@dataclass
class _Source:
    generation: int
    tools: tuple[McpTool, ...]

    def surface(self) -> McpSurface:
        return McpSurface(
            generation=self.generation,
            tools=self.tools,
            servers=(ServerShare(name="git", status="ready", reason=None, tools=1, tokens=9),),
            source=self,
        )


def _toolset(tmp_path: Path, source: _Source) -> TurnToolset:
    session = ToolSessionContext(working_directory=tmp_path, sandbox=SandboxStatus(available=True))
    return TurnToolset.new(
        builtin_registry().finalize(ToolsetConfig(DEFAULT_IDS), session),
        RootSurface(),
        conversation_history=True,
        mcp=source.surface(),
    )


def test_mcp_tools_come_after_the_built_in_and_control_tools_and_resolve_to_the_registry(
    tmp_path: Path,
) -> None:
    source = _Source(1, (_tool("mcp__git__git_add"), _tool("mcp__git__git_status")))
    toolset = _toolset(tmp_path, source)
    names = toolset.names
    assert names[: len(DEFAULT_IDS)] == DEFAULT_IDS
    assert names[-2:] == ("mcp__git__git_add", "mcp__git__git_status")
    assert names.index("interrupt_agent") < names.index("mcp__git__git_add")
    assert toolset.resolve("mcp__git__git_add") == Registered("mcp__git__git_add")
    assert toolset.registry_tools.risk("mcp__git__git_status") is RiskHint.PROCESS_EXECUTION


def test_the_surface_is_frozen_until_the_servers_generation_moves(tmp_path: Path) -> None:
    source = _Source(1, (_tool("mcp__git__git_add"),))
    toolset = _toolset(tmp_path, source)
    assert toolset.refreshed() is toolset
    source.tools = (_tool("mcp__git__git_add"), _tool("mcp__git__git_log"))
    assert toolset.refreshed() is toolset  # no notification yet: nothing changes
    source.generation = 2
    fresh = toolset.refreshed()
    assert fresh.names[-2:] == ("mcp__git__git_add", "mcp__git__git_log")
    assert fresh.refreshed() is fresh


def test_a_refresh_to_the_same_tools_keeps_the_very_same_definitions(tmp_path: Path) -> None:
    """A server restarted with the same tools: the same bytes, and the same object (the prompt
    cache's fast path)."""
    source = _Source(1, (_tool("mcp__git__git_add"),))
    toolset = _toolset(tmp_path, source)
    source.generation, source.tools = 2, (_tool("mcp__git__git_add"),)
    fresh = toolset.refreshed()
    assert fresh is not toolset
    assert fresh.definitions is toolset.definitions
    assert orjson.dumps(fresh.definitions) == orjson.dumps(toolset.definitions)


def test_the_approval_policy_decides_who_asks() -> None:
    read_only = ListedTool(name="t", description="d", input_schema={}, read_only=True)
    writes = ListedTool(name="t", description="d", input_schema={}, read_only=False)
    assert not asks(ApprovalPolicy.ANNOTATIONS, read_only)
    assert asks(ApprovalPolicy.ANNOTATIONS, writes)
    assert asks(ApprovalPolicy.ALWAYS, read_only)
    assert not asks(ApprovalPolicy.NEVER, writes)


def _verdict(tool: McpTool, tmp_path: Path, *, interactive: bool = True) -> object:
    session = ToolSessionContext(working_directory=tmp_path, sandbox=SandboxStatus(True))
    return authorize(
        tool.prepare(session, '{"repo": "/r", "files": ["a.py"]}'),
        mode=SandboxMode.AUTO,
        interactive=interactive,
        sandbox_available=True,
        previous_denial=None,
        classify=lambda path: None,  # type: ignore[arg-type,return-value]
    )


def test_a_call_that_asks_shows_server_tool_and_arguments_on_the_card(tmp_path: Path) -> None:
    verdict = _verdict(_tool("mcp__git__git_add"), tmp_path)
    call = CardMcpCall(server="git", tool="git_add", arguments={"repo": "/r", "files": ["a.py"]})
    assert verdict == NeedsCard(ApprovalCard(mode=SandboxMode.AUTO, mcp=call))
    assert isinstance(verdict, NeedsCard)
    envelope = SessionUpdateEnvelope(
        session_id="s",
        sequence=1,
        turn_id="t",
        occurred_at_ms=0,
        update=PermissionRequested(request=_request(verdict.card)),
    )
    card = orjson.loads(wire_json(envelope))["update"]["request"]["card"]
    assert card["mcp"] == {"server": "git", "tool": "git_add", "arguments": call.arguments}


def _request(card: ApprovalCard) -> PermissionRequest:
    return PermissionRequest(
        session_id="s",  # type: ignore[arg-type]
        turn_id="t",  # type: ignore[arg-type]
        tool_call_id="tc",  # type: ignore[arg-type]
        provider_call_id="c1",
        tool_name="mcp__git__git_add",
        card=card,
    )


def test_nobody_to_ask_is_a_denial_and_a_read_only_tool_just_runs(tmp_path: Path) -> None:
    denied = _verdict(_tool("mcp__git__git_add"), tmp_path, interactive=False)
    assert denied == RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)
    assert _verdict(_tool("mcp__git__git_status", read_only=True, ask=False), tmp_path) == Run()
