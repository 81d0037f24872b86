"""Issue 25 point 8: ``make serve`` installs what the daemon needs to run, not the test extras
(its own stamp); ``make test`` installs the extras and satisfies ``serve`` too. Read from make's
dry run (``-n``) of a fresh virtual environment: nothing is installed or run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _dry_run(target: str, venv: Path) -> list[str]:
    make = shutil.which("make")
    assert make is not None
    # Under ``make test`` the nested make would inherit the outer one's flags and level and print
    # "make[1]: Leaving directory …" after the recipe: a dry run of its own, as from a shell.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    done = subprocess.run(
        [make, "-n", "-B", "--no-print-directory", target, f"VENV={venv}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_serve_installs_the_package_without_the_test_extras(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    lines = _dry_run("serve", venv)
    installs = [line for line in lines if " install " in line and "pip" in line]
    assert f"{venv}/bin/pip install -q -e ." in installs
    assert not any("[test]" in line for line in lines), lines
    assert lines[-1] == f"{venv}/bin/openwork serve"


def test_make_test_installs_the_test_extras_and_sets_both_stamps(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    lines = _dry_run("test", venv)
    assert f"{venv}/bin/pip install -q -e '.[test]'" in lines
    assert f"touch {venv}/.runtime-stamp {venv}/.installed-stamp" in lines
