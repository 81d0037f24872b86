"""Issue 16 point 3, issue 25 point 4: TypeScript types generated from docs/openapi.json by
openapi-typescript (from the npm registry, pinned in clients/typescript/package-lock.json)
type-check the client with ``tsc``; a client using a field the document does not have fails the
check; the client's pure parts (the SSE parser, the back-off) pass their Node tests. The client
against a real daemon: tests/e2e/test_typescript_walk.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.typescript import CLIENT, built, node_test, run


@pytest.fixture(scope="module")
def dist() -> Path:
    """Installed, generated and compiled once for the checks below."""
    return built()


def test_the_generated_types_type_check_the_client(dist: Path) -> None:
    """``built`` compiled the client and its tests with ``tsc`` against the generated types,
    failing on any type error (its output is the failure); what it compiled is there."""
    assert (dist / "src" / "client.js").is_file()
    assert (dist / "test" / "sse.test.js").is_file()


def test_the_clients_sse_parser_and_back_off_pass_their_node_tests(dist: Path) -> None:
    done = node_test(dist / "test" / "sse.test.js")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout and "# pass 3" in done.stdout


def test_a_client_that_reads_a_field_the_document_does_not_have_fails_the_check(
    dist: Path, tmp_path: Path
) -> None:
    """The check above can fail: the same types refuse an unknown field and a field of another
    update kind."""
    shutil.copy(CLIENT / "src" / "openapi.d.ts", tmp_path / "openapi.d.ts")
    (tmp_path / "wrong.ts").write_text(
        'import type { components } from "./openapi";\n'
        'type S = components["schemas"];\n'
        'export const title = (s: S["SessionSummary"]): string => s.display_name;\n'
        'export const delta = (u: S["SessionUpdateEnvelopeBody"]["update"]): string =>\n'
        '  u.type === "turn_started" ? u.delta : "";\n'
    )
    config = json.loads((CLIENT / "tsconfig.json").read_text())
    config["include"] = ["*.ts"]
    config["compilerOptions"]["types"] = []
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    done = run(
        str(CLIENT / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", str(tmp_path), cwd=tmp_path
    )
    assert done.returncode != 0
    assert "Property 'display_name' does not exist" in done.stdout
    assert "Property 'delta' does not exist" in done.stdout


def _check(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(CLIENT / "src" / "openapi.d.ts", tmp_path / "openapi.d.ts")
    (tmp_path / "client.ts").write_text(
        'import type { components } from "./openapi";\ntype S = components["schemas"];\n' + source
    )
    config = json.loads((CLIENT / "tsconfig.json").read_text())
    config["include"] = ["*.ts"]
    config["compilerOptions"]["types"] = []
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    return run(
        str(CLIENT / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", str(tmp_path), cwd=tmp_path
    )


def test_a_request_body_with_only_its_required_fields_and_the_typed_payloads_type_check(
    dist: Path, tmp_path: Path
) -> None:
    """Issue 25 point 3: a body whose other fields have defaults needs only its required ones
    (``{workspace}``); ``accept-edits`` is an accepted mode; statuses are enums, a tool call's
    input an object, artifacts the file-change shape, an error detail its code's fields."""
    done = _check(
        tmp_path,
        'export const create: S["CreateSessionBody"] = { workspace: "/w" };\n'
        'export const mode: S["PermissionModeBody"] = { mode: "accept-edits" };\n'
        'export const started = (c: S["LiveToolCall"]): unknown => c.input["path"];\n'
        'export const done = (f: S["ToolCallFinished"]): "succeeded" | "failed" | "denied"\n'
        '  | "cancelled" | "outcome_unknown" => f.status;\n'
        'export const change = (f: S["ToolCallFinished"]): string | undefined =>\n'
        "  f.artifacts?.[0]?.changeId;\n"
        'export const busy = (e: S["ErrorEnvelope"]): string | null | undefined =>\n'
        "  e.error.turn_id;\n"
        'export const steps = (p: S["PlanUpdated"]): string[] => p.steps.map((s) => s.step);\n',
    )
    assert done.returncode == 0, done.stdout + done.stderr
