"""When two phrases name one term: inflections, nesting, abbreviation and expansion.

Only for comparing phrases that are candidates for one label; nothing here changes a phrase.
"""

from __future__ import annotations

from functools import lru_cache

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

# Two words are inflections of one another when they share a prefix this long, and it
# leaves at most VARIANT_TAIL letters of the longer one ("differential" and
# "differentially", "privacy" and "private", "graph" and "graphs").
VARIANT_PREFIX = 5
VARIANT_TAIL = 4
# Phrases whose content words are remembered: label selection asks for the same phrases'
# words tens of thousands of times while a build's few hundred nodes pick their labels.
_REMEMBERED = 1 << 16


def singular(word: str) -> str:
    """A crude singular, only for comparing phrases: "graphs" nests with "graph",
    "processes" with "process", "policies" with "policy"."""
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def term_form(term: str) -> str:
    """The term with each word singular ("graph neural networks" -> "graph neural
    network"): the vocabulary's `form`, by which the views show one inflection of a term."""
    return " ".join(singular(w) for w in term.split())


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def variant(a: str, b: str) -> bool:
    """Whether two words are forms of one word (plural, adverb, noun and adjective)."""
    a, b = a.replace("-", ""), b.replace("-", "")  # "multi-label" and "multilabel"
    if a[:1] != b[:1]:  # every rule below needs a common first letter: most pairs end here
        return False
    if singular(a) == singular(b):
        return True
    prefix = _common_prefix(a, b)
    if prefix == min(len(a), len(b)) >= 4:  # one word starts the other: "fair", "fairness"
        return max(len(a), len(b)) - prefix <= VARIANT_TAIL
    return prefix >= VARIANT_PREFIX and prefix >= max(len(a), len(b)) - VARIANT_TAIL


@lru_cache(maxsize=_REMEMBERED)
def content_words(phrase: str) -> tuple[str, ...]:
    """The phrase's words bar stop words ("method of multipliers" -> method, multipliers)."""
    return tuple(w for w in phrase.split() if w not in ENGLISH_STOP_WORDS)


def _covers(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Every word of `a` has a form in `b`."""
    return all(any(variant(x, y) for y in b) for x in a)


def initials(phrase: str) -> str:
    """First letters of the content words, hyphenated parts counted apart:
    "self-supervised learning" -> "ssl"."""
    return "".join(part[0] for w in content_words(phrase) for part in w.split("-") if part)


def abbreviates(short: str, long: str) -> bool:
    """Whether one word abbreviates a phrase of several: "gans" and "generative
    adversarial networks", "rkhs" and "reproducing kernel hilbert space"; a hyphenated word
    gives one letter or one per part ("nmf" and "nnmf" for "non-negative matrix
    factorization")."""
    words = content_words(long)
    if " " in short or len(words) < 2 or not short.isalpha():
        return False
    forms = {initials(long), "".join(w[0] for w in words)}
    return any(len(f) >= 2 and short in (f, f + "s") for f in forms)


def same_term(a: str, b: str) -> bool:
    """Whether two phrases are one term, or one holds the other: their content words cover
    each other's (up to inflection), or one abbreviates the other."""
    wa, wb = content_words(a), content_words(b)
    if _covers(wa, wb) or _covers(wb, wa):
        return True
    return abbreviates(a, b) or abbreviates(b, a)


def extends(longer: str, shorter: str) -> bool:
    """Whether `longer` holds `shorter` and says more (more content words)."""
    wl, ws = content_words(longer), content_words(shorter)
    return len(wl) > len(ws) and _covers(ws, wl)
