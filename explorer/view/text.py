"""The one escaping module: untrusted text made literal for each rendering context.

Untrusted means corpus text (titles, authors, abstracts, venues, statuses), labels derived
from it or typed by a curator, URL parameter values and file or corpus names. Pages show
it through `st.text` and dataframes, or through exactly one function here per context:

- `md` for every Markdown-capable Streamlit call (`st.markdown`, `st.caption`,
  `st.subheader`, `st.warning`, `st.info`, tab and expander labels, `help=`), and
  `md_format` to put such values into a trusted Markdown template (the easy, safe way:
  pages never build f-strings of data into Markdown; `tests/test_text.py` checks that).
- `plot` for plotly text, hovers, labels and legend names, which plotly renders as an
  HTML subset (and whose templates expand ``%{...}``).
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Iterable

# CommonMark lets any ASCII punctuation be backslash-escaped, and then shows it literally.
# Escaping all of it covers emphasis, links, images, HTML, tables, headings, lists, code,
# LaTeX ($) and Streamlit's directives (:red[..]).
_MD_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")
# Rewrites that run on the text after escapes are resolved, so escaping cannot stop them:
# GitHub-style autolinks (http://, https://, www., user@host), Streamlit's arrows and
# dashes ("->", "--", ">="...), and its :material_icon:, :streamlit: and emoji shortcodes.
# A word joiner (invisible, zero-width) inside each pattern keeps it literal: the reader
# sees exactly the original characters. Around every colon it also keeps the raw source
# from looking like a shortcode, so Streamlit never loads its emoji plugin.
WORD_JOINER = "\u2060"
_TYPOGRAPHIC = re.compile(r"<->|->|<-|--|>=|<=|~=")
_AUTOLINK = re.compile(r"(?i)(https?|ftp|mailto|www)(?=[/.:])|(?=@)")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def md(value: object) -> str:
    """`value` as Markdown that Streamlit renders as exactly that text, on one line.

    Line breaks become spaces (a Markdown label is one line; block syntax must not start).
    """
    text = _LINE_BREAKS.sub(" ", str(value))
    text = _TYPOGRAPHIC.sub(lambda m: WORD_JOINER.join(m.group(0)), text)
    text = _AUTOLINK.sub(lambda m: (m.group(1) or "") + WORD_JOINER, text)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return text.replace("\\:", f"{WORD_JOINER}\\:{WORD_JOINER}")


class _MarkdownFormatter(string.Formatter):
    """str.format that escapes every substituted value after applying its format spec."""

    def format_field(self, value: object, format_spec: str) -> str:
        return md(super().format_field(value, format_spec))


_FORMATTER = _MarkdownFormatter()


def md_format(template: str, /, *args: object, **values: object) -> str:
    """A trusted Markdown `template` (str.format syntax) with every value escaped by `md`.

    ``st.subheader(md_format("Topic {id}: {label}", id=3, label=row.label))``
    """
    return _FORMATTER.format(template, *args, **values)


def md_join(values: Iterable[object], separator: str = ", ") -> str:
    """Several untrusted values as one escaped Markdown string."""
    return md(separator.join(str(v) for v in values))


def plot(value: object) -> str:
    """`value` as plotly text: HTML-escaped, and `%` as an entity so ``%{..}`` never expands.

    Plotly decodes entities into text nodes, so the reader sees the original characters.
    """
    return html.escape(str(value), quote=False).replace("%", "&#37;")


def shorten(value: object, limit: int) -> str:
    """The first `limit` characters of `value`, with an ellipsis when cut (before escaping)."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
