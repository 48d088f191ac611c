"""Source markup turned into the text its authors meant: what paper lists leave in titles,
abstracts and author names (HTML tags and entities, TeX escapes, accents, text commands and
BibTeX's case-protecting braces). Math spans ($...$, $$...$$, \\(...\\), \\[...\\]) are kept
as written, for the reader and the embedder alike.

Text without markup is returned as it is (tests/test_markup.py checks it on random text),
bar the control characters \\x00-\\x02, which are dropped: they serve as placeholders here.
Markup that stands for markup ("&amp;lt;i&amp;gt;", "\\{x\\}") becomes that markup as text, once.
"""

from __future__ import annotations

import html
import re
import unicodedata
from html.entities import html5

# HTML elements that abstracts carry (italics, sub/superscripts, breaks, links): the tag goes,
# its text stays. Attributes must look like attributes, so "a <b and c> d" is left alone.
_HTML_TAG_RE = re.compile(
    r"</?(a|b|i|u|em|strong|sub|sup|br|p|span|div|tt|code|small|font|li|ul|ol)"
    r"(?:\s+[A-Za-z-]+=(?:\"[^\"]*\"|'[^']*'|[^\s>]+))*\s*/?>",
    re.I,
)
_BLOCK_TAGS = frozenset({"br", "p", "div", "li", "ul", "ol"})  # these part words: a space
# Math spans, by pandoc's rule for dollars ("$" then a non-space ... a non-space then "$" not
# followed by a digit: "save $5 and $10" is no math); a display or \( \[ span is at most MATH_SPAN_CHARS long (an unclosed opener
# would otherwise make every later one scan to the end: quadratic in the text's length).
MATH_SPAN_CHARS = 2000
_MATH_RE = re.compile(
    rf"(\$\$.{{0,{MATH_SPAN_CHARS}}}?\$\$|(?<!\\)\$(?=\S)[^$]*?(?<=\S)(?<!\\)\$(?!\d)"
    rf"|\\\(.{{0,{MATH_SPAN_CHARS}}}?\\\)|\\\[.{{0,{MATH_SPAN_CHARS}}}?\\\])",
    re.S,
)
# Entities with their semicolon only ("&amp;", "&#233;"): html.unescape alone also reads
# "B&regular" as "B®ular".
_ENTITY_RE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# Characters plain_text uses as placeholders; never in real text (control characters).
_PLACEHOLDERS = "\x00\x01\x02"
_NO_PLACEHOLDERS = {ord(c): None for c in _PLACEHOLDERS}
PASSES = 8  # nested commands or braces peeled at most this deep: bounded work per text
# Text-formatting commands: the command goes, its argument stays (nested: innermost first).
_TEXT_COMMANDS = (
    r"emph|textit|textbf|texttt|textsc|textsf|textrm|textup|textsl|underline|mbox|url|textnormal"
)
_TEX_ARG_RE = re.compile(rf"\\(?:{_TEXT_COMMANDS})\s*\{{([^{{}}$]*)\}}")
_TEX_GROUP_RE = re.compile(r"\{\\(?:em|it|bf|sl|sc|tt|rm|sf)\s+([^{}$]*)\}")
_TEX_SWITCH_RE = re.compile(r"\\(?:em|it|bf|sl|sc|tt|rm|sf)\b\s*")
# A text command whose braces a source dropped, fused with its word: "\textitsafe rules".
# Only those seen fused in the paper lists: \url and \textup begin other commands too.
_FUSED_RE = re.compile(r"\\(?:emph|textit|textbf|texttt|textsc|underline)(?=[A-Za-z])")
# Accents: \"o, \"{o}, \'{\i} (and {\"o}, whose braces _BRACES_RE then drops); letter accents
# (\c{c}, \v s) need braces or a space, as \vec or \cite are other commands.
_SYMBOL_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
                   "=": "\u0304", ".": "\u0307"}  # fmt: skip
_LETTER_ACCENTS = {"c": "\u0327", "k": "\u0328", "v": "\u030c", "u": "\u0306", "H": "\u030b",
                   "r": "\u030a"}  # fmt: skip
_BASE = r"(?:\{\s*(\\[ij]|[A-Za-z])\s*\}|(\\[ij](?![A-Za-z])|[A-Za-z]))"
_SYMBOL_ACCENT_RE = re.compile(r"\\(['`^\"~=.])\s*" + _BASE)
_LETTER_ACCENT_RE = re.compile(r"\\([ckvuHr])(?:\s*\{\s*(\\[ij]|[A-Za-z])\s*\}|\s+([A-Za-z]))")
_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
            "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ"}  # fmt: skip
_LETTER_RE = re.compile(r"\\(ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i|j)(?![A-Za-z])")
_NAMED = {"textendash": "–", "textemdash": "—", "ldots": "…", "dots": "…", "textquoteright": "’",
          "textquoteleft": "‘", "S": "§", "textasciitilde": "~"}  # fmt: skip
_NAMED_RE = re.compile(
    r"\\(" + "|".join(sorted(_NAMED, key=len, reverse=True)) + r")(?![A-Za-z])(?:\{\})?"
)
_ESCAPE_RE = re.compile(r"\\([%&_# ])")
# A citation's key means nothing to a reader: "as in \cite{smith20}." -> "as in."
_CITE_RE = re.compile(r"(?:(?<=\S)\s+)?~?\\cite[pt]?\*?(?:\[[^\]]*\])*\{[^{}]*\}")
_EMPTY_GROUP_RE = re.compile(r"(?<=[A-Za-z])\{\}")  # \LaTeX{} -> \LaTeX, a word's end
# BibTeX's case protection and stray grouping: {G}aussian, {BERT}, {—}. Only braces around a
# word, a number or one symbol: set notation such as {0, 1} keeps its braces, and so does a
# command's or a script's argument (math written without dollars: \sqrt{T}, x^{10}).
_BRACES_RE = re.compile(r"\{([\w'’.-]{1,40}|[^\s{}\\$])\}")
_ARGUMENT_END_RE = re.compile(r"(?:\\[A-Za-z]+|[\^_}])$")
_DASHES = ((re.compile(r"(?<!-)---(?!-)"), "—"), (re.compile(r"(?<=\d)--(?=\d)"), "–"))


def plain_text(text: str) -> str:
    """`text` with its source markup turned into text, math spans kept as written."""
    text = text.translate(_NO_PLACEHOLDERS)
    if not any(mark in text for mark in "\\{<&-"):
        return text
    if "<" in text or "&" in text:
        text = _ENTITY_RE.sub(_entity, text)
        text = _HTML_TAG_RE.sub(_tag_gap, text)
    protected = text.replace("\\$", "\x00").replace("\\{", "\x01").replace("\\}", "\x02")
    parts = _MATH_RE.split(protected)  # an escaped dollar opens no math, \{ no group
    for i in range(0, len(parts), 2):  # even parts are outside math
        parts[i] = _outside_math(parts[i])
    text = "".join(parts)
    return text.replace("\x00", "$").replace("\x01", "{").replace("\x02", "}")


def _entity(match: re.Match) -> str:
    """A named entity HTML5 knows, or a character reference; anything else stays as written."""
    name = match.group(0)[1:]
    if name.startswith("#"):
        return html.unescape(match.group(0))
    return html5.get(name, match.group(0))


def _tag_gap(match: re.Match) -> str:
    return " " if match.group(1).lower() in _BLOCK_TAGS else ""


def _outside_math(part: str) -> str:
    for _ in range(PASSES):  # nested commands, innermost first
        previous = part
        part = _TEX_GROUP_RE.sub(r"\1", _TEX_ARG_RE.sub(r"\1", part))
        if part == previous:
            break
    part = _TEX_SWITCH_RE.sub("", _FUSED_RE.sub("", _CITE_RE.sub("", part)))
    part = _EMPTY_GROUP_RE.sub("", part)
    part = _SYMBOL_ACCENT_RE.sub(lambda m: _accented(m, _SYMBOL_ACCENTS), part)
    part = _LETTER_ACCENT_RE.sub(lambda m: _accented(m, _LETTER_ACCENTS), part)
    part = _LETTER_RE.sub(lambda m: _LETTERS[m.group(1)], part)
    part = _NAMED_RE.sub(lambda m: _NAMED[m.group(1)], part)
    part = _ESCAPE_RE.sub(r"\1", part)
    for _ in range(PASSES):  # {{G}}
        previous = part
        part = _BRACES_RE.sub(_unbraced, part)
        if part == previous:
            break
    for pattern, dash in _DASHES:
        part = pattern.sub(dash, part)
    return part


def _unbraced(match: re.Match) -> str:
    """A group's text, unless the group is a command's or a script's argument."""
    before = match.string[max(0, match.start() - 40) : match.start()]
    return match.group(0) if _ARGUMENT_END_RE.search(before) else match.group(1)


def _accented(match: re.Match, marks: dict[str, str]) -> str:
    base = match.group(2) or match.group(3)
    base = {"\\i": "i", "\\j": "j"}.get(base, base)
    return unicodedata.normalize("NFC", base + marks[match.group(1)])
