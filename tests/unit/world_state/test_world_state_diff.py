"""render_diff, RetainedSections and the baseline: the notice table of context-window.md §3."""

from __future__ import annotations

import pytest

from openwork_chat_state.item import ConversationItem, MessageKind, SyntheticOrigin, SyntheticReason
from openwork_chat_state.messages import user_text
from openwork_core.context.world_state import errors as ws_errors
from openwork_core.context.world_state.diff import (
    RetainedSections,
    WorldStateBaseline,
    WorldStateUpdate,
    render_diff,
)
from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId, world_state_message_id
from openwork_core.context.world_state.sections import SECTION_SPECS

from .support import AGENTS, CATALOG, POLICY, PROJECT, Session, capture, items_of, texts, user_item

S = SectionId
AGENTS_SPEC = SECTION_SPECS[S.PROJECT_INSTRUCTIONS]
CATALOG_SPEC = SECTION_SPECS[S.SKILL_CATALOG]
POLICY_SPEC = SECTION_SPECS[S.SANDBOX_POLICY]


def test_the_first_sampling_emits_every_section_in_a_fixed_order() -> None:
    """§3, §11 item 22: every present section, bodies without notices, in the fixed order."""
    session = Session.fresh()
    assert texts(session.sample(capture())) == [
        (S.USER_PROJECT_CONTEXT, PROJECT),
        (S.PROJECT_INSTRUCTIONS, AGENTS),
        (S.SKILL_CATALOG, CATALOG),
        (S.SANDBOX_POLICY, POLICY),
    ]
    assert SECTION_ORDER == (
        S.USER_PROJECT_CONTEXT,
        S.PROJECT_INSTRUCTIONS,
        S.SKILL_CATALOG,
        S.SANDBOX_POLICY,
    )


def test_an_unchanged_world_emits_nothing() -> None:
    """§3, §11 item 22: a section that has not changed sends no bytes."""
    session = Session.fresh()
    session.sample(capture())
    assert session.sample(capture()) == ()
    assert session.sample(capture()) == ()


def test_a_fresh_session_stays_silent_about_sections_that_never_existed() -> None:
    """§3, §11 item 2: an absent section sends nothing, not an empty message nor a notice."""
    session = Session.fresh()
    assert [u.section_id for u in session.sample(capture(agents=None, catalog=None))] == [
        S.USER_PROJECT_CONTEXT,
        S.SANDBOX_POLICY,
    ]
    assert session.sample(capture(agents=None, catalog=None)) == ()


def test_a_changed_body_is_sent_whole_after_the_replacement_notice() -> None:
    """§3 table row 2 (body), §11 item 23: replacement notice, blank line, full body."""
    session = Session.fresh()
    session.sample(capture())
    new_agents = "<project_instructions>\nBe brief.\n</project_instructions>"
    assert texts(session.sample(capture(agents=new_agents))) == [
        (
            S.PROJECT_INSTRUCTIONS,
            "The following AGENTS.md instructions replace all previously provided AGENTS.md "
            "instructions.\n\n" + new_agents,
        )
    ]


def test_a_section_that_disappears_sends_its_invalidation_notice() -> None:
    """§3 table row 2 (absent); skills.md §3 "had a catalog, now none"."""
    session = Session.fresh()
    session.sample(capture())
    assert texts(session.sample(capture(agents=None, catalog=None))) == [
        (S.PROJECT_INSTRUCTIONS, "The previously provided AGENTS.md instructions no longer apply."),
        (S.SKILL_CATALOG, "The previous skill catalog no longer applies."),
    ]
    assert session.sample(capture(agents=None, catalog=None)) == ()


def test_a_section_that_comes_back_after_its_invalidation_is_a_first_appearance() -> None:
    """DESIGN.md §2: the latest message is an invalidation notice -> not retained -> body only."""
    session = Session.fresh()
    session.sample(capture())
    session.sample(capture(agents=None))
    assert texts(session.sample(capture())) == [(S.PROJECT_INSTRUCTIONS, AGENTS)]


def test_a_compacted_away_fragment_is_re_emitted_as_a_first_appearance() -> None:
    """§3 table row 3, §11 item 19: baseline present, message gone -> body without a notice."""
    session = Session.fresh()
    session.sample(capture())
    session.items = [user_item("summary of earlier work")]
    assert texts(session.sample(capture())) == list(
        zip(SECTION_ORDER, [PROJECT, AGENTS, CATALOG, POLICY], strict=True)
    )


def test_a_compacted_away_section_that_is_now_absent_sends_nothing() -> None:
    """§3 table row 3 (absent): nothing."""
    session = Session.fresh()
    session.sample(capture())
    session.items = []
    assert [u.section_id for u in session.sample(capture(agents=None))] == [
        S.USER_PROJECT_CONTEXT,
        S.SKILL_CATALOG,
        S.SANDBOX_POLICY,
    ]


def test_a_restarted_session_re_emits_with_a_replacement_notice() -> None:
    """§3 table row 4, §11 item 24: empty baseline, message retained -> notice + body, even when
    the body is unchanged."""
    session = Session.fresh()
    session.sample(capture())
    restarted = session.restarted()
    assert texts(restarted.sample(capture())) == [
        (s, SECTION_SPECS[s].replacement(b))
        for s, b in zip(SECTION_ORDER, [PROJECT, AGENTS, CATALOG, POLICY], strict=True)
    ]
    assert restarted.sample(capture()) == ()


def test_a_restarted_session_invalidates_a_retained_section_that_is_now_absent() -> None:
    """§3 table row 4 (absent): invalidation notice."""
    session = Session.fresh()
    session.sample(capture())
    restarted = session.restarted()
    updates = restarted.sample(capture(project=None, agents=None, catalog=None, policy=None))
    assert [u.text for u in updates] == [
        SECTION_SPECS[s].invalidation_notice for s in SECTION_ORDER
    ]


def test_a_restart_after_an_invalidation_stays_silent_while_the_source_is_still_absent() -> None:
    """DESIGN.md §2 reading: latest message is the invalidation notice -> nothing after restart."""
    session = Session.fresh()
    session.sample(capture())
    session.sample(capture(agents=None))
    restarted = session.restarted()
    updates = restarted.sample(capture(agents=None))
    assert S.PROJECT_INSTRUCTIONS not in [u.section_id for u in updates]


def test_a_restart_with_nothing_retained_sends_bodies_without_notices() -> None:
    """§3 table row 5: baseline none, message gone -> body; absent -> nothing."""
    restarted = Session.fresh()
    restarted.items = [user_item("hello")]
    assert texts(restarted.sample(capture(catalog=None))) == [
        (S.USER_PROJECT_CONTEXT, PROJECT),
        (S.PROJECT_INSTRUCTIONS, AGENTS),
        (S.SANDBOX_POLICY, POLICY),
    ]


def test_a_normal_user_message_with_the_same_text_does_not_count() -> None:
    """§3, §11 item 24; skills.md §3: a typed marker is not a World State message."""
    typed = [user_item(t, i) for i, t in enumerate([PROJECT, AGENTS, CATALOG, POLICY])]
    typed.append(user_item(AGENTS_SPEC.replacement(AGENTS), 9))
    assert RetainedSections.scan(typed) == RetainedSections()
    session = Session(typed, WorldStateBaseline.empty())
    assert all(not u.text.startswith("The ") for u in session.sample(capture()))


def test_other_context_kinds_with_the_marker_do_not_count() -> None:
    """§3: only `MessageKind.WORLD_STATE` items are looked at."""
    items = [
        ConversationItem(
            message=user_text(POLICY),
            kind=kind,
            origin=SyntheticOrigin(compaction_id="c", reason=SyntheticReason.SYSTEM_REMINDER),
        )
        for kind in (MessageKind.SKILL_INSTRUCTION, MessageKind.AGENT_MESSAGE, MessageKind.NORMAL)
    ]
    assert RetainedSections.scan(items) == RetainedSections()


def test_scan_recognises_the_tag_the_replacement_form_and_the_invalidation_notice() -> None:
    """permissions-sandbox.md §3: tag, notice + blank line + tag, or equal to the removal notice."""
    by_tag = items_of([WorldStateUpdate(S.SANDBOX_POLICY, POLICY)])
    by_notice = items_of([WorldStateUpdate(S.SANDBOX_POLICY, POLICY_SPEC.replacement(POLICY))])
    invalidated = by_tag + items_of(
        [WorldStateUpdate(S.SANDBOX_POLICY, POLICY_SPEC.invalidation_notice)], 5
    )
    assert S.SANDBOX_POLICY in RetainedSections.scan(by_tag)
    assert S.SANDBOX_POLICY in RetainedSections.scan(by_notice)
    assert S.SANDBOX_POLICY not in RetainedSections.scan(invalidated)
    assert S.SANDBOX_POLICY in RetainedSections.scan(invalidated + by_notice)
    unrelated = items_of(
        [WorldStateUpdate(S.SANDBOX_POLICY, "The sandbox policy below replaces it.")]
    )
    assert RetainedSections.scan(unrelated) == RetainedSections()


def test_render_diff_is_read_only() -> None:
    """§3: render_diff compares and renders; the baseline advances only when told to."""
    baseline = WorldStateBaseline.empty()
    retained = RetainedSections()
    first = render_diff(baseline, capture(), retained)
    assert render_diff(baseline, capture(), retained) == first
    assert baseline == WorldStateBaseline.empty() and baseline.capture is None
    advanced = baseline.advanced(capture())
    assert advanced.capture == capture() and baseline.capture is None


def test_a_failed_write_leaves_the_baseline_so_the_next_sampling_repeats_the_messages() -> None:
    """§3: if a write fails the baseline does not advance and the same messages come again."""
    baseline = WorldStateBaseline.empty()
    items = items_of(render_diff(baseline, capture(), RetainedSections()))[:2]  # two written
    world = capture(agents="<project_instructions>\nNew.\n</project_instructions>")
    again = render_diff(baseline, world, RetainedSections.scan(items))
    assert [u.section_id for u in again] == list(SECTION_ORDER)


@pytest.mark.parametrize(
    ("baseline_body", "retained", "body", "expected"),
    [
        ("same", True, "same", None),
        ("old", True, "new", "replacement"),
        ("old", True, None, "invalidation"),
        ("old", False, "new", "body"),
        ("old", False, "old", "body"),
        ("old", False, None, None),
        ("unknown", True, "new", "replacement"),
        ("unknown", True, None, "invalidation"),
        ("unknown", False, "new", "body"),
        ("unknown", False, None, None),
    ],
)
def test_every_row_of_the_notice_table(
    baseline_body: str | None, retained: bool, body: str | None, expected: str | None
) -> None:
    """§3 table: baseline present/none × message present/gone × body/absent."""

    def catalog_body(tag: str | None) -> str | None:
        return None if tag is None else f"{CATALOG_SPEC.tag}\n{tag}\n</available_skills>"

    baseline = (
        WorldStateBaseline.empty()
        if baseline_body == "unknown"
        else WorldStateBaseline.empty().advanced(capture(catalog=catalog_body(baseline_body)))
    )
    kept = RetainedSections(frozenset({S.SKILL_CATALOG}) if retained else frozenset())
    updates = [
        u
        for u in render_diff(baseline, capture(catalog=catalog_body(body)), kept)
        if u.section_id is S.SKILL_CATALOG
    ]
    rendered = catalog_body(body)
    want = {
        None: [],
        "body": [rendered],
        "replacement": [CATALOG_SPEC.replacement(rendered or "")],
        "invalidation": [CATALOG_SPEC.invalidation_notice],
    }[expected]
    assert [u.text for u in updates] == want


def test_the_notice_texts_are_the_fixed_english_sentences() -> None:
    """DESIGN.md §2 "Notice texts"; permissions-sandbox.md §3."""
    assert [(s.replacement_notice, s.invalidation_notice) for s in SECTION_SPECS.values()] == [
        (
            "The project context below replaces the previous one.",
            "The previous project context no longer applies.",
        ),
        (
            "The following AGENTS.md instructions replace all previously provided AGENTS.md instructions.",
            "The previously provided AGENTS.md instructions no longer apply.",
        ),
        (
            "The skill catalog below replaces the previous one.",
            "The previous skill catalog no longer applies.",
        ),
        (
            "The sandbox policy below replaces the previous one.",
            "The previous sandbox policy no longer applies.",
        ),
    ]
    assert POLICY_SPEC.replacement(POLICY) == (
        "The sandbox policy below replaces the previous one.\n\n" + POLICY
    )


def test_the_message_id_names_turn_model_call_sample_and_section() -> None:
    """§3: message_id = world-state:<turn>:<model call>:<sample seq>:<section>."""
    assert world_state_message_id("t1", 3, 2, S.PROJECT_INSTRUCTIONS) == (
        "world-state:t1:3:2:project/AGENTS.md"
    )
    assert (
        world_state_message_id("t1", 1, 1, "skills/catalog") == "world-state:t1:1:1:skills/catalog"
    )


def test_error_codes_are_the_spec_codes_and_unique() -> None:
    """§3: user_project_context_error, project_instruction_error, skill_catalog_task_error."""
    subclasses = ws_errors.WorldStateError.__subclasses__()
    codes = [cls.code for cls in subclasses]
    assert sorted(codes) == [
        "project_instruction_error",
        "skill_catalog_task_error",
        "user_project_context_error",
    ]
    assert len({*codes, ws_errors.WorldStateError.code}) == len(codes) + 1
