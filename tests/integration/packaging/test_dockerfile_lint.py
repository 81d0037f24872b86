"""The Dockerfile linted with hadolint (issue 15 point 6; hadolint is installed from PyPI with
the test extras)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    assert found, "hadolint is missing: it is a test extra (pip install -e '.[test]')"
    return found


def test_the_dockerfile_passes_hadolint() -> None:
    run = subprocess.run(
        [_hadolint(), "--no-color", str(REPO / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_hadolint_does_fail_a_bad_dockerfile(tmp_path: Path) -> None:
    """The lint above can fail: a Dockerfile with known mistakes is rejected."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN cd /x && apt-get install curl\n")
    run = subprocess.run(
        [_hadolint(), "--no-color", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode != 0
    assert "DL3006" in run.stdout  # untagged image
