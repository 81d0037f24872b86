"""The skill host calls over HTTP (skills.md §6; additions to daemon-api.md): list with warnings,
disable and re-enable by name, invalid names refused."""

from __future__ import annotations

from pathlib import Path

from tests.support.daemon import start_daemon


async def test_skills_are_listed_with_warnings_and_can_be_disabled_and_re_enabled(
    tmp_path: Path, database_url: str
) -> None:
    home = tmp_path / "home"
    root = home / "user-home" / ".agents" / "skills"  # the daemon's HOME in tests/support/daemon.py
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship it.\n---\nRun make.\n"
    )
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("no frontmatter\n")
    daemon = await start_daemon(home=home, database_url=database_url)
    try:
        async with daemon.client() as client:
            listing = (await client.get("/v1/skills")).json()
            assert [(s["name"], s["disabled"]) for s in listing["skills"]] == [("deploy", False)]
            assert [w["path"].endswith("broken/SKILL.md") for w in listing["warnings"]] == [True]
            disabled = (await client.put("/v1/skills/deploy", json={"disabled": True})).json()
            assert disabled["skills"][0]["disabled"] is True
            enabled = (await client.put("/v1/skills/deploy", json={"disabled": False})).json()
            assert enabled["skills"][0]["disabled"] is False
            bad = await client.put("/v1/skills/Bad%20Name", json={"disabled": True})
            assert (bad.status_code, bad.json()["error"]["code"]) == (422, "invalid_request")
    finally:
        assert await daemon.stop() == 0
