"""The one escaping module: untrusted text made literal for each rendering context.

Untrusted means corpus text (titles, authors, abstracts, venues, statuses), labels derived
from it or typed by a curator, URL parameter values and file or corpus names. Pages show
it through `st.text` and dataframes, or through exactly one function here per context:

- `md` for every Markdown-capable Streamlit call (`st.markdown`, `st.caption`,
  `st.subheader`, `st.warning`, `st.info`, tab and expander labels, `help=`), and
  `md_format` to put such values into a trusted Markdown template (the easy, safe way:
  pages never build f-strings of data into Markdown; `tests/test_text.py` checks that).
- `md_math` for an abstract or a title shown as text in a Markdown call (the paper
  detail): as `md`, except that a math span whose body passes an allowlist is left for
  Streamlit's KaTeX to render (docs/security: no links, styles, sizes, colours or macros).
- `plot` for plotly text, hovers, labels and legend names, which plotly renders as an
  HTML subset (and whose templates expand ``%{...}``).
- `csv_text` for every CSV the project writes: spreadsheets run cells that start like a
  formula, so such text cells are made literal (OWASP's CSV injection advice).

Bidirectional controls (`BIDI_CONTROLS`) are dropped from untrusted text: they reorder
what a reader sees (a title can show one word and hold another). `md` and `plot` drop them,
and `without_bidi` cleans a run's text columns once when the viewer loads it
(explorer/view/ui/data.py), which covers `st.text` and dataframe cells too.
"""

from __future__ import annotations

import html
import re
import string

import pandas as pd

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
# Unicode's bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069)
# and its direction marks (LRM, RLM, ALM): invisible, they reorder the text around them.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
# A spreadsheet treats a cell starting with one of these as a formula (tab and carriage
# return because some strip them first). A quote in front makes the cell plain text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_START = re.compile("[" + re.escape("".join(FORMULA_STARTS)) + "]")
# A text cell that is just a number ("-1", the outliers' topic id) stays as it is: a
# spreadsheet reads it as that number, which is no formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def without_bidi(value: object) -> str:
    """`value` as text without bidirectional controls, so it shows in its stored order."""
    return _BIDI.sub("", str(value))


def frame_without_bidi(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with bidirectional controls dropped from its text columns; the same frame
    when none holds one (the usual case: a corpus's check costs one vectorised scan)."""
    dirty = {}
    for name in frame.columns:
        column = frame[name]
        if _is_text(column) and column.str.contains(_BIDI.pattern, regex=True, na=False).any():
            dirty[name] = column.str.replace(_BIDI.pattern, "", regex=True)
    return frame.assign(**dirty) if dirty else frame


def _is_text(column: pd.Series) -> bool:
    """Whether `column` holds text (an object column is scanned in C, not per value)."""
    if isinstance(column.dtype, pd.StringDtype):
        return True
    kinds = ("string", "mixed", "mixed-integer")
    return column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) in kinds


def csv_text(frame: pd.DataFrame) -> str:
    """`frame` as CSV (no index) that opens safely in a spreadsheet: text cells that start
    like a formula get a leading quote; numeric columns and plain numbers are untouched.
    Every CSV the project writes goes through here."""
    return frame.assign(
        **{name: _literal(frame[name]) for name in frame.columns if _is_text(frame[name])}
    ).to_csv(index=False)


def _literal(column: pd.Series) -> pd.Series:
    starts = column.str.match(_FORMULA_START.pattern, na=False)
    risky = starts & ~column.str.fullmatch(_PLAIN_NUMBER.pattern, na=False)
    if not risky.any():
        return column
    out = column.astype(object)
    out[risky] = "'" + out[risky].astype(str)
    return out


def md(value: object) -> str:
    """`value` as Markdown that Streamlit renders as exactly that text, on one line.

    Line breaks become spaces (a Markdown label is one line; block syntax must not start).
    """
    text = _LINE_BREAKS.sub(" ", without_bidi(value))
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


# Math spans in abstracts and titles, by pandoc's tex_math_dollars rule: "$" then a non-space,
# the body on one line, a non-space then "$" not followed by a digit ("costs $5 and $10" is
# no math); "$$...$$" too. Only a body of allowed commands is rendered (by Streamlit's KaTeX):
# no \href, \url, \htmlClass, \style, \rule, sizes, colours or macros, which could link, style
# or stretch the page; balanced braces nested at most MAX_MATH_DEPTH deep; at most
# MAX_MATH_CHARS, and MAX_MATH_SPACING spacing commands (a run of them moves text over text).
# The body's first and last characters are printable ASCII: JavaScript's idea of a space
# (U+FEFF...) is not Python's, and Streamlit decides whether to load its math plugin at all by
# its own test (_STREAMLIT_MATH below). Anything else is shown as text.
_MATH_SPAN = re.compile(
    r"\$\$(?=[!-~])([^$\r\n]{1,400}?)(?<=[!-~])\$\$(?!\d)"
    r"|\$(?=[!-#%-~])([^$\r\n]*?[!-#%-~]|[!-#%-~])\$(?!\d)"
)
# Streamlit 1.67's own test (StreamlitMarkdown's `vm`, JavaScript's \s): without a match in
# the Markdown it sends, it does not load remark-math, and a "span" would be read as Markdown.
_STREAMLIT_MATH = re.compile(r"(?<!\$)\$(?![\s\ufeff$])[^$\n]*?[^\s\ufeff$]\$(?!\d)")
MAX_MATH_CHARS = 200
MAX_MATH_SPANS = 40
MAX_MATH_DEPTH = 6
MAX_MATH_SPACING = 8
_COMMAND_WORDS = """alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu
    xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta
    Lambda Xi Pi Sigma Upsilon Phi Psi Omega frac dfrac tfrac sqrt sum prod int oint coprod
    bigcup bigcap log ln exp min max argmin argmax arg sup inf lim limsup liminf det dim ker Pr
    sin cos tan mathbb mathcal mathbf mathrm mathit mathsf mathtt mathfrak boldsymbol bm
    operatorname text textrm textit textbf hat tilde bar vec dot ddot widehat widetilde
    overline underline left right big Big bigg Bigg cdot cdots ldots dots vdots ddots times
    div pm mp le leq ge geq neq ne approx sim simeq cong equiv propto ll gg in notin ni subset
    subseteq supset supseteq cup cap setminus emptyset varnothing infty partial nabla forall
    exists neg lnot land lor wedge vee to rightarrow leftarrow leftrightarrow Rightarrow
    Leftarrow Leftrightarrow mapsto implies iff mid nmid parallel perp langle rangle lfloor
    rfloor lceil rceil lvert rvert lVert rVert vert Vert ell top bot star ast circ bullet
    oplus otimes odot prime quad qquad colon triangleq coloneqq intercal dagger hbar imath
    jmath binom choose over"""
MATH_COMMANDS = frozenset(_COMMAND_WORDS.split())
_MATH_SYMBOLS = frozenset(",;: {}|_%")  # \, \; \: \  \{ \} \| \_ \%
_MATH_SPACING = frozenset({"quad", "qquad", ",", ";", ":", " "})
_MATH_COMMAND = re.compile(r"\\([A-Za-z@]+|.)")  # KaTeX reads @ as a letter


def md_math(value: object) -> str:
    """`value` as Markdown that shows its text literally (as `md`) and its safe math spans
    as math: for an abstract or a title shown as text (the paper detail)."""
    text = _LINE_BREAKS.sub(" ", without_bidi(value))
    out, end, spans = [], 0, 0
    for count, match in enumerate(_MATH_SPAN.finditer(text)):
        body = match.group(1) or match.group(2)
        if count >= MAX_MATH_SPANS or not _safe_math(body):
            continue  # stays in the text around it, escaped
        between = md(text[end : match.start()]) or (WORD_JOINER if spans else "")
        out.append(between + f"${body}$")  # a joiner keeps $a$$b$ two spans
        end, spans = match.end(), spans + 1
    shown = "".join(out) + md(text[end:])
    if spans and not _STREAMLIT_MATH.search(shown):
        return md(value)  # Streamlit would not render it as math: all of it as text
    return shown


def _safe_math(body: str) -> bool:
    """Whether KaTeX may render `body`: short, allowed commands only, braces balanced and
    shallow, few spacing commands, and no character that means something else to TeX or
    Markdown (#, &, %, ~, $, a bare backslash)."""
    if len(body) > MAX_MATH_CHARS:
        return False
    commands = _MATH_COMMAND.findall(body)
    for command in commands:
        wordy = len(command) > 1 or command.isalpha()
        if command not in (MATH_COMMANDS if wordy else _MATH_SYMBOLS):
            return False
    if sum(c in _MATH_SPACING for c in commands) > MAX_MATH_SPACING:
        return False
    rest = _MATH_COMMAND.sub(" ", body)  # escaped braces and symbols are gone
    if any(char in rest for char in "$#&%~\\"):
        return False
    depth = 0
    for char in rest:
        depth += (char == "{") - (char == "}")
        if not 0 <= depth <= MAX_MATH_DEPTH:
            return False
    return depth == 0


def plot(value: object) -> str:
    """`value` as plotly text: HTML-escaped, and `%` as an entity so ``%{..}`` never expands.

    Plotly decodes entities into text nodes, so the reader sees the original characters.
    """
    return html.escape(without_bidi(value), quote=False).replace("%", "&#37;")


def counted(n: int, one: str, many: str) -> str:
    """`n` with its noun in number: "1 paper", "2,048 papers"."""
    return f"{n:,} {one if n == 1 else many}"


def shorten(value: object, limit: int) -> str:
    """The first `limit` characters of `value`, with an ellipsis when cut (before escaping)."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
