"""How specific a phrase is, measured against recent abstracts of five venue groups.

The shipped table (`background.json.gz`, made by `python -m explorer.build.background_table`)
holds, for machine learning (ICML, NeurIPS, AISTATS), vision (CVPR), language (ACL), web
(WWW) and general AI (AAAI), from 2017 on, the share of abstracts that use each phrase the
typical group uses (median share at least 0.2%).
Boilerplate is what every field writes: a phrase used by at least `EVERYWHERE` of the
abstracts of *every* group, and by no group more than `UNEVEN` times as often as by the group
that uses it least ("propose", "novel", "settings", "better"). A phrase one field uses far
more than another is that field's subject ("neural networks": 2% of ACL abstracts, 15% of
CVPR's), however common it is there. A phrase of several words is boilerplate also when all
its words bar stop words are ("proposed method", "representation learning"), or when it
holds a stop word, as a piece of a sentence does, and any of them is ("code is available",
"state of the art"); "domain adaptation" stays a subject although "domain" alone is
boilerplate. A phrase the table lacks is rare in most groups, so otherwise specific.

Specificity, in [0, 1], grades the same two numbers: 1 - min(1, b / EVERYWHERE) *
min(1, UNEVEN * b / m), with b the phrase's least and m its largest share across the groups.
It is 0 exactly for boilerplate and 1 for whatever some field rarely writes.

A subject is repeated: an abstract about diffusion says "diffusion" again (half of those
that use it do), one that reports "findings" or is "computationally efficient" says so once
(one in twenty). A phrase the venues' abstracts repeat in fewer than REPEATED of those using
it is said in passing, whatever field writes it, and its specificity is scaled by its
repeat share over REPEATED: on a list of 38 papers, where three using "highlighting" look
like a subject, the venues' habit decides, and it decides alike on any list.

A subject also stands alone. "Theoretical", "bayesian", "optimal" or "large language" are
written right before another content word in almost every use ("theoretical analysis",
"large language models"): a modifier names nothing alone, the phrase it begins does. A
phrase the venues write alone (before punctuation, a stop word or the end) in fewer than
ALONE of its uses is one ("theoretical" alone in 0.06 of its uses, "bayesian" 0.03,
"optimal" 0.17; nouns "regret" 0.52, "weather" 0.29, "diffusion" 0.28, "tokens" 0.91): a
keyword list scales its specificity by that share over ALONE (`keyword_weights`), a label
shows it only inside a whole term (`stands_alone`, labels/selection.py). `specificity`
leaves it whole: labels grow "reproducing kernel" into "reproducing kernel hilbert space".

Label phrases also need a noun at both ends ("detection framework designed", "provide
personalized recommendations" are pieces of sentences). `verb_like` reads, per word, how
often the venues write it right after a subject, "to" or an auxiliary, or right before a
determiner or object pronoun: a verb, participle or adverb shows in at least VERB_LIKE of
its uses ("provide" 0.74, "designed" 0.41, "effectively" 0.56), a noun or adjective in a
few percent ("learning" 0.05, "framework" 0.00). No tagger: NLTK's and spaCy's need models
that do not install from the package registries.

A corpus's top keywords also weigh how much more often it uses a term than the venues do
(`typical_shares`): "extensive" is no boilerplate by the rule (WWW writes it eight times as
often as ML) yet no subject of a corpus that uses it as often as the venues.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

TABLE = Path(__file__).with_name("background.json.gz")
EVERYWHERE = 0.02
UNEVEN = 4.0
# Below this share of its abstracts repeating it, a phrase is said in passing (subjects
# measured from 0.11, "gaussian processes", up; "findings" 0.05, "highlighting" 0.03).
REPEATED = 0.12
# Below this share of its uses written alone, not right before another content word, a
# phrase is a modifier (adjectives measured below 0.2, "optimal" 0.17; nouns from about
# 0.25, "kernel" 0.26, "weather" 0.29, "graph" 0.34; a noun mostly written in compounds,
# "gradient" 0.17, counts too: alone it says less than "gradient descent"; at 0.3 "weather"
# left the seed corpus's labels).
ALONE = 0.25
# From this share of its uses after a verb's subject or before its object, a word is a verb,
# participle or adverb (nouns and adjectives measured below 0.1, verbs mostly above 0.4).
VERB_LIKE = 0.3
# A word's contexts count as if it had been seen this many more times in neither: a noun
# read 8 times, 3 of them after "to", is no verb ("influencing": 8 of 11, is).
CONTEXT_PRIOR = 5


@functools.lru_cache(maxsize=4)
def _table(path: Path = TABLE) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


@functools.lru_cache(maxsize=4)
def _shares(path: Path = TABLE) -> dict[str, tuple[float, float, float]]:
    """Phrase -> (least, largest, median) smoothed document share across the venue groups."""
    table = _table(path)
    sizes = np.asarray(table["documents"], dtype=np.float64) + 1.0
    out: dict[str, tuple[float, float, float]] = {}
    for phrase, counts in table["phrases"].items():
        share = (np.asarray(counts, dtype=np.float64) + 0.5) / sizes
        out[phrase] = (float(share.min()), float(share.max()), float(np.median(share)))
    return out


def _graded(least: float, most: float) -> float:
    return 1.0 - min(1.0, least / EVERYWHERE) * min(1.0, UNEVEN * least / most)


@functools.lru_cache(maxsize=4)
def _repeat_shares(path: Path = TABLE) -> dict[str, float]:
    """Phrase -> its repeat share; a run of several words also takes the best share of the
    longer phrases holding it, whose initials its abstracts write ("deep neural" is said
    again as the "dnns" of "deep neural networks")."""
    shares = {p: again / used for p, (used, again) in _table(path).get("repeats", {}).items()}
    best = dict(shares)
    for phrase, share in shares.items():
        words = phrase.split()
        for size in range(2, len(words)):
            for at in range(len(words) - size + 1):
                run = " ".join(words[at : at + size])
                best[run] = max(best.get(run, 0.0), share)
    return best


def repeat_share(phrase: str, *, path: Path = TABLE) -> float | None:
    """The share of the venues' abstracts using the phrase that say it again (see
    `_repeat_shares`); None for a phrase too rare there to tell."""
    return _repeat_shares(path).get(" ".join(phrase.lower().split()))


def _passing(phrase: str, path: Path) -> float:
    """1 for a subject (repeated, or too rare to tell), less for a phrase said in passing."""
    share = repeat_share(phrase, path=path)
    return 1.0 if share is None else min(1.0, share / REPEATED)


def alone_share(phrase: str, *, path: Path = TABLE) -> float | None:
    """The share of the venues' uses of the phrase not right before another content word
    (CONTEXT_PRIOR more uses counted alone); None for a phrase too rare there to tell."""
    counts = _table(path).get("modifies", {}).get(" ".join(phrase.lower().split()))
    if counts is None:
        return None
    uses, before = counts
    return (uses - before + CONTEXT_PRIOR) / (uses + CONTEXT_PRIOR)


def standing(phrase: str, *, path: Path = TABLE) -> float:
    """1 for a phrase written alone (or too rare to tell), less for a modifier: its alone
    share over ALONE; for a phrase too rare to tell, its last word's ("challenging 3d"
    ends on a modifier as "3d" does, "policy gradient" is written alone)."""
    share = alone_share(phrase, path=path)
    words = phrase.split()
    if share is None and len(words) > 1:
        share = alone_share(words[-1], path=path)
    return 1.0 if share is None else min(1.0, share / ALONE)


def stands_alone(phrase: str, *, path: Path = TABLE) -> bool:
    """Whether the phrase names something alone (no modifier, see ALONE)."""
    return standing(phrase, path=path) == 1.0


def specificity(phrase: str, *, path: Path = TABLE) -> float:
    """0 for boilerplate, 1 for a phrase some field rarely writes and abstracts repeat,
    graded between. A modifier keeps its specificity here (labels grow "reproducing kernel"
    into its whole term); what shows a phrase alone also weighs `standing`."""
    shares = _shares(path)
    words = phrase.lower().split()
    key = " ".join(words)
    content = [w for w in words if w not in ENGLISH_STOP_WORDS]
    plain = [w in shares and _graded(*shares[w][:2]) == 0.0 for w in content]
    # Made only of boilerplate words, or a piece of a sentence (a stop word inside) with one.
    if len(words) > 1 and (all(plain) or (len(content) < len(words) and any(plain))):
        return 0.0
    graded = _graded(*shares[key][:2]) if key in shares else 1.0
    return graded * _passing(key, path)


def verb_like(word: str, *, path: Path = TABLE) -> bool:
    """Whether the venues use the word as a verb, participle or adverb (see VERB_LIKE); a
    word too rare there to tell is not."""
    counts = _table(path).get("contexts", {}).get(word.lower())
    return counts is not None and max(counts[1], counts[2]) >= VERB_LIKE * (
        counts[0] + CONTEXT_PRIOR
    )


def verb_edged(phrase: str, *, path: Path = TABLE) -> bool:
    """Whether the phrase starts or ends with a verb, participle or adverb."""
    words = phrase.split()
    return bool(words) and (verb_like(words[0], path=path) or verb_like(words[-1], path=path))


def typical_shares(phrases: Iterable[str], *, path: Path = TABLE) -> np.ndarray:
    """Each phrase's median document share across the venue groups; the table's keep share
    for a phrase it lacks (its median share is below that)."""
    shares = _shares(path)
    floor = float(_table(path)["keep_share"])
    keys = (" ".join(p.lower().split()) for p in phrases)
    return np.fromiter((shares[k][2] if k in shares else floor for k in keys), np.float64)


def specificities(phrases: Iterable[str], *, path: Path = TABLE) -> np.ndarray:
    """`specificity` of each phrase, as an array."""
    return np.fromiter((specificity(p, path=path) for p in phrases), np.float64)


def keyword_weights(phrases: Iterable[str], *, path: Path = TABLE) -> np.ndarray:
    """What each phrase says shown alone in a list of keywords: `specificity` x `standing`
    ("theoretical" 0.19, "bayesian" 0.11; "bayesian inference" keeps its specificity)."""
    return np.fromiter(
        (specificity(p, path=path) * standing(p, path=path) for p in phrases), np.float64
    )


def is_boilerplate(phrase: str, *, path: Path = TABLE) -> bool:
    """Whether every field writes this phrase (or each of its words) about equally often."""
    return specificity(phrase, path=path) == 0.0
