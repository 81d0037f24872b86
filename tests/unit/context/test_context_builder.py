"""The System Context (context-window.md §2, §11 items 1 and 20)."""

from __future__ import annotations

import orjson
from ctx_support import TOOLS, History, prepare

from openwork_chat_state.item import MessageKind
from openwork_core.context.builder import AGENT_SYSTEM_KEY, SystemContextBuilder, SystemContextPart

AGENT_PROMPT = "You are OpenWork, a coding agent."
TOOL_RULES = "Use update_plan to keep a plan."


def test_the_system_prefix_is_only_the_agent_system_prompt() -> None:
    """§2, §11 item 1: exactly one part, `core/agent-system`; World State is not in it."""
    system = SystemContextBuilder().build(AGENT_PROMPT)
    assert system.parts == (SystemContextPart(key=AGENT_SYSTEM_KEY, content=AGENT_PROMPT),)
    assert AGENT_SYSTEM_KEY == "core/agent-system"
    h = History()
    h.user("<project_instructions>be nice</project_instructions>", MessageKind.WORLD_STATE)
    h.user("hello")
    prepared = prepare(h.view(), system=system)
    assert [m.text for m in prepared.request.messages[:1]] == [AGENT_PROMPT]
    assert prepared.conversation[0].text.startswith("<project_instructions>")


def test_tool_surface_rules_follow_the_agent_prompt_after_a_blank_line() -> None:
    """§2: the agent prompt plus the rules the tool surface needs, one part."""
    system = SystemContextBuilder().build(AGENT_PROMPT, TOOL_RULES)
    assert system.parts == (
        SystemContextPart(key=AGENT_SYSTEM_KEY, content=f"{AGENT_PROMPT}\n\n{TOOL_RULES}"),
    )


def test_manual_compaction_builds_from_the_agent_prompt_alone() -> None:
    """§2: manual compaction's System Context has no tool-surface rules."""
    assert SystemContextBuilder().build(AGENT_PROMPT).parts[0].content == AGENT_PROMPT
    assert SystemContextBuilder().build(AGENT_PROMPT, "").parts[0].content == AGENT_PROMPT


def test_workspace_changes_do_not_alter_the_prefix() -> None:
    """§2, §11 item 20 (gap closed at builder level): building from the same Agent and tool
    surface is byte-identical, and the System prefix and tool definitions of the request stay
    byte-identical when the Conversation and the workspace (World State) change — as they do
    across a compaction."""
    builder = SystemContextBuilder()
    first = builder.build(AGENT_PROMPT, TOOL_RULES)
    second = builder.build(AGENT_PROMPT, TOOL_RULES)
    assert orjson.dumps(first) == orjson.dumps(second)

    before = History()
    before.user("<user_project_context>a</user_project_context>", MessageKind.WORLD_STATE)
    before.user("do it")
    before.assistant("", ("c", "read"))
    before.result("c", "x" * 10_000)
    after = History()  # a compacted, changed workspace
    after.user("do it")
    after.user("summary", MessageKind.NORMAL)
    after.user("<user_project_context>b, c</user_project_context>", MessageKind.WORLD_STATE)
    a = prepare(before.view(watermark=4), system=first)
    b = prepare(after.view(), system=second)
    assert orjson.dumps(a.request.messages[:1]) == orjson.dumps(b.request.messages[:1])
    assert orjson.dumps(a.request.tools) == orjson.dumps(b.request.tools) == orjson.dumps(TOOLS)
    assert a.budget.system_context_tokens == b.budget.system_context_tokens
    assert a.budget.tool_surface_tokens == b.budget.tool_surface_tokens
