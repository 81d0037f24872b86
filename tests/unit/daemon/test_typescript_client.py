"""Issue 16 point 3: TypeScript types generated from docs/openapi.json by openapi-typescript (from
the npm registry, pinned in clients/typescript/package-lock.json) type-check a small client with
``tsc``; a client using a field the document does not have fails the check."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / "clients" / "typescript"
STAMP = CLIENT / "node_modules" / ".openwork-lock-sha256"


def _run(*args: str, cwd: Path = CLIENT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def _installed() -> Path:
    """``npm ci`` from the committed lock file, again whenever the lock file changed."""
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node"), (
        "node and npm are needed (scripts/install-system-deps.sh installs them)"
    )
    lock = hashlib.sha256((CLIENT / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.is_file() or STAMP.read_text() != lock:
        done = _run(npm, "ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, done.stdout + done.stderr
        STAMP.write_text(lock)
    return CLIENT / "node_modules" / ".bin"


def _generate(bin_dir: Path, out: Path) -> None:
    done = _run(
        str(bin_dir / "openapi-typescript"),
        str(ROOT / "docs" / "openapi.json"),
        "--default-non-nullable",
        "false",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def bin_dir() -> Path:
    """Installed once, types generated once for both checks."""
    installed = _installed()
    _generate(installed, CLIENT / "src" / "openapi.d.ts")
    return installed


def test_the_generated_types_type_check_the_example_client(bin_dir: Path) -> None:
    done = _run(str(bin_dir / "tsc"), "--noEmit", "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_client_that_reads_a_field_the_document_does_not_have_fails_the_check(
    bin_dir: Path, tmp_path: Path
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
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    done = _run(str(bin_dir / "tsc"), "--noEmit", "-p", str(tmp_path), cwd=tmp_path)
    assert done.returncode != 0
    assert "Property 'display_name' does not exist" in done.stdout
    assert "Property 'delta' does not exist" in done.stdout


def _check(bin_dir: Path, tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(CLIENT / "src" / "openapi.d.ts", tmp_path / "openapi.d.ts")
    (tmp_path / "client.ts").write_text(
        'import type { components } from "./openapi";\ntype S = components["schemas"];\n' + source
    )
    config = json.loads((CLIENT / "tsconfig.json").read_text())
    config["include"] = ["*.ts"]
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    return _run(str(bin_dir / "tsc"), "--noEmit", "-p", str(tmp_path), cwd=tmp_path)


def test_a_request_body_with_only_its_required_fields_and_the_typed_payloads_type_check(
    bin_dir: Path, tmp_path: Path
) -> None:
    """Issue 25 point 3: a body whose other fields have defaults needs only its required ones
    (``{workspace}``); ``accept-edits`` is an accepted mode; statuses are enums, a tool call's
    input an object, artifacts the file-change shape, an error detail its code's fields."""
    done = _check(
        bin_dir,
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
