"""A corpus with planted topics for real builds: the seed abstracts plus groups of short
abstracts on subjects far from machine learning and from each other (baking, volcanoes,
football, ...). Each planted abstract is four sentences drawn from its subject's own
sentences, so no two groups share a content word: whatever seed a build uses, every group
is its own region of the embedding space, and the build has at least one topic per group
(a group may split, never merge with another). Tests that need N distinct topics from a
real build use it instead of counting on how the 38 seed abstracts happen to group.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.conftest import SEED_DIR

PER_GROUP = 16
SENTENCES_PER_ABSTRACT = 4
# subject: (title, its sentences)
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "baking": (
        "Sourdough bread baking",
        (
            "The sourdough starter was fed with rye flour and water every morning.",
            "Kneading the dough for ten minutes develops the gluten in wheat bread.",
            "A hot oven with steam gives the baguette a crisp golden crust.",
            "The loaf was proofed overnight in a floured wicker basket.",
            "Butter is folded into the croissant dough in many thin layers.",
            "Bakers score the top of each loaf with a razor before baking.",
            "An open crumb in rustic bread comes from a wet, slack dough.",
            "The bakery sells cinnamon rolls and rye loaves every Saturday.",
        ),
    ),
    "volcanoes": (
        "Volcanic eruptions",
        (
            "Basaltic lava poured from the fissure and flowed toward the coast.",
            "The magma chamber beneath the caldera refilled before the eruption.",
            "A tall ash plume rose above the stratovolcano and grounded flights.",
            "Pyroclastic flows swept down the slopes of the erupting volcano.",
            "Fumaroles on the crater rim released sulphurous gas and steam.",
            "Layers of tephra record each past eruption of the volcano.",
            "Swarms of earthquakes beneath the summit warned of rising magma.",
            "A lava dome grew slowly inside the crater for several months.",
        ),
    ),
    "football": (
        "Football matches",
        (
            "The striker scored a late goal from a corner kick in the derby.",
            "The goalkeeper saved a penalty in the final minute of the match.",
            "The referee showed a red card after a reckless tackle in midfield.",
            "The club climbed to the top of the league table after the win.",
            "Fans filled the stadium and sang through the whole second half.",
            "The winger was caught offside twice during the first half.",
            "The team signed a new midfielder before the transfer window closed.",
            "A hat trick from the captain sealed the cup final victory.",
        ),
    ),
    "medieval": (
        "Medieval castles and monasteries",
        (
            "The castle keep was built of stone after the Norman conquest.",
            "Monks in the monastery copied manuscripts by candlelight.",
            "Feudal lords granted manors to knights in return for service.",
            "The cathedral took three generations of masons to complete.",
            "Merchant guilds controlled the wool trade of the medieval town.",
            "The plague emptied villages and left fields untilled for decades.",
            "The chronicle describes the long siege of the walled city.",
            "Pilgrims travelled to the abbey to see the relics of the saint.",
        ),
    ),
    "reefs": (
        "Coral reef ecology",
        (
            "Coral polyps host algae that give the reef its bright colours.",
            "Warm seas caused mass bleaching of corals across the reef.",
            "Parrotfish graze on algae and grind dead coral into sand.",
            "Sea turtles nest on beaches near the lagoon each summer.",
            "Divers counted clownfish living among the sea anemones.",
            "Mangroves and seagrass meadows shelter young reef fish.",
            "Crown-of-thorns starfish outbreaks devour living coral.",
            "Snorkellers surveyed the shallow reef flat at low tide.",
        ),
    ),
    "jazz": (
        "Jazz music",
        (
            "The saxophone solo wandered over the chord changes of the standard.",
            "The trumpet player improvised a bebop line at a furious tempo.",
            "A walking double bass line kept the swing rhythm steady.",
            "The big band played the blues in a smoky nightclub downtown.",
            "The pianist comped softly behind the singer's ballad.",
            "The drummer traded fours with the tenor saxophonist.",
            "The quartet recorded the album live in a single evening.",
            "Trombones and clarinets filled the hall with New Orleans swing.",
        ),
    ),
    "gardening": (
        "Vegetable gardening",
        (
            "Tomato seedlings were planted out after the last spring frost.",
            "Compost and mulch keep the vegetable beds moist in summer.",
            "Roses are pruned in late winter just above an outward bud.",
            "The greenhouse shelters peppers and cucumbers from the wind.",
            "Tulip bulbs go into the flower border in autumn.",
            "Slugs ate the young lettuce leaves in the raised bed.",
            "The gardener watered the herb garden with a tin watering can.",
            "Runner beans climb the bamboo canes along the allotment fence.",
        ),
    ),
    "railways": (
        "Steam railways",
        (
            "The steam locomotive hauled a long train of freight wagons uphill.",
            "Passengers waited on the platform for the delayed night train.",
            "The signalman pulled the lever in the signal box at the junction.",
            "A sleeper carriage was added to the express for the long journey.",
            "The railway tunnel through the mountain took six years to dig.",
            "The conductor checked tickets as the train left the station.",
            "Coal and water were loaded onto the tender at the depot.",
            "The branch line closed and its viaduct became a footpath.",
        ),
    ),
}


def planted_rows() -> list[dict]:
    """The planted abstracts as JSONL rows (ICML 2025, like the seed files): the same text
    on every host and for every build seed."""
    rows = []
    for subject, (title, sentences) in GROUPS.items():
        rng = random.Random(subject)
        seen: set[str] = set()
        while len(seen) < PER_GROUP:
            text = " ".join(rng.sample(sentences, SENTENCES_PER_ABSTRACT))
            if text in seen:
                continue
            seen.add(text)
            i = len(seen)
            rows.append(
                {"id": f"{subject}-{i}", "title": f"{title}, note {i}", "abstract": text,
                 "year": 2025, "venue": "ICML", "status": "Poster"}
            )  # fmt: skip
    return rows


def write_planted(folder: Path, extra: list[dict] = ()) -> tuple[str, ...]:
    """The planted corpus's inputs: the seed folder and a JSONL file of the planted rows
    (and `extra` rows) written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "planted.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in [*planted_rows(), *extra]))
    return (str(SEED_DIR), str(source))


def planted_subjects(papers) -> dict[str, set[str]]:
    """Each planted subject's papers' topics in a built run's papers table (by paper title)."""
    out: dict[str, set[str]] = {}
    for subject, (title, _) in GROUPS.items():
        members = papers[papers["title"].str.startswith(f"{title}, note ")]
        out[subject] = set(members["topic_id"])
    return out
