"""`--embedding-precision auto` chooses by measurement (explorer/build/encoder_choice.py):
the rule and the verdict's keeping on a fake clock (no timed assertion), one real probe."""

import json

import pytest

from explorer.build import encoder_choice
from explorer.build.encoder_choice import Choice, choose, decide, describe, measure, probe_sample
from explorer.build.models import Embedder
from explorer.errors import InputError


def test_float32_is_kept_unless_another_is_at_least_the_margin_faster():
    assert choose({"float32": 10.0, "bfloat16": 11.9, "onnx": 11.0}) == "float32"
    assert choose({"float32": 10.0, "bfloat16": 12.0, "onnx": 11.0}) == "bfloat16"
    assert choose({"float32": 10.0, "bfloat16": 12.5, "onnx": 30.0}) == "onnx"
    assert choose({"float32": 10.0, "bfloat16": 9.0}) == "float32"
    assert choose({"float32": 10.0}) == "float32"


class FakeClock:
    """Time advances only when the fake encoder 'works': `per_text` seconds per text, and
    `delay` seconds more on call number `slow_once` (a hiccup the median must ignore)."""

    def __init__(self, per_text: float, slow_once: int | None = None, delay: float = 5.0) -> None:
        self.now, self.per_text, self.calls, self.slow_once = 0.0, per_text, 0, slow_once
        self.delay = delay

    def __call__(self) -> float:
        return self.now

    def encode(self, texts: list[str]) -> None:
        self.calls += 1
        hiccup = self.delay if self.calls == self.slow_once else 0.0
        self.now += self.per_text * len(texts) + hiccup


def test_the_rate_is_the_median_of_three_after_a_warm_up():
    sample = [f"text {i}" for i in range(encoder_choice.WARMUP + encoder_choice.timed_texts())]
    clock = FakeClock(per_text=0.05, slow_once=3)  # the warm-up is call 1; call 3 is slow
    rate = measure(clock.encode, sample, clock=clock)
    assert clock.calls == 1 + encoder_choice.REPEATS
    assert rate == pytest.approx(1 / 0.05)


def test_an_encoder_far_slower_than_the_best_so_far_is_timed_once():
    """One timing HOPELESS times slower than the best rate so far cannot be chosen: no more
    timings. Within that factor (a near tie, or a hiccup on the first timing of a contender)
    all REPEATS are timed and their median kept."""
    sample = [f"text {i}" for i in range(encoder_choice.WARMUP + encoder_choice.timed_texts())]
    slow = FakeClock(per_text=0.1)  # 10/s against a best of 10 * HOPELESS + 1
    assert measure(slow.encode, sample, clock=slow, best=10 * encoder_choice.HOPELESS + 1) == (
        pytest.approx(10.0)
    )
    assert slow.calls == 2  # the warm-up and one timing
    near = FakeClock(per_text=0.1)  # 10/s against a best of 10 * HOPELESS - 1: timed fully
    measure(near.encode, sample, clock=near, best=10 * encoder_choice.HOPELESS - 1)
    assert near.calls == 1 + encoder_choice.REPEATS
    # 20/s, its first timing 30% slower (HOPELESS is 1.44): a contender still timed fully
    hiccup = FakeClock(
        per_text=0.05, slow_once=2, delay=0.3 * 0.05 * (len(sample) - encoder_choice.WARMUP)
    )
    assert measure(hiccup.encode, sample, clock=hiccup, best=20.0) == pytest.approx(20.0)
    assert hiccup.calls == 1 + encoder_choice.REPEATS


def _fake_probe(monkeypatch, tmp_path, clocks: dict) -> tuple[dict, list]:
    """encoder_choice.probe with every encoder offered, each timed on its FakeClock in
    `clocks`: the rates, and (name, best rate it was told, timings) in the order timed."""
    from explorer import onnx_encoder
    from explorer.build import embed, models

    seen = []

    def measured(encode, sample, *, clock, best=0.0):
        fake = clocks[encode.__name__]
        rate = measure(fake.encode, sample, clock=fake, best=best)
        seen.append((encode.__name__, best, fake.calls - 1))  # the warm-up left out
        return rate

    def encoding(model, name, width):
        def encode(batch):
            return None

        encode.__name__ = name
        return encode

    monkeypatch.setattr(models, "native_bfloat16", lambda: True)
    monkeypatch.setattr(onnx_encoder, "runtime_available", lambda: True)
    monkeypatch.setattr(embed, "load_encoder", lambda embedder, progress: embedder.precision)
    monkeypatch.setattr(encoder_choice, "probe_width", lambda model, sample: 128)
    monkeypatch.setattr(encoder_choice, "_encoding", encoding)
    monkeypatch.setattr(encoder_choice, "measure", measured)
    return encoder_choice.probe(Embedder("m", "w", "float32", tmp_path), ["a", "b", "c"]), seen


def test_the_probe_times_the_likeliest_fastest_first(monkeypatch, tmp_path):
    """bfloat16, then onnx told the best rate before it, then float32: on a host where
    bfloat16 is far faster, onnx is timed once; float32, the rate `choose` divides by, is
    always timed fully. The rates come back float32 first."""
    speeds = {"float32": 1 / 30, "bfloat16": 1 / 90, "onnx": 1 / 20}
    clocks = {name: FakeClock(per_text=speed) for name, speed in speeds.items()}
    rates, seen = _fake_probe(monkeypatch, tmp_path, clocks)
    repeats = encoder_choice.REPEATS
    assert seen == [("bfloat16", 0.0, repeats), ("onnx", 90.0, 1), ("float32", 0.0, repeats)]
    assert list(rates) == ["float32", "bfloat16", "onnx"] and choose(rates) == "bfloat16"


def test_a_slow_first_timing_of_float32_cannot_flip_a_near_tie(monkeypatch, tmp_path):
    """float32 at 30/s, bfloat16 at 35/s (1.17x: float32 is kept). float32's first timing
    runs 25% slow (24/s, 1.46x below bfloat16): were float32 stopped there like any other
    encoder, bfloat16 would pass the margin. Its median of three keeps the verdict."""
    timed = encoder_choice.timed_texts()
    clocks = {
        "float32": FakeClock(per_text=1 / 30, slow_once=2, delay=0.25 * timed / 30),
        "bfloat16": FakeClock(per_text=1 / 35),
        "onnx": FakeClock(per_text=1 / 10),
    }
    rates, seen = _fake_probe(monkeypatch, tmp_path, clocks)
    assert rates["float32"] == pytest.approx(30.0, abs=0.01) and choose(rates) == "float32"
    assert [(name, timings) for name, _, timings in seen][-1] == ("float32", encoder_choice.REPEATS)


def test_the_probe_order_holds_every_encoder_a_build_can_use():
    from explorer.build.settings import PRECISIONS

    assert sorted(encoder_choice.PROBE_ORDER) == sorted(PRECISIONS)


def test_the_probe_sample_is_the_corpus_s_own_and_order_free():
    texts = [f"abstract number {i}" for i in range(100)]
    sample = probe_sample(texts)
    assert len(sample) == encoder_choice.timed_texts() + encoder_choice.WARMUP
    assert set(sample) <= set(texts)
    assert probe_sample(list(reversed(texts))) == sample
    assert probe_sample(texts[:5]) == probe_sample(list(reversed(texts[:5])))  # a short list


@pytest.fixture
def fake_probe(monkeypatch):
    """encoder_choice.probe on fake clocks: float32 20/s, bfloat16 50/s, onnx 22/s, run in
    this process (so its calls can be counted; the child process has tests of its own)."""
    from explorer.build import isolated

    calls = []
    speeds = {"float32": 0.05, "bfloat16": 0.02, "onnx": 1 / 22}
    monkeypatch.setattr(isolated, "in_child", lambda function, *args: function(*args))

    def probe(embedder, texts, engine="local", clock=None):
        calls.append(engine)
        sample = probe_sample(texts)
        rates = {}
        for name in ("float32", "bfloat16", "onnx"):
            fake = FakeClock(per_text=speeds[name])
            rates[name] = round(measure(fake.encode, sample, clock=fake), 2)
        return rates

    monkeypatch.setattr(encoder_choice, "probe", probe)
    return calls


def test_a_verdict_is_measured_once_per_machine_then_read(tmp_path, fake_probe):
    embedder = Embedder("m", "weights-1", "float32", tmp_path)
    texts = [f"paper {i}" for i in range(40)]
    said = []
    first = decide(embedder, texts, log=said.append)
    assert first == Choice(
        "bfloat16", {"float32": 20.0, "bfloat16": 50.0, "onnx": 22.0}, "measured"
    )
    assert len(said) == 1 and "Timing each encoder" in said[0]
    again = decide(embedder, ["another corpus"] * 3, log=said.append)
    assert (again.precision, again.rates) == (first.precision, first.rates)
    assert again.how == "measured earlier on this machine" and len(fake_probe) == 1
    kept = json.loads(next((tmp_path / encoder_choice.CHOICES).glob("*.json")).read_text())
    assert kept["machine"]["weights"] == "weights-1" and kept["machine"]["cores"] >= 1
    other = Embedder("m", "weights-2", "float32", tmp_path)  # another model: measured again
    decide(other, texts, log=said.append)
    assert len(fake_probe) == 2


def test_an_unreadable_verdict_is_measured_again(tmp_path, fake_probe):
    embedder = Embedder("m", "w", "float32", tmp_path)
    decide(embedder, ["a", "b"], log=lambda m: None)
    (path,) = (tmp_path / encoder_choice.CHOICES).glob("*.json")
    for broken in ("{", json.dumps({"precision": "float64", "rates": {}}), "[]"):
        path.write_text(broken)
        assert decide(embedder, ["a", "b"], log=lambda m: None).how == "measured"
    assert len(fake_probe) == 4


def test_describe_says_what_was_chosen_and_each_rate():
    line = describe(
        Choice("bfloat16", {"onnx": 22.0, "float32": 20.0, "bfloat16": 50.0}, "measured")
    )
    assert line == (
        "auto chose bfloat16 (2.50x float32; float32 20.0/s; bfloat16 50.0/s; onnx 22.0/s; "
        "measured)"
    )
    assert describe(Choice("float32", {}, "kept from run abc")) == (
        "auto chose float32 (kept from run abc)"
    )


def test_ray_builds_are_never_offered_onnx(tmp_path):
    embedder = Embedder("m", "w", "float32", tmp_path)
    assert "onnx" not in encoder_choice.encoders(embedder, "ray")
    assert encoder_choice.encoders(embedder)[0] == "float32"


def test_onnx_with_the_ray_engine_is_one_line():
    from explorer.build.config import BuildConfig

    config = BuildConfig(name="c", inputs=("x",), engine="ray", embedding_precision="onnx")
    with pytest.raises(InputError, match="--embedding-precision onnx runs on this machine"):
        config.validate()


def test_a_real_probe_times_every_encoder_this_host_can_run(tmp_path):
    """The packaged model on a few seed abstracts: a rate for every encoder offered (its
    value is this host's and is not asserted), and a choice among them."""
    from explorer.build.sources import ReadOptions, read_inputs
    from tests.conftest import SEED_DIR

    texts = [p.text for p in read_inputs((str(SEED_DIR),), ReadOptions()).papers]
    embedder = Embedder.of(cache_root=tmp_path)
    rates = encoder_choice.probe(embedder, texts)
    assert set(rates) == set(encoder_choice.encoders(embedder))
    assert all(rate > 0 for rate in rates.values())
    assert choose(rates) in rates


@pytest.mark.realbuild
def test_auto_plans_a_new_corpus_by_measurement_and_says_so(tmp_path):
    """`make run`'s path: the seed corpus planned with `auto` in a fresh cache probes once,
    records the choice, and a second corpus on this machine reads the verdict."""
    from explorer.build.pipeline import plan_build
    from explorer.cli.report import _choice_line
    from tests.conftest import SEED_DIR, build_config

    said = []
    config = build_config("seed", [SEED_DIR], embedding_precision="auto")
    plan = plan_build(config, cache_dir=tmp_path, progress=False, log=said.append)
    assert plan.choice.how == "measured" and plan.embedder.precision == plan.choice.precision
    assert plan.recorded["embedding_precision"] == plan.choice.precision
    assert said and set(plan.choice.rates) == set(encoder_choice.encoders(plan.embedder))
    (line,) = _choice_line(plan.choice.record())
    assert line.startswith(f"  encoder: auto chose {plan.choice.precision} (")
    other = build_config("other", [SEED_DIR], embedding_precision="auto")
    again = plan_build(other, cache_dir=tmp_path, progress=False)
    assert again.choice.how == "measured earlier on this machine"
    assert again.embedder.precision == plan.embedder.precision


class _Widths:
    """A model as `bucket_widths` asks it: a text's tokens are its characters."""

    def __init__(self, max_seq_length: int | None) -> None:
        self.max_seq_length = max_seq_length

    def token_counts(self, texts):
        return [len(t) for t in texts]


def test_the_probe_times_full_bfloat16_batches_even_on_short_texts():
    """Short texts' bfloat16 batches have more rows (embed.bfloat16_rows): timed at their
    own width, 32 keywords would fill half of one batch. The probe pads to at least the
    width of BFLOAT16_ROWS-row batches, never cuts a longer text, and keeps the model's cap."""
    from explorer.build import embed

    short, long = ["kw"] * 32, ["x" * 200] * 32
    width = encoder_choice.probe_width(_Widths(256), short)
    assert embed.bfloat16_rows(width) == embed.BFLOAT16_ROWS
    assert encoder_choice.probe_width(_Widths(256), long) == 208  # its own width, padded
    assert encoder_choice.probe_width(_Widths(64), short) == 64  # the model's maximum
