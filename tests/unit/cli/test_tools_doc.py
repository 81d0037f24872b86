"""Issue 25 point 8: docs/tools.md lists every tool's arguments (name, type, required,
description), generated from the JSON schemas of the definitions the model is offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from openwork_core.cli.tools_doc import (
    BEGIN,
    DOC,
    END,
    argument_rows,
    default_root_tools,
    tools_markdown,
    with_section,
)


def test_docs_tools_md_has_the_arguments_section_as_generated_from_the_schemas() -> None:
    document = DOC.read_text()
    expected = with_section(document, tools_markdown(default_root_tools()))
    assert document == expected, "run `python -m openwork_core.cli.tools_doc` and commit"


def test_every_tool_and_every_top_level_argument_is_a_row_with_its_required_flag() -> None:
    document = DOC.read_text()
    for tool in default_root_tools():
        assert f"### `{tool.name}`" in document
        schema = tool.parameters
        properties = schema.get("properties")
        assert isinstance(properties, dict)
        required = schema.get("required") or []
        assert isinstance(required, list)
        top = [row for row in argument_rows(schema) if "." not in row[0]]
        assert [name for name, *_ in top] == list(properties)
        assert {name for name, _, needed, _ in top if needed} == set(required)


def test_nested_arguments_are_named_by_path_with_their_types_and_choices() -> None:
    (bash,) = [t for t in default_root_tools() if t.name == "bash"]
    rows = {
        name: (kind, needed, about) for name, kind, needed, about in argument_rows(bash.parameters)
    }
    assert rows["command"][:2] == ("string", True)
    assert rows["timeoutMs"] == (
        "integer",
        False,
        "Timeout in milliseconds, clamped to 1-120000. Default `30000`.",
    )
    # optional since a call may ask for the network alone (issue 22 point 2)
    assert rows["sandboxPermissions.paths"][:2] == ("array of object", False)
    assert rows["sandboxPermissions.network"][:2] == ("boolean", False)
    assert rows["sandboxPermissions.paths[].access"] == ("string", True, "One of `read`, `write`.")


def test_a_document_without_the_markers_is_refused(tmp_path: Path) -> None:
    assert with_section(f"a\n{BEGIN}\nold\n{END}\nb", "new") == f"a\n{BEGIN}\nnew\n{END}\nb"
    with pytest.raises(ValueError, match="markers"):
        with_section("no markers here", "new")
