"""One node's label from its ranked candidates: the best phrases taken first.

Each candidate stands for its whole term (`candidates.NodeTerms`); two taken phrases that
one longer candidate joins become it; a phrase that is a form of one already taken
(inflection, nesting, abbreviation and expansion: `terms.same_term`) is skipped, or
replaces it when it says more. A modifier ("model-based", "theoretical": it names nothing
alone) is taken hidden, in its rank's place: it shows only once a later candidate joins or
extends it into a whole term ("model-based reinforcement learning").
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
    chosen: list[list] = []  # [phrase, score, hidden]
    for seen, (candidate, score) in enumerate(candidates):
        if seen == SCAN_LIMIT or _full(chosen, score):
            break
        phrase, hidden = candidate, False
        if context:  # trimmed before and after: "existing active" -> "existing active learning"
            candidate = context.trimmed(candidate)
            phrase = context.trimmed(context.whole(candidate))
            if not context.fits(phrase):  # trimmed to a piece of a sentence
                continue
            hidden = not context.stands_alone(phrase)
        clash = [i for i, (p, _, _) in enumerate(chosen) if terms.same_term(phrase, p)]
        if clash and _took_place(chosen, clash, (phrase, candidate, score, hidden)):
            continue
        if not (context and _joined(chosen, phrase, context)) and _room(chosen, hidden):
            chosen.append([phrase, score, hidden])
    # A joined or extended modifier may show beside LONG_PHRASES others: the best ones stay.
    shown = [(p, s) for p, s, hidden in chosen if not hidden][:LONG_PHRASES]
    if not shown:
        return NodeLabel(short=NO_PHRASES, long=NO_PHRASES, phrases=())
    n_short = 2 if len(shown) > 1 and shown[1][1] >= SHORT_SECOND_RATIO * shown[0][1] else 1
    best = tuple(p for p, _ in shown)
    return NodeLabel(short=", ".join(best[:n_short]), long=", ".join(best), phrases=best)


def _took_place(chosen: list[list], clash: list[int], new: tuple[str, str, float, bool]) -> bool:
    """Whether a phrase that is a form of taken ones (`clash`) is done with: it replaces the
    one it beats, in its place, and the hidden modifiers it names go, or it is skipped. It
    beats the one shown phrase it clashes with when it is a better form of it
    (`_better_form`: the ranked phrase's own merit), hidden modifiers only when it names the
    first of them ("theoretical analysis" for "theoretical"); a phrase clashing with hidden
    ones only and naming none is taken as any other ("policy" beside "policy gradient")."""
    phrase, candidate, score, hidden = new
    shown = [i for i in clash if not chosen[i][2]]
    if shown:
        place = shown[0]
        if len(shown) > 1 or hidden or not _better_form(phrase, candidate, score, chosen[place]):
            return True
    else:
        place = clash[0]
        if hidden or not _names(phrase, chosen[place][0]):
            return hidden
    chosen[place][0::2] = [phrase, False]
    for i in sorted((i for i in clash if i != place), reverse=True):
        del chosen[i]  # hidden modifiers the phrase names
    return True


def _names(phrase: str, modifier: str) -> bool:
    """Whether `phrase` is a whole term holding the modifier, or its expansion."""
    return terms.extends(phrase, modifier) or terms.abbreviates(modifier, phrase)


def _room(chosen: list[list], hidden: bool) -> bool:
    """Whether one more phrase may be taken: LONG_PHRASES shown, and as many hidden (each
    one a join `_joined` tries against every later candidate)."""
    return sum(h == hidden for _, _, h in chosen) < LONG_PHRASES


def _full(chosen: list[list], score: float) -> bool:
    """Whether LONG_PHRASES show and a candidate of this score could extend none of them."""
    shown = [s for _, s, hidden in chosen if not hidden]
    return len(shown) >= LONG_PHRASES and not any(score >= EXTEND_RATIO * s for s in shown)


def _others(chosen: list[list], skip: int) -> list[list]:
    return [c for i, c in enumerate(chosen) if i != skip]


def _joined(chosen: list[list], phrase: str, context: NodeTerms) -> bool:
    """Replace a taken phrase by the longer term joining it with `phrase`, if there is one
    (a whole term: it shows, although the taken phrase or `phrase` was a hidden modifier)."""
    for i, (taken, _, _) in enumerate(chosen):
        term = context.joint(phrase, taken)
        term = context.trimmed(term) if term else None
        if term == taken or (term and not context.stands_alone(term)):  # trimmed to a piece
            continue
        if term and not any(terms.same_term(term, p) for p, _, _ in _others(chosen, i)):
            chosen[i][0::2] = [term, False]
            return True
    return False
