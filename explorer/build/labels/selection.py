"""One node's label from its ranked candidates: the best phrases taken first.

Each candidate stands for its whole term (`candidates.NodeTerms`); two taken phrases that
one longer candidate joins become it; a phrase that is a form of one already taken
(inflection, nesting, abbreviation and expansion: `terms.same_term`) is skipped, or
replaces it when it says more.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.build.labels import terms

if TYPE_CHECKING:
    from explorer.build.labels.candidates import NodeTerms

LONG_PHRASES = 8
# The map shows a second phrase only when it is nearly as characteristic as the first.
SHORT_SECOND_RATIO = 0.5
# A longer phrase replaces a taken phrase it extends when it scores at least this share of it.
EXTEND_RATIO = 0.6
# Candidates read per node at most: extensions are looked for among the best ones only.
SCAN_LIMIT = 200
NO_PHRASES = "(no phrases)"


@dataclass(frozen=True)
class NodeLabel:
    """One node's label: `short` for the map, where space is scarce; `long` for tables."""

    short: str
    long: str
    phrases: tuple[str, ...]  # the chosen phrases, best first (at most LONG_PHRASES)


def _better_form(phrase: str, candidate: str, score: float, taken: list) -> bool:
    """Whether `phrase` (the whole term of the ranked `candidate`) should replace the taken
    phrase it is a form of: it spells out the taken abbreviation, or the candidate itself
    extends the taken phrase and scores at least EXTEND_RATIO of it."""
    if terms.abbreviates(taken[0], phrase):
        return True
    return terms.extends(candidate, taken[0]) and score >= EXTEND_RATIO * taken[1]


def select(candidates: Iterable[tuple[str, float]], context: NodeTerms | None = None) -> NodeLabel:
    """Take phrases best first (see the module's docstring for what gives way to what)."""
    chosen: list[list] = []  # [phrase, score]
    for seen, (candidate, score) in enumerate(candidates):
        if seen == SCAN_LIMIT or (len(chosen) == LONG_PHRASES and not _extendable(chosen, score)):
            break
        phrase = candidate
        if context:  # trimmed before and after: "existing active" -> "existing active learning"
            candidate = context.trimmed(candidate)
            phrase = context.trimmed(context.whole(candidate))
            if not context.fits(phrase):  # trimmed to a piece of a sentence
                continue
        clash = [i for i, (p, _) in enumerate(chosen) if terms.same_term(phrase, p)]
        # Whether it replaces what it clashes with is the ranked phrase's own merit.
        if len(clash) == 1 and _better_form(phrase, candidate, score, chosen[clash[0]]):
            if not any(terms.same_term(phrase, p) for p, _ in _others(chosen, clash[0])):
                chosen[clash[0]][0] = phrase
        elif (
            not clash
            and not (context and _joined(chosen, phrase, context))
            and len(chosen) < LONG_PHRASES
        ):
            chosen.append([phrase, score])
    if not chosen:
        return NodeLabel(short=NO_PHRASES, long=NO_PHRASES, phrases=())
    n_short = 2 if len(chosen) > 1 and chosen[1][1] >= SHORT_SECOND_RATIO * chosen[0][1] else 1
    best = tuple(p for p, _ in chosen)
    return NodeLabel(short=", ".join(best[:n_short]), long=", ".join(best), phrases=best)


def _others(chosen: list[list], skip: int) -> list[list]:
    return [c for i, c in enumerate(chosen) if i != skip]


def _joined(chosen: list[list], phrase: str, context: NodeTerms) -> bool:
    """Replace a taken phrase by the longer term joining it with `phrase`, if there is one."""
    for i, (taken, _) in enumerate(chosen):
        term = context.joint(phrase, taken)
        term = context.trimmed(term) if term else None
        if term == taken:  # only a boilerplate word joined them
            continue
        if term and not any(terms.same_term(term, p) for p, _ in _others(chosen, i)):
            chosen[i][0] = term
            return True
    return False


def _extendable(chosen: list[list], score: float) -> bool:
    """Whether a candidate of this score could still extend a taken phrase."""
    return any(score >= EXTEND_RATIO * s for _, s in chosen)
