"""Explicit skill selection and the catalog through the runtime (skills.md §3–§4;
context-window.md §9, §11 item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role, TextBlock
from openwork_core.context.errors import SkillTooLarge
from openwork_core.context.world_state.skill_catalog import SKILL_CATALOG_TAG
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.errors import EmptyInput
from openwork_core.session.input import SkillInput, TextInput
from openwork_core.skills.selection import SkillNotFound
from openwork_core.storage.codec import decode_message
from openwork_core.storage.postgres.store import PostgresStore
from tests.support import store_rows
from tests.support.runtime import runtime


def _skill(root: Path, name: str, body: str, description: str = "does things") -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
    return path


async def test_a_selected_skill_body_is_stored_before_the_visible_message_and_survives_edits(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4 and §11 item 8 (gap: the skill changes on disk after acceptance): the snapshot is the
    body read at submit time; resume uses the stored body."""
    root = tmp_path / "skills"
    path = _skill(root, "deploy", "Run make deploy.")
    model = ScriptedModel([ScriptedResponse(text="deployed"), ScriptedResponse(text="again")])
    async with runtime(store, tmp_path, model, skill_root=root) as rt:
        sid = await rt.new_session()
        accepted = await rt.core.start_turn(
            sid,
            client_request_id="r1",
            inputs=[SkillInput(name="deploy", path=str(path)), TextInput(text="$deploy now")],
        )
        await model.wait_for_requests(1, timeout=10)
        path.write_text("---\nname: deploy\ndescription: changed\n---\n\nRun rm -rf /.\n")
        stored = await store_rows.session_messages(store.pool, sid)
        assert [(m.kind, m.role) for m in stored[:2]] == [
            (MessageKind.SKILL_INSTRUCTION, Role.USER),
            (MessageKind.NORMAL, Role.USER),
        ]
        snapshot = decode_message(stored[0]).text
        assert snapshot == (
            f"<skill>\n<name>deploy</name>\n<path>{path.resolve()}</path>\nRun make deploy.\n</skill>"
        )
        assert decode_message(stored[1]).text == "$deploy now"
        assert accepted.turn_id
    async with runtime(store, tmp_path, model, skill_root=root) as rt:
        await rt.run_turn(sid, "and again")
    resumed = model.requests[-1]
    texts = [
        "".join(b.text for b in m.content if isinstance(b, TextBlock)) for m in resumed.messages
    ]
    assert any("Run make deploy." in t for t in texts)
    assert not any("Run rm -rf /." in t for t in texts if t.startswith("<skill>"))


@pytest.mark.parametrize("case", ["unknown", "disabled", "outside_root"])
async def test_an_unavailable_selection_creates_no_turn(
    store: PostgresStore, tmp_path: Path, case: str
) -> None:
    """§4 steps 2–6: unknown, disabled or non-canonical selections fail before acceptance."""
    root = tmp_path / "skills"
    path = _skill(root, "deploy", "Run make deploy.")
    stray = _skill(tmp_path / "elsewhere", "deploy", "not a configured skill")
    async with runtime(store, tmp_path, ScriptedModel(), skill_root=root) as rt:
        sid = await rt.new_session()
        name, chosen, disabled = {
            "unknown": ("nope", str(path), ()),
            "disabled": ("deploy", str(path), ("deploy",)),
            "outside_root": ("deploy", str(stray), ()),
        }[case]
        with pytest.raises(SkillNotFound) as excinfo:
            await rt.core.start_turn(
                sid,
                client_request_id="r1",
                inputs=[SkillInput(name=name, path=chosen), TextInput(text="go")],
                disabled_skill_names=disabled,
            )
        assert excinfo.value.code == "skill_not_found"
        assert str(excinfo.value) == f"Selected skill is unavailable: {name}"
        assert await store_rows.session_messages(store.pool, sid) == []


async def test_an_oversized_skill_body_is_refused_and_only_skills_is_empty_input(
    store: PostgresStore, tmp_path: Path
) -> None:
    """context-window.md §7.3: a skill body at 8 000 tokens or more refuses the turn."""
    root = tmp_path / "skills"
    big = _skill(root, "huge", "x" * 40_000)
    async with runtime(store, tmp_path, ScriptedModel(), skill_root=root) as rt:
        sid = await rt.new_session()
        with pytest.raises(SkillTooLarge):
            await rt.core.start_turn(
                sid,
                client_request_id="r1",
                inputs=[SkillInput(name="huge", path=str(big)), TextInput(text="go")],
            )
        with pytest.raises(EmptyInput):
            await rt.core.start_turn(
                sid, client_request_id="r2", inputs=[SkillInput(name="huge", path=str(big))]
            )
        assert await store_rows.session_messages(store.pool, sid) == []


async def test_the_catalog_lists_enabled_skills_and_leaves_out_disabled_ones(
    store: PostgresStore, tmp_path: Path
) -> None:
    """skills.md §3: the catalog is World State; disabled skills are not listed."""
    root = tmp_path / "skills"
    _skill(root, "alpha", "a", description="first skill")
    _skill(root, "beta", "b", description="second skill")
    model = ScriptedModel([ScriptedResponse(text="ok")])
    async with runtime(store, tmp_path, model, skill_root=root) as rt:
        sid = await rt.new_session()
        await rt.core.start_turn(
            sid,
            client_request_id="r1",
            inputs=[TextInput(text="hi")],
            disabled_skill_names=("beta",),
        )
        await model.wait_for_requests(1, timeout=10)
    (request,) = model.requests
    catalog = [
        m.content[0].text  # type: ignore[union-attr]
        for m in request.messages
        if m.role is Role.USER and m.content[0].text.startswith(SKILL_CATALOG_TAG)  # type: ignore[union-attr]
    ]
    assert len(catalog) == 1
    assert "- alpha: first skill" in catalog[0]
    assert "beta" not in catalog[0]


async def test_a_disabled_skill_stays_out_of_the_catalog_across_a_restart_until_re_enabled(
    store: PostgresStore, tmp_path: Path
) -> None:
    """skills.md §6: the preference is stored (upsert, explicit false kept), loaded at startup,
    applied to every turn; disabled skills are still listed."""
    root = tmp_path / "skills"
    _skill(root, "alpha", "a", description="first skill")
    _skill(root, "beta", "b", description="second skill")
    async with runtime(store, tmp_path, ScriptedModel(), skill_root=root) as rt:
        listing = await rt.core.skills.set_disabled("beta", True)
        assert [(s.name, s.disabled) for s in listing.skills] == [("alpha", False), ("beta", True)]
    model = ScriptedModel([ScriptedResponse(text="one"), ScriptedResponse(text="two")])
    async with runtime(store, tmp_path, model, skill_root=root) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "first")
        await rt.core.skills.set_disabled("beta", False)
        await rt.run_turn(sid, "second")
        path = str((root / "beta" / "SKILL.md").resolve())
        await rt.core.skills.set_disabled("beta", True)
        with pytest.raises(SkillNotFound):
            await rt.core.start_turn(
                sid,
                client_request_id="r3",
                inputs=[SkillInput(name="beta", path=path), TextInput(text="use it")],
            )
    first_catalog = [t for t in _catalogs(model.requests[0]) if t.startswith(SKILL_CATALOG_TAG)]
    assert "beta" not in first_catalog[0]
    second_catalog = _catalogs(model.requests[1])[-1]
    assert "- beta: second skill" in second_catalog
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT name, disabled FROM skill_status ORDER BY name")
    assert [(r["name"], r["disabled"]) for r in rows] == [("beta", True)]


async def test_an_invalid_skill_name_cannot_be_disabled(
    store: PostgresStore, tmp_path: Path
) -> None:
    from openwork_core.skills.enablement import InvalidSkillName

    async with runtime(store, tmp_path, ScriptedModel(), skill_root=tmp_path / "skills") as rt:
        with pytest.raises(InvalidSkillName):
            await rt.core.skills.set_disabled("Not Valid", True)


def _catalogs(request: object) -> list[str]:
    from openwork_core.models.port import ModelRequest

    assert isinstance(request, ModelRequest)
    return [
        "".join(b.text for b in m.content if isinstance(b, TextBlock))
        for m in request.messages
        if m.role is Role.USER
        and "".join(b.text for b in m.content if isinstance(b, TextBlock)).find(SKILL_CATALOG_TAG)
        >= 0
    ]
