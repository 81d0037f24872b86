"""Registry, FinalizedToolset, schemas and results (tools.md §2, §3, §8)."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest
from pydantic import Field

import openwork_tools.errors as errors_module
from openwork_chat_state.messages import ToolResultState
from openwork_tools.builtin.registry import builtin_registry
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.errors import (
    BlankToolDescription,
    BlankToolId,
    DuplicateToolRegistration,
    DuplicateToolSelection,
    ToolsError,
    UnknownToolSelection,
)
from openwork_tools.registry import FinalizedToolset, ToolRegistry, ToolsetConfig
from openwork_tools.results import (
    RESULT_TEXT_LIMIT,
    FileChange,
    ToolErrorCode,
    ToolResult,
    ToolStatus,
)
from openwork_tools.schema import ToolInput
from tests.support.tools import UNAVAILABLE, call_ctx


class EchoInput(ToolInput):
    text: str = Field(description="What to echo.")
    repeat: int = 1


class EchoTool(Tool[EchoInput]):
    input_model = EchoInput

    def __init__(self, tool_id: str = "echo", description: str = "Echo text.") -> None:
        super().__init__(tool_id, description, RiskHint.READ_ONLY)

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: EchoInput
    ) -> ToolResult:
        return ToolResult.ok(tool_input.text * tool_input.repeat)


def test_error_codes_are_unique_and_snake_case() -> None:
    """DESIGN.md §4.5: one base error per package, each subclass a stable distinct code."""
    classes = [
        c
        for _, c in inspect.getmembers(errors_module, inspect.isclass)
        if issubclass(c, ToolsError)
    ]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)) >= 6
    assert all(code.islower() and " " not in code for code in codes)


@pytest.mark.parametrize(
    ("tools", "error"),
    [
        ([EchoTool(tool_id="  ")], BlankToolId),
        ([EchoTool(description="")], BlankToolDescription),
        ([EchoTool(), EchoTool()], DuplicateToolRegistration),
    ],
)
def test_registration_rejects_blank_ids_descriptions_and_duplicates(
    tools: list[EchoTool], error: type[ToolsError]
) -> None:
    """tools.md §3: blank id, blank description, duplicate registration are rejected."""
    with pytest.raises(error):
        ToolRegistry(tools)


def test_finalize_rejects_duplicate_selection_and_unknown_ids(session: ToolSessionContext) -> None:
    """tools.md §3: selecting a tool twice or an unregistered tool fails finalize."""
    registry = ToolRegistry([EchoTool()])
    with pytest.raises(DuplicateToolSelection):
        registry.finalize(ToolsetConfig(("echo", "echo")), session)
    with pytest.raises(UnknownToolSelection):
        registry.finalize(ToolsetConfig(("echo", "nope")), session)


def test_definitions_follow_config_order_and_match_dispatchable_names(
    session: ToolSessionContext,
) -> None:
    """tools.md §3 invariants 1 and 4: one selection, deterministic order = config order."""
    registry = ToolRegistry([EchoTool("a", "A."), EchoTool("b", "B."), EchoTool("c", "C.")])
    toolset = registry.finalize(ToolsetConfig(("c", "a")), session)
    assert [d.name for d in toolset.definitions] == ["c", "a"]
    assert toolset.names == ("c", "a")


def test_finalized_toolset_is_immutable(session: ToolSessionContext) -> None:
    """tools.md §3 invariant 2: registering later does not change a finalized toolset."""
    registry = ToolRegistry([EchoTool()])
    toolset = registry.finalize(ToolsetConfig(("echo",)), session)
    registry.register(EchoTool("late", "Late."))
    assert toolset.names == ("echo",)
    with pytest.raises(AttributeError):
        toolset.extra = 1  # type: ignore[attr-defined]


async def test_unselected_tool_is_neither_advertised_nor_run(session: ToolSessionContext) -> None:
    """tools.md §3 invariant 3 + §11: an unselected name returns the tool_not_found result."""
    registry = ToolRegistry([EchoTool("a", "A."), EchoTool("b", "B.")])
    toolset = registry.finalize(ToolsetConfig(("a",)), session)
    assert "b" not in [d.name for d in toolset.definitions]
    result = await toolset.call("b", '{"text": "x"}', call_ctx())
    assert result.status is ToolStatus.FAILED
    assert result.error is not None and result.error.code is ToolErrorCode.TOOL_NOT_FOUND
    assert result.text == "tool not found: b"
    assert toolset.prepare("b", "{}") is None


@pytest.mark.parametrize("payload", ["not json", '{"repeat": 2}', '{"text": 5}', "[]"])
async def test_unparsable_input_is_an_invalid_arguments_result(
    session: ToolSessionContext, payload: str
) -> None:
    """tools.md §2: parse failure -> invalid_arguments whose text starts `invalid tool input:`."""
    toolset = ToolRegistry([EchoTool()]).finalize(ToolsetConfig(("echo",)), session)
    result = await toolset.call("echo", payload, call_ctx())
    assert result.status is ToolStatus.FAILED
    assert result.error is not None and result.error.code is ToolErrorCode.INVALID_ARGUMENTS
    assert result.text.startswith("invalid tool input:")
    assert result.text == result.error.message


def test_schema_and_parser_come_from_one_model(session: ToolSessionContext) -> None:
    """tools.md §2: schema generated from the input model without `$schema`/`title`."""
    toolset = ToolRegistry([EchoTool()]).finalize(ToolsetConfig(("echo",)), session)
    (definition,) = toolset.definitions
    assert definition.parameters == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "What to echo."},
            "repeat": {"type": "integer", "default": 1},
        },
        "required": ["text"],
    }


def test_builtin_schemas_use_camel_case_and_carry_no_titles(session: ToolSessionContext) -> None:
    """tools.md §7: parameter names are camelCase; no `$schema`/`title` anywhere."""
    registry = builtin_registry()
    toolset = registry.finalize(ToolsetConfig(registry.ids), session)
    for definition in toolset.definitions:
        dumped = repr(definition.parameters)
        assert "'title'" not in dumped and "$schema" not in dumped
        for name in definition.parameters.get("properties", {}):  # type: ignore[union-attr]
            assert "_" not in name


async def test_oversized_result_is_cut_with_spill_footer(session: ToolSessionContext) -> None:
    """tools.md §8: any result over 32,000 bytes gets the fallback cut and the spill footer."""
    toolset = ToolRegistry([EchoTool()]).finalize(ToolsetConfig(("echo",)), session)
    line = "x" * 99 + "\n"
    result = await toolset.call(
        "echo", f'{{"text": "{line!s}", "repeat": 1000}}'.replace("\n", "\\n"), call_ctx("call/9")
    )
    text = result.text
    assert len(text.encode()) <= RESULT_TEXT_LIMIT
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_9.txt"
    assert spilled.read_text() == line * 1000
    kept = text[: text.index("... (")]
    assert kept.endswith("\n") and kept == line * (len(kept) // 100)
    assert text.endswith(
        f"... ({100_000 - len(kept)} bytes omitted. Full output saved at {spilled} — "
        "use read with offset/limit, or grep, to look at it.)"
    )


async def test_spill_failure_omits_the_path(make_session: object, tmp_path: Path) -> None:
    """tools.md §8: spill failure -> the result is returned without the path."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the spill dir should be")
    session = make_session(spill_dir=blocker / "s1")  # type: ignore[operator]
    toolset = ToolRegistry([EchoTool()]).finalize(ToolsetConfig(("echo",)), session)
    result = await toolset.call("echo", '{"text": "y", "repeat": 40000}', call_ctx())
    assert len(result.text.encode()) <= RESULT_TEXT_LIMIT
    match = re.fullmatch(r"(y+)\n\.\.\. \((\d+) bytes omitted\.\)", result.text)
    assert match is not None
    assert len(match[1]) + int(match[2]) == 40_000


@pytest.mark.parametrize(
    ("status", "state"),
    [
        (ToolStatus.SUCCEEDED, ToolResultState.SUCCESS),
        (ToolStatus.FAILED, ToolResultState.ERROR),
        (ToolStatus.OUTCOME_UNKNOWN, ToolResultState.ERROR),
        (ToolStatus.DENIED, ToolResultState.DENIED),
        (ToolStatus.CANCELLED, ToolResultState.INTERRUPTED),
    ],
)
def test_status_maps_to_model_visible_state(status: ToolStatus, state: ToolResultState) -> None:
    """tools.md §8: succeeded->success, failed/outcome_unknown->error, denied, cancelled."""
    result = dataclasses.replace(ToolResult.ok("x"), status=status)
    block = result.to_block("call_1", "read")
    assert (block.id, block.name, block.state) == ("call_1", "read", state)


def test_artifacts_never_reach_the_model_block() -> None:
    """tools.md §8: only text goes to the model; artifacts are UI-only."""
    change = FileChange(
        change_id="c1",
        path="a.txt",
        kind="created",
        additions=1,
        deletions=0,
        hunks=(),
        before_hash=None,
        after_hash="h",
        before_content=None,
        after_content="SECRET-ARTIFACT",
    )
    block = ToolResult.ok("Created a.txt (+1)", (change,)).to_block("c1", "write")
    assert "SECRET-ARTIFACT" not in repr(block)
    assert change.to_json()["changeId"] == "c1"


def test_schemas_drop_escalation_params_when_sandbox_unavailable(
    make_session: object,
) -> None:
    """tools.md §3 invariant 6, permissions-sandbox.md §4: no escalation params, no orphan defs."""
    registry = builtin_registry()
    for sandbox_available in (True, False):
        session = make_session(  # type: ignore[operator]
            **({} if sandbox_available else {"sandbox": UNAVAILABLE})
        )
        toolset = registry.finalize(ToolsetConfig(registry.ids), session)
        for definition in toolset.definitions:
            props = definition.parameters["properties"]
            assert isinstance(props, dict)
            has = "sandboxPermissions" in props and "justification" in props
            expected = sandbox_available and definition.name in ("bash", "write", "edit")
            assert has is expected, definition.name
            if not sandbox_available:
                assert "$defs" not in definition.parameters


async def test_fallback_cut_keeps_a_failed_message_equal_to_its_text_and_an_earlier_spill(
    session: ToolSessionContext,
) -> None:
    """tools.md §8: a failed result's text equals the error message, also after the cut; an
    existing spill of the same call is not overwritten."""

    class LoudFailure(EchoTool):
        async def execute(
            self, session: ToolSessionContext, call: ToolCallContext, tool_input: EchoInput
        ) -> ToolResult:
            return ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, "e" * 50_000)

    assert session.spill_dir is not None
    session.spill_dir.mkdir(parents=True)
    (session.spill_dir / "call_1.txt").write_text("the tool's own spill")
    toolset = ToolRegistry([LoudFailure()]).finalize(ToolsetConfig(("echo",)), session)
    result = await toolset.call("echo", '{"text": "x"}', call_ctx())
    assert result.error is not None and result.error.message == result.text
    assert len(result.text.encode()) <= RESULT_TEXT_LIMIT
    assert (session.spill_dir / "call_1.txt").read_text() == "the tool's own spill"
    assert (session.spill_dir / "call_1-result.txt").read_text() == "e" * 50_000


async def test_a_long_result_holding_lone_surrogates_is_cut_not_failed(
    session: ToolSessionContext,
) -> None:
    """tools.md §8 on untrusted bytes: a long result holding a name that is not UTF-8
    (``\udcff``) or an MCP server's lone ``\ud83d`` is bounded and spilled like any other;
    measuring it as UTF-8 used to fail the call."""

    class Listing(EchoTool):
        async def execute(
            self, session: ToolSessionContext, call: ToolCallContext, tool_input: EchoInput
        ) -> ToolResult:
            return ToolResult.ok("bad\udcff.txt \ud83d\n" * 5_000)

    toolset = ToolRegistry([Listing()]).finalize(ToolsetConfig(("echo",)), session)
    result = await toolset.call("echo", '{"text": "x"}', call_ctx())
    assert result.status is ToolStatus.SUCCEEDED
    assert result.text.startswith("bad\udcff.txt \ud83d\n")
    assert len(result.text.encode(errors="surrogatepass")) <= RESULT_TEXT_LIMIT
    assert session.spill_dir is not None and (session.spill_dir / "call_1.txt").exists()


def test_exactly_the_builtin_read_only_tools_have_nothing_to_authorize(
    toolset: FinalizedToolset,
) -> None:
    """The core writes a response of ``READ_ONLY`` calls after they ran (docs/performance.md
    "One transaction per steady call"): those are read, grep, glob and list, and none of them
    reports anything to authorize, so none can need a permission card."""
    read_only = {n for n in toolset.names if toolset.risk(n) is RiskHint.READ_ONLY}
    assert read_only == {"read", "grep", "glob", "list"}
    arguments = {
        "read": '{"path": "a.txt"}',
        "grep": '{"pattern": "x"}',
        "glob": '{"pattern": "*"}',
        "list": "{}",
    }
    assert all(toolset.prepare(n, arguments[n]) is None for n in read_only)
    assert toolset.risk("no_such_tool") is None
