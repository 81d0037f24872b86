"""The docs (issue 15 point 7): the README is self-contained (every link stays in the
repository and resolves), docs/api.md lists exactly the routes the daemon serves, and both
README commands install what they promise."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from openwork_core.daemon.app import create_app

REPO = Path(__file__).resolve().parents[3]
LINK = re.compile(r"\]\(([^)\s]+)\)")
ROUTE = re.compile(r"`(GET|POST|PUT|DELETE|PATCH) (/v1/[^`?\s]*)")


def _served_routes() -> set[tuple[str, str]]:
    app = create_app(
        object(),  # type: ignore[arg-type]  # routes only; no request is served
        token="t",
        allowed_origins=frozenset(),
        allow_remote=False,
        version="0",
        shutdown=asyncio.Event(),
    )
    paths = app.openapi()["paths"]
    return {(method.upper(), path) for path, ops in paths.items() for method in ops}


def _normalised(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def test_docs_api_lists_exactly_the_routes_of_the_served_openapi() -> None:
    documented = {
        (method, _normalised(path))
        for method, path in ROUTE.findall((REPO / "docs" / "api.md").read_text())
        if path != "/v1/openapi.json"
    }
    served = {(method, _normalised(path)) for method, path in _served_routes()}
    assert served - documented == set(), "served but not in docs/api.md"
    assert documented - served == set(), "in docs/api.md but not served"


def test_readme_and_docs_link_only_to_files_in_the_repository() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text()
        for target in LINK.findall(text):
            assert not target.startswith(("http://", "https://")), f"{page.name}: {target}"
            resolved = (page.parent / target.split("#", 1)[0]).resolve()
            assert resolved.is_relative_to(REPO), f"{page.name} links outside: {target}"
            assert resolved.exists(), f"{page.name} links to a missing file: {target}"
    readme = (REPO / "README.md").read_text()
    assert "../" not in readme
    assert {"docs/api.md", "docs/guide.md", "docs/providers.md"} <= set(LINK.findall(readme))


def test_both_readme_commands_install_everything_they_promise() -> None:
    """`make serve` and `make test` both create the venv and install bubblewrap (`serve` without
    the test extras: tests/integration/packaging/test_makefile.py)."""
    makefile = (REPO / "Makefile").read_text()
    for target, stamp in (("serve", "$(RUNTIME_STAMP)"), ("test", "$(STAMP)")):
        (line,) = [row for row in makefile.splitlines() if row.startswith(f"{target}:")]
        prerequisites = line.split(":", 1)[1].split()
        assert {stamp, "system-deps"} <= set(prerequisites), line
    assert "make serve" in (REPO / "README.md").read_text()
    assert "make test" in (REPO / "README.md").read_text()
