"""The TypeScript client in ``clients/typescript``: installed with ``npm ci`` from its committed
lock file (again whenever the lock file changed), its types generated from docs/openapi.json by
openapi-typescript, compiled by ``tsc`` and run with Node's own test runner."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
STAMP = CLIENT / "node_modules" / ".openwork-lock-sha256"
TIMEOUT_S = 300


def run(
    *args: str, cwd: Path = CLIENT, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=None if env is None else os.environ | env,
    )


def installed() -> Path:
    """``node_modules/.bin`` after ``npm ci`` (skipped when the lock file did not change)."""
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node"), (
        "node and npm are needed (scripts/install-system-deps.sh installs them)"
    )
    lock = hashlib.sha256((CLIENT / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.is_file() or STAMP.read_text() != lock:
        done = run(npm, "ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, done.stdout + done.stderr
        STAMP.write_text(lock)
    return CLIENT / "node_modules" / ".bin"


def generate(bin_dir: Path, out: Path) -> None:
    done = run(
        str(bin_dir / "openapi-typescript"),
        str(ROOT / "docs" / "openapi.json"),
        "--default-non-nullable",  # a field with a default is optional in a request body
        "false",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def built() -> Path:
    """Installed, types generated, compiled to ``dist/``; the ``tsc`` output is the failure."""
    bin_dir = installed()
    generate(bin_dir, CLIENT / "src" / "openapi.d.ts")
    done = run(str(bin_dir / "tsc"), "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    return CLIENT / "dist"


def node_test(
    script: Path, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """``node --test`` on one compiled test file, TAP on stdout."""
    node = shutil.which("node")
    assert node is not None
    return run(node, "--test", "--test-reporter=tap", str(script), env=env, timeout=timeout)
