"""The TypeScript client in ``clients/typescript``: installed with ``npm ci`` from its committed
lock file (again whenever the lock file changed), its types generated from docs/openapi.json by
openapi-typescript, compiled by ``tsc`` (again whenever one of its inputs changed) and run with
Node's own test runner."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
STAMP = CLIENT / "node_modules" / ".openwork-lock-sha256"
BUILD_STAMP = CLIENT / "dist" / ".openwork-inputs-sha256"
GENERATED = CLIENT / "src" / "openapi.d.ts"
LOCK = Path(tempfile.gettempdir()) / (
    "openwork-ts-build-" + hashlib.sha256(str(CLIENT).encode()).hexdigest()[:12] + ".lock"
)
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


def inputs_digest() -> str:
    """What the build reads: the lock file (so the installed tools), the package and compiler
    settings, docs/openapi.json (so the generated types) and the client's sources and tests."""
    digest = hashlib.sha256()
    sources = sorted(p for folder in ("src", "test") for p in (CLIENT / folder).rglob("*.ts"))
    fixed = [CLIENT / "package-lock.json", CLIENT / "package.json", CLIENT / "tsconfig.json"]
    for path in [*fixed, ROOT / "docs" / "openapi.json", *sources]:
        if path != GENERATED:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def built() -> Path:
    """Installed, types generated, compiled to ``dist/``; the ``tsc`` output is the failure. One
    build per set of inputs: the test processes that need it wait for each other on a lock
    (concurrent ``npm ci`` runs in one folder break each other), and a build that passed is
    kept until an input changes."""
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        inputs = inputs_digest()
        if GENERATED.is_file() and BUILD_STAMP.is_file() and BUILD_STAMP.read_text() == inputs:
            return CLIENT / "dist"
        BUILD_STAMP.unlink(missing_ok=True)
        bin_dir = installed()
        generate(bin_dir, GENERATED)
        done = run(str(bin_dir / "tsc"), "-p", ".")
        assert done.returncode == 0, done.stdout + done.stderr
        BUILD_STAMP.write_text(inputs)
    return CLIENT / "dist"


def node_test(
    script: Path, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """``node --test`` on one compiled test file, TAP on stdout."""
    node = shutil.which("node")
    assert node is not None
    return run(node, "--test", "--test-reporter=tap", str(script), env=env, timeout=timeout)
