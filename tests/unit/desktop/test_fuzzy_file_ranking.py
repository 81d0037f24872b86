"""Issue 26 §5: file search ranks paths as fzf does — consecutive and word-start matches win,
smart case, every word of the query must match — with a total, stable order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from openwork_core.desktop.fuzzy import RankedPath, SearchablePaths


def rank(query: str, paths: list[str], limit: int) -> list[RankedPath]:
    return SearchablePaths(paths).rank(query, limit)


def _order(query: str, paths: list[str], limit: int = 20) -> list[str]:
    return [r.path for r in rank(query, paths, limit)]


def test_a_consecutive_match_outranks_a_scattered_one() -> None:
    assert _order("main", ["m/a/i/n.txt", "src/main.py"]) == ["src/main.py", "m/a/i/n.txt"]


def test_word_start_matches_outrank_matches_inside_words() -> None:
    """fzf's boundary bonus: `ss` at the starts of `session_store` beats `ss` inside `class`."""
    assert _order("ss", ["lib/klass.py", "lib/session_store.py"]) == [
        "lib/session_store.py",
        "lib/klass.py",
    ]


def test_camel_case_humps_count_as_word_starts() -> None:
    assert _order("mw", ["lib/mxw.ts", "lib/MainWindow.tsx"])[0] == "lib/MainWindow.tsx"


def test_a_match_in_the_file_name_outranks_the_same_match_in_a_directory() -> None:
    assert _order("app", ["app/models/user.py", "web/app.py"])[0] == "web/app.py"


def test_the_file_name_is_tried_when_the_leftmost_window_is_worse() -> None:
    """v1's leftmost window for `main` in `src/domain/main.py` is inside `domain`; the file
    name's own match scores as well as `src/main.py`'s."""
    ranked = rank("main", ["src/domain/main.py", "src/main.py"], 5)
    assert ranked[0].score == ranked[1].score
    assert [r.path for r in ranked] == ["src/main.py", "src/domain/main.py"]


def test_ties_rank_the_shorter_path_first_then_the_path_itself() -> None:
    assert _order("x", ["b/x", "a/x", "aa/x"]) == ["a/x", "b/x", "aa/x"]


def test_a_lower_case_query_ignores_case_and_an_upper_case_letter_makes_it_exact() -> None:
    paths = ["README.md", "docs/readme.txt"]
    assert set(_order("readme", paths)) == set(paths)
    assert _order("README", paths) == ["README.md"]


def test_every_word_of_the_query_must_match_somewhere_in_the_path() -> None:
    paths = ["src/session/runner.py", "src/session/actor.py", "tests/runner.py"]
    assert _order("session run", paths) == ["src/session/runner.py"]


def test_a_query_that_is_not_a_subsequence_matches_nothing_and_an_empty_query_ranks_nothing() -> (
    None
):
    assert _order("zq", ["src/main.py"]) == []
    assert _order("   ", ["src/main.py"]) == []


def test_the_limit_bounds_the_answer_and_keeps_the_best() -> None:
    paths = [f"dir{i}/file{i}.py" for i in range(50)] + ["file.py"]
    assert _order("file", paths, limit=3)[0] == "file.py"
    assert len(_order("file", paths, limit=3)) == 3


def test_characters_that_regular_expressions_treat_as_special_are_matched_literally() -> None:
    paths = ["a[b]/c.py", "a.b/(c)+.py", "abc.py"]
    assert _order("[b]", paths) == ["a[b]/c.py"]
    assert _order("(c)+", paths) == ["a.b/(c)+.py"]


def test_letters_that_lower_case_to_two_characters_keep_positions_aligned() -> None:
    """`İ` lower-cases to two characters; matching must still score the right positions."""
    assert _order("stanbul", ["İstanbul/notes.md"]) == ["İstanbul/notes.md"]


@given(
    st.lists(st.text(alphabet="abcAB/_.-x ", min_size=1, max_size=12), min_size=1, max_size=30),
    st.text(alphabet="abAB/_x", min_size=1, max_size=4),
)
def test_every_ranked_path_contains_each_query_word_as_a_subsequence(
    paths: list[str], query: str
) -> None:
    searchable = SearchablePaths(paths)
    sensitive = any(c.isupper() for c in query)
    for ranked in searchable.rank(query, 50):
        text = ranked.path if sensitive else ranked.path.lower()
        for word in query.split():
            word = word if sensitive else word.lower()
            remaining = iter(text)
            assert all(char in remaining for char in word)
    expected = {
        p
        for p in paths
        if all(
            _is_subsequence(w if sensitive else w.lower(), p if sensitive else p.lower())
            for w in query.split()
        )
    }
    assert {r.path for r in searchable.rank(query, 10_000)} == expected


def _is_subsequence(word: str, text: str) -> bool:
    remaining = iter(text)
    return all(char in remaining for char in word)
