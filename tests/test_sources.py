"""Every reader on fixtures the tests write, plus property tests: arbitrary input raises
nothing but InputError, and valid abstracts come out intact."""

from __future__ import annotations

import argparse
import contextlib
import json
import string

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.build.sources import (
    FORMATS,
    READERS,
    SUFFIXES,
    ReadOptions,
    detect_format,
    read_inputs,
)
from explorer.errors import InputError
from tests.conftest import SEED_DIR

PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# --- seed text format -------------------------------------------------------------


def test_seed_corpus_reads_all_chunks_in_order():
    corpus = read_inputs([SEED_DIR])
    assert len(corpus) == 38
    first = next(p for p in corpus.papers if p.abstract.startswith("Neural processes (NPs)"))
    assert first.venue == "ICML" and first.year == 2025 and first.title_derived
    assert first.source_file.endswith("000_d52a0dbab65218d6.txt")
    files = {p.source_file.rsplit("/", 1)[-1] for p in corpus.papers}
    assert files == {"000_d52a0dbab65218d6.txt", "004_24b64cd3ef952206.txt"}
    ids = [p.paper_id for p in corpus.papers]
    assert len(set(ids)) == 38 and ids == sorted(ids)  # the canonical order


def test_seed_ids_are_stable_across_reads():
    assert [p.paper_id for p in read_inputs([SEED_DIR]).papers] == [
        p.paper_id for p in read_inputs([SEED_DIR]).papers
    ]


def test_text_header_and_wrapped_paragraphs(tmp_path):
    f = tmp_path / "list.txt"
    f.write_text(
        "NeurIPS 2019 paper list\n\nFirst abstract line one\ncontinues here.\n\n\nSecond abstract.\n"
    )
    papers = read_inputs([f]).papers
    assert sorted(p.abstract for p in papers) == [
        "First abstract line one continues here.",
        "Second abstract.",
    ]
    assert papers[0].venue == "NeurIPS" and papers[0].year == 2019


# --- paperlists JSON ---------------------------------------------------------------


def test_paperlists_fields_skips_and_unknown_fields(tmp_path):
    f = tmp_path / "nips2016.json"
    f.write_text(
        json.dumps(
            [
                {
                    "id": "7",
                    "title": "T",
                    "abstract": "A.",
                    "author": "X Y; Z W",
                    "status": "Oral",
                    "track": "main",
                    "site": "https://s",
                    "github": "https://g",
                    "unknown": {"a": 1},
                },
                {"id": "8", "title": "No abstract", "abstract": ""},
            ]
        )
    )
    result = READERS["paperlists"](f, ReadOptions())
    (paper,) = result.papers
    assert paper.paper_id == "neurips2016-7" and paper.venue == "NeurIPS" and paper.year == 2016
    assert paper.authors == "X Y; Z W" and paper.status == "Oral" and paper.code_url == "https://g"
    assert result.skipped == [f"{f}: entry 1 (id 8): no abstract"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": 1}', "expected a JSON array"),
        ("[1, 2]", "entry 0: expected an object"),
        ("[{,]", "line 1, column 3"),
    ],
)
def test_paperlists_bad_shapes(tmp_path, content, message):
    f = tmp_path / "icml2019.json"
    f.write_text(content)
    with pytest.raises(InputError, match=message):
        read_inputs([f])


# --- BibTeX --------------------------------------------------------------------------

BIB = r"""@InProceedings{pmlr-v202-smith23a,
  title = {On {B}ayesian Nets with $O(\sqrt{T})$ regret},
  author = {Smith, John and Doe, Jane},
  booktitle = {Proceedings of the 40th International Conference on Machine Learning},
  year = {2023},
  abstract = {We prove an $O(\sqrt{T})$ bound for {Bayesian} nets.},
  openreview = {https://openreview.net/forum?id=abc},
  software = {https://github.com/x/y}
}
@InProceedings{broken-entry,
  title = {Missing brace,
  author = {X}

@InProceedings{pmlr-v202-noabs, title = {No abstract}, year = {2023}}
"""


def test_bibtex_reads_pmlr_entries_and_skips_broken(tmp_path):
    f = tmp_path / "pmlr.bib"
    f.write_text(BIB)
    result = READERS["bibtex"](f, ReadOptions())
    (paper,) = result.papers
    assert paper.paper_id == "pmlr-v202-smith23a"
    assert paper.title == r"On Bayesian Nets with $O(\sqrt{T})$ regret"
    assert paper.abstract == r"We prove an $O(\sqrt{T})$ bound for Bayesian nets."
    assert paper.authors == "John Smith; Jane Doe"
    assert paper.venue == "ICML" and paper.year == 2023
    assert (
        paper.url == "https://openreview.net/forum?id=abc"
        and paper.code_url == "https://github.com/x/y"
    )
    assert any("broken-entry" in s for s in result.skipped)
    assert any("pmlr-v202-noabs" in s for s in result.skipped)


# --- CSV / JSONL / Parquet -------------------------------------------------------------

ROWS = [
    {"summary": "Abstract one.", "name": "One", "yr": "2020", "decision": "Oral"},
    {"summary": "Abstract two.", "name": "Two", "yr": "2021", "decision": "Poster"},
    {"summary": "", "name": "Empty", "yr": "2021", "decision": "Poster"},
]
OPTS = ReadOptions(
    text_column="summary", title_column="name", year_column="yr", class_column="decision", venue="X"
)


def _check_rows(result):
    assert [(p.title, p.year, p.status, p.venue) for p in result.papers] == [
        ("One", 2020, "Oral", "X"),
        ("Two", 2021, "Poster", "X"),
    ]
    assert len(result.skipped) == 1 and "row 3" in result.skipped[0]


def test_csv_with_named_columns(tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame(ROWS).to_csv(f, index=False)
    _check_rows(READERS["csv"](f, OPTS))


def test_jsonl_with_named_columns(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n")
    _check_rows(READERS["jsonl"](f, OPTS))


def test_parquet_with_named_columns(tmp_path):
    f = tmp_path / "p.parquet"
    pd.DataFrame(ROWS).to_parquet(f)
    _check_rows(READERS["parquet"](f, OPTS))


def test_csv_missing_text_column_names_file_and_columns(tmp_path):
    f = tmp_path / "p.csv"
    pd.DataFrame(ROWS).to_csv(f, index=False)
    with pytest.raises(
        InputError, match=r"p\.csv: no column 'abstract' for the text \(columns: summary"
    ):
        read_inputs([f], ReadOptions(text_column="abstract"))
    g = tmp_path / "q.csv"
    pd.DataFrame({"body": ["x"], "name": ["y"]}).to_csv(g, index=False)
    with pytest.raises(
        InputError,
        match=r"q\.csv: no abstract column found \(columns: body, name\); name it with --text-column",
    ):
        read_inputs([g])


# --- input errors and format detection ----------------------------------------------------


def test_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_inputs([tmp_path / "missing.txt"])
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(InputError, match="empty.txt: file is empty"):
        read_inputs([tmp_path / "empty.txt"])
    (tmp_path / "bin.txt").write_bytes(b"abc\x00\x01\x02")
    with pytest.raises(InputError, match="binary"):
        read_inputs([tmp_path / "bin.txt"])
    (tmp_path / "latin.txt").write_bytes("header\n\ncaf\xe9 abstract".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin.txt: line 3: not valid UTF-8 \(byte 0xe9\)"):
        read_inputs([tmp_path / "latin.txt"])
    empty_dir = tmp_path / "d"
    empty_dir.mkdir()
    (empty_dir / "notes.md").write_text("x")
    with pytest.raises(InputError, match="no readable input files"):
        read_inputs([empty_dir])


def test_detect_format_by_content(tmp_path):
    cases = {"a": '[{"abstract": "x"}]', "b": '{"abstract": "x"}\n', "c": "@article{k, title={t}}"}
    for name, content in cases.items():
        (tmp_path / name).write_text(content)
    assert [detect_format(tmp_path / n) for n in "abc"] == ["paperlists", "jsonl", "bibtex"]


def test_every_format_is_one_row_that_dispatch_fetch_and_help_read(tmp_path):
    """FORMATS is the one registry: the readers' dispatch, the suffixes `fetch` saves with
    and `explorer build --help` all come from it, and every format detection returns is in it."""
    from explorer.build.fetch import _file_name
    from explorer.cli import _parser

    names = [f.name for f in FORMATS]
    assert list(READERS) == names and len(set(names)) == len(names)
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    build_help = next(a.help for a in sub.choices["build"]._actions if a.dest == "inputs")
    for fmt in FORMATS:
        assert READERS[fmt.name] is fmt.reader
        for suffix in fmt.suffixes:
            assert SUFFIXES[suffix] == fmt.name and suffix in build_help
            assert detect_format(tmp_path / f"x{suffix}") == fmt.name  # by suffix, unread
        assert _file_name("https://h/list", fmt.name, None) == f"list{fmt.suffixes[0]}"
    for content in ("plain words", '[{"a": 1}]', '{"a": 1}', "@article{k,}"):
        (tmp_path / "sniffed").write_text(content)
        assert detect_format(tmp_path / "sniffed") in names


# --- property tests -------------------------------------------------------------------------

# Abstract-like text: words, punctuation and math, no blank lines, no leading header look.
words = st.text(
    alphabet=string.ascii_letters + string.digits + "$\\^_()-,", min_size=1, max_size=12
)
abstracts = st.lists(words, min_size=3, max_size=30).map(lambda ws: " ".join(ws) + ".")


@PROPERTY
@given(st.binary(max_size=400), st.sampled_from(sorted(READERS)))
def test_arbitrary_bytes_raise_only_input_error(tmp_path, data, reader):
    f = tmp_path / f"fuzz.{reader}"
    f.write_bytes(data)
    with contextlib.suppress(InputError):
        READERS[reader](f, ReadOptions())


@PROPERTY
@given(st.lists(abstracts, min_size=1, max_size=6, unique=True))
def test_text_reader_roundtrip(tmp_path, items):
    f = tmp_path / "icml2025.txt"
    f.write_text("ICML 2025 list\n\n" + "\n\n".join(items) + "\n")
    assert [p.abstract for p in READERS["text"](f, ReadOptions()).papers] == items


@PROPERTY
@given(st.lists(st.text(min_size=1, max_size=80).filter(str.strip), min_size=1, max_size=6))
def test_paperlists_roundtrip(tmp_path, items):
    f = tmp_path / "icml2019.json"
    f.write_text(
        json.dumps([{"id": str(i), "title": "t", "abstract": a} for i, a in enumerate(items)])
    )
    assert [p.abstract for p in READERS["paperlists"](f, ReadOptions()).papers] == [
        a.strip() for a in items
    ]


@PROPERTY
@given(st.lists(st.text(min_size=1, max_size=80).filter(str.strip), min_size=1, max_size=6))
def test_jsonl_and_parquet_roundtrip(tmp_path, items):
    rows = [{"abstract": a} for a in items]
    jf = tmp_path / "x.jsonl"
    jf.write_text("\n".join(json.dumps(r) for r in rows))
    pf = tmp_path / "x.parquet"
    pd.DataFrame(rows).to_parquet(pf)
    expected = [a.strip() for a in items]
    assert [p.abstract for p in READERS["jsonl"](jf, ReadOptions()).papers] == expected
    assert [p.abstract for p in READERS["parquet"](pf, ReadOptions()).papers] == expected


@PROPERTY
@given(st.lists(abstracts, min_size=1, max_size=5, unique=True))
def test_csv_and_bibtex_roundtrip(tmp_path, items):
    cf = tmp_path / "x.csv"
    pd.DataFrame({"abstract": items}).to_csv(cf, index=False)
    assert [p.abstract for p in READERS["csv"](cf, ReadOptions()).papers] == items
    bf = tmp_path / "x.bib"
    safe = [a.replace("{", "").replace("}", "") for a in items]
    bf.write_text(
        "\n".join(f"@article{{k{i}, title={{T}}, abstract={{{a}}}}}" for i, a in enumerate(safe))
    )
    assert [p.abstract for p in READERS["bibtex"](bf, ReadOptions()).papers] == safe
