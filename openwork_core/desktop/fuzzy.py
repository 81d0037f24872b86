"""Fuzzy ranking of workspace paths for the desktop's @-mention (issue 26 §5): pure functions.

The score is fzf's v1 algorithm (``FuzzyMatchV1`` + ``calculateScore``), computed from the matched
positions alone: a forward scan proves the term is a subsequence and finds where its last
character can end at the earliest, a backward scan from there finds the tightest window, and
each matched character scores ``MATCH`` plus the bonus of its position — a word start after
``/``, ``_``, ``-``, ``.`` or a space, a camelCase hump, or a run of consecutive matches — while
each gap costs ``GAP_START`` and ``GAP_EXTENSION`` per further character. The first character's
bonus counts twice. The constants are fzf's ``path`` scheme (``--scheme=path``): a word start
after ``/`` earns more than one after a space, and the start of the path counts as one after
``/``. A term is also tried on the file name alone, which v1's leftmost window can
miss (``main`` in ``src/domain/main.py``), and the better score counts. Smart case as in fzf: a
query with an upper-case letter is matched case sensitively, otherwise case does not matter.
Words of the query separated by spaces must all match; their scores add up.

Ties rank the path whose match starts in its file name first, then the shorter path, then the
path itself, so the order is total and stable.

Speed: the candidates of a term are found by one regular expression over all paths joined by
newlines, ``[^a\\n]*a[^b\\n]*b…`` (each class stops at the first occurrence, so a line that does
not match fails in linear time); only the paths that are candidates of every term are scored,
from a per-path string of character classes made by ``str.translate``.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

MATCH = 16
GAP_START = -3
GAP_EXTENSION = -1
BONUS_BOUNDARY = MATCH // 2
BONUS_NON_WORD = MATCH // 2
BONUS_CAMEL = BONUS_BOUNDARY + GAP_EXTENSION
BONUS_CONSECUTIVE = -(GAP_START + GAP_EXTENSION)
BONUS_BOUNDARY_DELIMITER = BONUS_BOUNDARY + 1
BONUS_BOUNDARY_WHITE = BONUS_BOUNDARY
FIRST_CHAR_MULTIPLIER = 2

# character classes, one character each, as fzf has them
_WHITE, _NON_WORD, _DELIMITER, _LOWER, _UPPER, _LETTER, _NUMBER = "wndluLN"
_WORD = frozenset((_LOWER, _UPPER, _LETTER, _NUMBER))


def _class(char: str) -> str:
    if char.isspace():
        return _WHITE
    if char in "/,:;|":
        return _DELIMITER
    if char.isdigit():
        return _NUMBER
    if char.islower():
        return _LOWER
    if char.isupper():
        return _UPPER
    if char.isalpha():
        return _LETTER
    return _NON_WORD


_ASCII_CLASSES = str.maketrans({chr(c): _class(chr(c)) for c in range(128)})


def _bonus_for(previous: str, current: str) -> int:
    """fzf's ``bonusFor``: what a match in class ``current`` earns after class ``previous``."""
    if current in _WORD:
        if previous == _WHITE:
            return BONUS_BOUNDARY_WHITE
        if previous == _DELIMITER:
            return BONUS_BOUNDARY_DELIMITER
        if previous == _NON_WORD:
            return BONUS_BOUNDARY
        if (previous == _LOWER and current == _UPPER) or (
            previous != _NUMBER and current == _NUMBER
        ):
            return BONUS_CAMEL
        return 0
    if current == _WHITE:
        return BONUS_BOUNDARY_WHITE
    return BONUS_NON_WORD


_CLASS_SET = (_WHITE, _NON_WORD, _DELIMITER, _LOWER, _UPPER, _LETTER, _NUMBER)
_BONUS = {p + c: _bonus_for(p, c) for p in _CLASS_SET for c in _CLASS_SET}
"""The bonus of a match, keyed by the two classes: the character before it and its own."""


def _classes(path: str) -> str:
    """One class character per character of ``path``, preceded by the class before the start
    (a delimiter, so the first character is a word start like one after ``/``)."""
    mapped = path.translate(_ASCII_CLASSES)
    if not mapped.isascii():
        mapped = "".join(c if c in _CLASS_SET else _class(c) for c in mapped)
    return _DELIMITER + mapped


def _lower(path: str) -> str:
    """``path`` in lower case, position for position (a few letters lower to two characters)."""
    lowered = path.lower()
    if len(lowered) == len(path):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in path)


def _term_score(term: str, text: str, classes: str, start: int) -> tuple[int, int] | None:
    """fzf v1 for one term in ``text[start:]``: the score of the tightest window's matched
    positions (``calculateScore`` computed from the positions alone) and where the window
    starts; None when the term is not a subsequence there."""
    index = start - 1
    for char in term:
        index = text.find(char, index + 1)
        if index < 0:
            return None
    if len(term) == 1:
        return MATCH + _BONUS[classes[index : index + 2]] * FIRST_CHAR_MULTIPLIER, index
    positions = [index]
    for char in term[-2::-1]:
        index = text.rfind(char, start, index)
        positions.append(index)
    positions.reverse()
    score = first_bonus = consecutive = 0
    previous = positions[0] - 1
    for position in positions:
        if position != previous + 1:
            score += GAP_START + (position - previous - 2) * GAP_EXTENSION
            consecutive = 0
        bonus = _BONUS[classes[position : position + 2]]
        if consecutive == 0:
            first_bonus = bonus
        else:
            if bonus >= BONUS_BOUNDARY and bonus > first_bonus:
                first_bonus = bonus
            bonus = max(bonus, first_bonus, BONUS_CONSECUTIVE)
        score += MATCH + bonus
        consecutive += 1
        previous = position
    begin = positions[0]
    return score + _BONUS[classes[begin : begin + 2]] * (FIRST_CHAR_MULTIPLIER - 1), begin


@dataclass(frozen=True, slots=True)
class RankedPath:
    path: str
    score: int


MAX_BONUS = max(_BONUS.values())


def best_possible(term: str) -> int:
    """No match of ``term`` can score more: every character at a best-bonus position, in one
    run (the first character's bonus counted twice)."""
    return len(term) * (MATCH + MAX_BONUS) + MAX_BONUS * (FIRST_CHAR_MULTIPLIER - 1)


class SearchablePaths:
    """A fixed list of paths prepared once for many queries, in rank order for ties (shorter
    first, then by the path): their lower-case forms, their class strings, where their file
    names start, and both forms joined by newlines (a path with a newline is left out)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = sorted((p for p in paths if "\n" not in p), key=lambda p: (len(p), p))
        self._lower = [_lower(p) for p in self.paths]
        self._classes = [_classes(p) for p in self.paths]
        self._name_starts = [p.rfind("/") + 1 for p in self.paths]
        self._text = {True: "\n".join(self.paths), False: "\n".join(self._lower)}
        self._line_of: dict[int, int] = {}
        start = 0
        for index, path in enumerate(self.paths):
            self._line_of[start] = index
            start += len(path) + 1

    def __len__(self) -> int:
        return len(self.paths)

    def _candidates(self, term: str, sensitive: bool) -> Iterator[int]:
        """The paths where ``term`` is a subsequence, in tie order."""
        pattern = "".join(f"[^{re.escape(c)}\\n]*{re.escape(c)}" for c in term)
        line_of = self._line_of
        for found in re.finditer(f"(?m)^{pattern}", self._text[sensitive]):
            yield line_of[found.start()]

    def rank(self, query: str, limit: int) -> list[RankedPath]:
        """The ``limit`` best paths for ``query``; an empty query ranks nothing.

        Candidates arrive in tie order, so once the ``limit`` kept are all at the best possible
        score with their match in the file name, no later candidate can displace one: stop."""
        terms = query.split()
        if not terms or limit <= 0 or not self.paths:
            return []
        sensitive = any(char.isupper() for char in query)
        if not sensitive:
            terms = [_lower(t) for t in terms]
        texts = self.paths if sensitive else self._lower
        ceiling = (sum(best_possible(t) for t in terms), True)
        kept: list[tuple[int, bool, int]] = []  # (score, in name, -index): kept[0] is the worst
        score_of = _single if len(terms) == 1 and len(terms[0]) == 1 else _match
        candidates: Iterable[int] = self._candidates(terms[0], sensitive)
        if len(terms) > 1:  # a path must hold every term: only those are scored, in tie order
            candidates = sorted(
                set(candidates).intersection(*(self._candidates(t, sensitive) for t in terms[1:]))
            )
        for index in candidates:
            if len(kept) == limit and kept[0][:2] == ceiling:
                break
            found = score_of(terms, texts[index], self._classes[index], self._name_starts[index])
            if found is None:
                continue
            key = (found[0], found[1], -index)
            if len(kept) < limit:
                heapq.heappush(kept, key)
            elif key > kept[0]:
                heapq.heapreplace(kept, key)
        return [
            RankedPath(self.paths[-negated], score)
            for score, _, negated in sorted(kept, reverse=True)
        ]


def _match(
    terms: Sequence[str], text: str, classes: str, name_start: int
) -> tuple[int, bool] | None:
    """The score of every term in ``text`` (the path, maybe lower-cased) and whether the first
    term's match starts in the file name; None when a term is not a subsequence."""
    total = 0
    first_in_name = False
    for k, term in enumerate(terms):
        found = _term_score(term, text, classes, 0)
        if found is None:
            return None
        score, begin = found
        in_name = begin >= name_start
        if not in_name and name_start:
            named = _term_score(term, text, classes, name_start)
            if named is not None:
                score = max(score, named[0])
                in_name = True
        total += score
        if k == 0:
            first_in_name = in_name
    return total, first_in_name


def _single(
    terms: Sequence[str], text: str, classes: str, name_start: int
) -> tuple[int, bool] | None:
    """``_match`` for a query of one character (the first keystroke, and the most candidates):
    its score is that of its first occurrence, or of its first in the file name if better."""
    char = terms[0]
    first = text.find(char)
    if first < 0:
        return None
    bonus = _BONUS[classes[first : first + 2]]
    in_name = first >= name_start
    if not in_name:
        named = text.find(char, name_start)
        if named >= 0:
            bonus = max(bonus, _BONUS[classes[named : named + 2]])
            in_name = True
    return MATCH + bonus * FIRST_CHAR_MULTIPLIER, in_name
