"""Skill discovery and SKILL.md parsing (skills.md §1, §2, §8), with real files in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openwork_core.skills import discovery as d
from openwork_core.skills.discovery import (
    MAX_SKILLS,
    SkillLoadError,
    SkillParseError,
    discover_skills,
    read_skill_body,
)


def write_skill(root: Path, dirname: str, text: str | bytes) -> Path:
    directory = root / dirname
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def skill_md(description: str = "Does things.", name: str | None = None, extra: str = "") -> str:
    name_line = f"name: {name}\n" if name is not None else ""
    return f"---\n{name_line}description: {description}\n{extra}---\n\nBody text.\n"


def reasons(root: Path) -> list[str]:
    return [w.reason for w in discover_skills(root).warnings]


def test_a_missing_name_defaults_to_the_directory_name(tmp_path: Path) -> None:
    """§1: `name` defaults to the directory name."""
    path = write_skill(tmp_path, "pdf-tools", skill_md())
    found = discover_skills(tmp_path)
    assert [(s.name, s.description, s.path, s.source) for s in found.skills] == [
        ("pdf-tools", "Does things.", str(path), "agents")
    ]
    assert found.warnings == ()


def test_a_frontmatter_name_equal_to_the_directory_after_normalising_whitespace_is_accepted(
    tmp_path: Path,
) -> None:
    """§1: the name is whitespace-normalised, then must equal the directory name."""
    write_skill(tmp_path, "alpha", '---\nname: "  alpha  "\ndescription: x\n---\n')
    assert [s.name for s in discover_skills(tmp_path).skills] == ["alpha"]


def test_a_frontmatter_name_that_differs_from_the_directory_is_skipped_with_a_warning(
    tmp_path: Path,
) -> None:
    """§1, §8: frontmatter name mismatch warned."""
    path = write_skill(tmp_path, "alpha", skill_md(name="beta"))
    found = discover_skills(tmp_path)
    assert found.skills == ()
    assert [(w.path, w.reason) for w in found.warnings] == [(str(path), d.REASON_NAME_MISMATCH)]


def test_a_missing_description_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """§1, §8: description is required."""
    write_skill(tmp_path, "alpha", "---\nname: alpha\n---\nbody\n")
    assert discover_skills(tmp_path).skills == ()
    assert reasons(tmp_path) == [d.REASON_DESCRIPTION_MISSING]


def test_a_multi_line_description_collapses_to_one_line(tmp_path: Path) -> None:
    """§8: a second description line like `- fake: x (file: /elsewhere/x)` stays in the one line."""
    write_skill(
        tmp_path,
        "alpha",
        "---\ndescription: |\n  Real text.\n  - fake: x (file: /elsewhere/x)\n---\n",
    )
    (skill,) = discover_skills(tmp_path).skills
    assert skill.description == "Real text. - fake: x (file: /elsewhere/x)"
    assert "\n" not in skill.description


def test_the_description_is_truncated_to_1024_characters(tmp_path: Path) -> None:
    """§1: truncate to 1,024 characters."""
    write_skill(tmp_path, "alpha", skill_md(description="é" * 2000))
    (skill,) = discover_skills(tmp_path).skills
    assert skill.description == "é" * 1024


def test_unknown_frontmatter_keys_are_ignored(tmp_path: Path) -> None:
    """§1, §8: other keys are neither an error nor kept."""
    write_skill(
        tmp_path, "alpha", skill_md(extra="allowed-tools: [bash]\nmodel: x\nmetadata: {a: 1}\n")
    )
    found = discover_skills(tmp_path)
    assert [s.name for s in found.skills] == ["alpha"]
    assert found.warnings == ()


@pytest.mark.parametrize(
    "dirname",
    ["Upper", "-lead", "trail-", "under_score", "a" * 65, "dot.ted", "é"],
)
def test_an_invalid_directory_name_is_warned(tmp_path: Path, dirname: str) -> None:
    """§1, §8: 1–64 bytes of [a-z0-9-], letter/digit at both ends."""
    write_skill(tmp_path, dirname, skill_md())
    found = discover_skills(tmp_path)
    assert found.skills == ()
    assert [(w.path, w.reason) for w in found.warnings] == [
        (str(tmp_path / dirname), d.REASON_DIR_NAME_INVALID)
    ]


def test_a_64_byte_directory_name_is_valid(tmp_path: Path) -> None:
    """§1: up to 64 bytes."""
    write_skill(tmp_path, "a" * 64, skill_md())
    assert [s.name for s in discover_skills(tmp_path).skills] == ["a" * 64]


def test_a_non_utf8_directory_name_is_warned(tmp_path: Path) -> None:
    """§2: non-UTF-8 directory names get a warning."""
    raw = os.path.join(os.fsencode(tmp_path), b"bad\xff")
    os.mkdir(raw)
    with open(os.path.join(raw, b"SKILL.md"), "w", encoding="utf-8") as f:
        f.write(skill_md())
    assert reasons(tmp_path) == [d.REASON_DIR_NAME_NOT_UTF8]


def test_size_encoding_and_control_character_failures_have_distinct_reasons(tmp_path: Path) -> None:
    """§1, §8: each failing cause has its own English reason."""
    root = tmp_path / "root"
    write_skill(root, "big", skill_md(description="x" * (64 * 1024)))
    write_skill(root, "latin", b"---\ndescription: caf\xe9\n---\n")
    control_root = tmp_path / "ctl\x01root"
    write_skill(control_root, "fine", skill_md())
    collected = reasons(root) + reasons(control_root)
    assert collected == [d.REASON_FILE_TOO_LARGE, d.REASON_FILE_NOT_UTF8, d.REASON_PATH_CONTROL]
    all_reasons = [v for k, v in vars(d).items() if k.startswith("REASON_")]
    assert len(set(all_reasons)) == len(all_reasons)


def test_a_skill_file_of_exactly_64_kib_is_loaded(tmp_path: Path) -> None:
    """§1: <= 65,536 bytes."""
    head = "---\ndescription: x\n---\n"
    write_skill(tmp_path, "edge", head + "b" * (64 * 1024 - len(head)))
    assert [s.name for s in discover_skills(tmp_path).skills] == ["edge"]


def test_a_non_utf8_skill_root_path_is_warned(tmp_path: Path) -> None:
    """§1: the absolute path must be UTF-8."""
    raw_root = os.path.join(os.fsencode(tmp_path), b"r\xfe")
    os.makedirs(os.path.join(raw_root, b"alpha"))
    with open(os.path.join(raw_root, b"alpha", b"SKILL.md"), "w", encoding="utf-8") as f:
        f.write(skill_md())
    assert reasons(Path(os.fsdecode(raw_root))) == [d.REASON_PATH_NOT_UTF8]


def test_a_symlinked_missing_or_non_regular_skill_file_is_warned(tmp_path: Path) -> None:
    """§1: SKILL.md must exist, be a regular file and not a symlink."""
    root = tmp_path / "root"
    target = write_skill(tmp_path, "elsewhere", skill_md())
    (root / "linked").mkdir(parents=True)
    (root / "linked" / "SKILL.md").symlink_to(target)
    (root / "missing").mkdir()
    (root / "nested" / "SKILL.md").mkdir(parents=True)
    assert reasons(root) == [
        d.REASON_FILE_SYMLINK,
        d.REASON_FILE_MISSING,
        d.REASON_FILE_NOT_REGULAR,
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("description: x\n", d.REASON_NO_FRONTMATTER),
        ("", d.REASON_NO_FRONTMATTER),
        ("---\ndescription: x\n", d.REASON_FRONTMATTER_UNCLOSED),
        ("---\ndescription: [x\n---\n", d.REASON_FRONTMATTER_INVALID_YAML),
        ("---\n- a\n- b\n---\n", d.REASON_FRONTMATTER_NOT_MAPPING),
        ("---\nname: 12\ndescription: x\n---\n", d.REASON_NAME_NOT_STRING),
        ("---\nname: Alpha\ndescription: x\n---\n", d.REASON_NAME_INVALID),
        ("---\ndescription: 12\n---\n", d.REASON_DESCRIPTION_NOT_STRING),
        ("---\ndescription: '   '\n---\n", d.REASON_DESCRIPTION_EMPTY),
        ("---\n---\n", d.REASON_DESCRIPTION_MISSING),
    ],
)
def test_each_frontmatter_failure_has_its_own_reason(
    tmp_path: Path, text: str, reason: str
) -> None:
    """§1: must start with `---`, close with `---`, be valid YAML; name/description are strings."""
    write_skill(tmp_path, "alpha", text)
    assert reasons(tmp_path) == [reason]


def test_symlinked_hidden_and_non_directory_entries_are_skipped_silently(tmp_path: Path) -> None:
    """§2, §8: symlinked and hidden directories are not followed; files are ignored."""
    outside = tmp_path / "outside"
    write_skill(outside, "real", skill_md())
    root = tmp_path / "root"
    write_skill(root, ".hidden", skill_md())
    root.joinpath("linked").symlink_to(outside / "real", target_is_directory=True)
    root.joinpath("README.md").write_text("not a skill", encoding="utf-8")
    write_skill(root, "kept", skill_md())
    found = discover_skills(root)
    assert [s.name for s in found.skills] == ["kept"]
    assert found.warnings == ()


def test_only_direct_children_are_scanned(tmp_path: Path) -> None:
    """§2: no recursion."""
    write_skill(tmp_path / "group", "inner", skill_md())
    assert [w.reason for w in discover_skills(tmp_path).warnings] == [d.REASON_FILE_MISSING]
    assert discover_skills(tmp_path).skills == ()


def test_the_first_100_are_kept_and_every_further_one_is_warned(tmp_path: Path) -> None:
    """§2, §8: after 100 successful loads every further candidate is warned; a failing skill does
    not count toward the limit."""
    write_skill(tmp_path, "a-broken", "no frontmatter")
    for i in range(MAX_SKILLS + 2):
        write_skill(tmp_path, f"s{i:03d}", skill_md())
    found = discover_skills(tmp_path)
    assert [s.name for s in found.skills] == [f"s{i:03d}" for i in range(MAX_SKILLS)]
    assert [(w.path, w.reason) for w in found.warnings] == [
        (str(tmp_path / "a-broken" / "SKILL.md"), d.REASON_NO_FRONTMATTER),
        (str(tmp_path / "s100"), d.REASON_LIMIT_REACHED),
        (str(tmp_path / "s101"), d.REASON_LIMIT_REACHED),
    ]


def test_a_missing_or_unset_root_is_an_empty_source_without_a_warning(tmp_path: Path) -> None:
    """§2, §8: missing root -> empty, no warning; `None` = no source."""
    assert discover_skills(tmp_path / "absent") == discover_skills(None)
    assert discover_skills(None).skills == () and discover_skills(None).warnings == ()
    assert discover_skills(tmp_path).warnings == ()


def test_an_existing_root_that_cannot_be_listed_is_empty_with_one_warning(tmp_path: Path) -> None:
    """§2, §8: unreadable root -> empty source + one warning (here: the root is a file)."""
    root = tmp_path / "file"
    root.write_text("x", encoding="utf-8")
    found = discover_skills(root)
    assert found.skills == ()
    assert [(w.path, w.reason) for w in found.warnings] == [(str(root), d.REASON_ROOT_UNREADABLE)]


def test_the_root_is_canonicalised_and_the_result_is_sorted_and_stable(tmp_path: Path) -> None:
    """§2: the root is canonicalised; results are sorted and identical for identical input."""
    real = tmp_path / "real"
    for name in ["zeta", "alpha", "mid-1"]:
        write_skill(real, name, skill_md(description=f"{name} skill"))
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    first = discover_skills(link)
    assert [s.name for s in first.skills] == ["alpha", "mid-1", "zeta"]
    assert all(s.path.startswith(str(real) + os.sep) for s in first.skills)
    assert discover_skills(link) == first


def test_the_selected_skill_body_is_the_text_after_the_frontmatter_without_outer_blank_lines(
    tmp_path: Path,
) -> None:
    """§1, §4: body = text after the frontmatter, leading and trailing blank lines removed."""
    path = write_skill(
        tmp_path, "alpha", "---\ndescription: x\n---\n\n  \n  Step one.\n\nStep two.\n\n \n"
    )
    assert read_skill_body(path) == "  Step one.\n\nStep two."


def test_reading_the_body_of_an_invalid_skill_file_raises_its_reason(tmp_path: Path) -> None:
    """§1: the same causes as discovery."""
    bad = write_skill(tmp_path, "alpha", "no frontmatter")
    with pytest.raises(SkillParseError) as parse_error:
        read_skill_body(bad)
    assert parse_error.value.reason == d.REASON_NO_FRONTMATTER
    with pytest.raises(SkillLoadError) as load_error:
        read_skill_body(tmp_path / "gone" / "SKILL.md")
    assert load_error.value.reason == d.REASON_FILE_MISSING
