"""Issue 27 point 1: one MCP server's settings, from the TOML file or a PUT body."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from openwork_core.mcp.config import (
    ApprovalPolicy,
    McpSecrets,
    McpServerConfig,
    Transport,
    merged_servers,
    server_name_problem,
)


def test_the_defaults_are_the_issues() -> None:
    config = McpServerConfig(command="mcp-server-time")
    assert (config.transport, config.enabled, config.sandbox) == (Transport.STDIO, True, True)
    assert (config.startup_timeout_seconds, config.tool_timeout_seconds) == (10, 60)
    assert config.approval is ApprovalPolicy.ANNOTATIONS


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"command": "x", "url": "http://127.0.0.1/mcp"},
        {"url": "ftp://host/mcp"},
        {"url": "http://h/mcp", "env": {"A": "1"}},
        {"command": "x", "headers": {"X-A": "1"}},
        {"command": "x", "cwd": "relative/dir"},
        {"command": "x", "env": {"NOT A NAME": "1"}},
        {"url": "http://h/mcp", "headers": {"X-A": "line\nbreak"}},
        {"command": "x", "startup_timeout_seconds": 0},
        {"command": "x", "approval": "sometimes"},
        {"command": "x", "unknown": 1},
    ],
)
def test_a_server_that_is_neither_one_transport_nor_the_other_is_refused(
    fields: dict[str, object],
) -> None:
    with pytest.raises(ValidationError):
        McpServerConfig.model_validate(fields)


def test_filters_let_only_the_named_tools_through() -> None:
    config = McpServerConfig(command="x", enabled_tools=("a", "b"), disabled_tools=("b",))
    assert [t for t in ("a", "b", "c") if config.allows(t)] == ["a"]


def test_the_stored_form_keeps_the_names_of_secrets_and_never_their_values() -> None:
    config = McpServerConfig(
        url="https://h/mcp", headers={"X-Key": "s3cret"}, bearer_token_env_var="TOKEN"
    )
    stored = config.without_secrets()
    assert "s3cret" not in stored.model_dump_json()
    assert stored.headers == {"X-Key": ""}
    assert stored.with_secrets(config.secrets()) == config
    assert "s3cret" not in repr(config) + repr(config.secrets())
    assert McpSecrets(env={"A": "v"}).env == {"A": "v"}


def test_the_config_files_server_wins_over_a_stored_one_of_the_same_name() -> None:
    file_server, stored = McpServerConfig(command="a"), McpServerConfig(command="b")
    merged = merged_servers({"x": file_server}, {"x": stored, "y": stored})
    assert merged == {"x": (file_server, "config"), "y": (stored, "api")}


def test_server_names_are_path_segments_and_name_parts() -> None:
    assert server_name_problem("git.local-2") is None
    for bad in ("", "a/b", "-x", "x" * 65, "sp ace"):
        assert server_name_problem(bad) is not None
