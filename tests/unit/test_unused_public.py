"""Issue 23 point 4: no public function, method, property or class of the three packages that
nothing outside the tests uses. vulture (its library API, in process) scans the packages alone —
so a name only the tests use counts as unused — at 60 % confidence; what is left must be on the
reviewed allow-list (``unused_public_allowlist.txt``: framework callbacks, each with its reason),
and every entry there must still be found (a stale entry is deleted, not kept)."""

from __future__ import annotations

from pathlib import Path

from vulture import Vulture

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("openwork_core", "openwork_chat_state", "openwork_tools")
KINDS = frozenset({"function", "method", "property", "class"})
ALLOWLIST = Path(__file__).with_name("unused_public_allowlist.txt")


def _allowed() -> set[str]:
    entries = set()
    for line in ALLOWLIST.read_text().splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            assert "#" in line, f"{entry}: an entry says why it is kept"
            entries.add(entry)
    return entries


def _unused_public() -> set[str]:
    scan = Vulture()
    scan.scavenge([str(REPO / package) for package in PACKAGES])
    return {
        f"{Path(item.filename).resolve().relative_to(REPO)}:{item.name}"
        for item in scan.get_unused_code(min_confidence=60)
        if item.typ in KINDS and not item.name.startswith("_")
    }


def test_every_public_function_of_the_packages_is_used_outside_the_tests() -> None:
    unused = _unused_public()
    allowed = _allowed()
    assert sorted(unused - allowed) == [], "unused outside tests: delete it or review it"
    assert sorted(allowed - unused) == [], "allow-listed but used (or gone): drop the entry"
