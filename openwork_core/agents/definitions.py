"""Agent definitions: system prompt, tool names, loop limits (session-runtime.md §4, multi-agent.md §4)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_AGENT_PROMPT = """You are OpenWork, a coding agent working in the user's project on their machine.

Work carefully and verify what you change. Read files before editing them, keep changes minimal and focused on the request, and run the project's own checks when they exist. Use the tools you are given; paths are relative to the workspace unless absolute. When a tool fails, read its message and adjust instead of repeating the same call. When the task is done, answer with a short summary of what you did and anything the user still needs to do."""

EXPLORER_AGENT_PROMPT = """You are an explorer sub-agent. You investigate one bounded question about the codebase for a parent agent and answer it directly.

Your answer goes to the parent, not to a person: make it self-contained, with code locations (path:line) or command output as evidence. You investigate; you do not modify the repository (you have no write tools). bash cannot write the workspace, but temporary directories are writable, and nobody can approve a sandbox refusal. Never ask questions: state your assumptions and mark what is uncertain."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDefinition:
    name: str
    system_prompt: str
    tool_ids: tuple[str, ...]
    max_model_calls: int
    doom_loop_threshold: int = 3
    registers_conversation_history: bool = False


DEFAULT_AGENT = AgentDefinition(
    name="default",
    system_prompt=DEFAULT_AGENT_PROMPT,
    tool_ids=("read", "write", "edit", "grep", "glob", "list", "bash"),
    max_model_calls=20,
    registers_conversation_history=True,
)

EXPLORER_AGENT = AgentDefinition(
    name="explorer",
    system_prompt=EXPLORER_AGENT_PROMPT,
    tool_ids=("read", "grep", "glob", "list", "bash"),
    max_model_calls=15,
)

AGENTS: dict[str, AgentDefinition] = {a.name: a for a in (DEFAULT_AGENT, EXPLORER_AGENT)}
