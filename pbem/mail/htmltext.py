"""HTML to plain lines, in time linear in the HTML and with bounded output.

The standard library's html.parser retries an unfinished construct at every
later "<" (quadratic on "<a<a<a...", docs/PERFORMANCE.md), so HTML is read here by a
tokenizer whose every scan stops at the next "<". The lines it gives are
the ones html.parser gave for real mail (tests/mail/test_mail_decode.py).
"""

from __future__ import annotations

import re
from html import unescape

from pbem.mail import bounds


def quoted(depth: int, text: str) -> str:
    """``text`` with a quote prefix of ``depth`` ">" (none for depth 0)."""
    return f"{'>' * depth} {text}" if depth else text


_BLOCK_TAGS = frozenset(
    "address article aside blockquote center dd div dl dt fieldset figure footer form "
    "h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table tbody td tfoot th "
    "thead tr ul".split()
)
_SKIP_TAGS = frozenset({"head", "script", "style", "template", "title"})


class _HtmlText:
    """HTML to plain lines: block elements break lines, blockquote becomes "> " quoting.

    Bounded output: at most MAX_QUOTE_DEPTH ">" however deep the quoting,
    and no more lines once MAX_TEXT_LINES lines or MAX_TEXT_CHARS characters
    are written (``full``)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._buffer: list[str] = []
        self._quote = 0
        self._skip = 0
        self._pre = 0
        self._chars = 0

    @property
    def full(self) -> bool:
        return len(self.lines) >= bounds.MAX_TEXT_LINES or self._chars >= bounds.MAX_TEXT_CHARS

    def handle_starttag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self._skip += 1
        elif tag == "br":
            self._break(force=True)
        elif tag in _BLOCK_TAGS:
            self._break()
            if tag == "blockquote":
                self._quote += 1
            elif tag == "pre":
                self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self._break()
            if tag == "blockquote":
                self._quote = max(0, self._quote - 1)
            elif tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            first, *rest = data.split("\n")
            self._buffer.append(first)
            for line in rest:
                self._break(force=True)
                self._buffer.append(line)
        else:
            self._buffer.append(re.sub(r"\s+", " ", data))

    def close(self) -> None:
        self._break()

    def _break(self, force: bool = False) -> None:
        text = "".join(self._buffer)
        if not self._pre:
            text = text.strip()
        if (text or force) and not self.full:
            line = quoted(min(self._quote, bounds.MAX_QUOTE_DEPTH), text)
            self.lines.append(line)
            self._chars += len(line) + 1
        self._buffer = []


# The tokens of HTML, as html.parser reads them, but each found by a scan
# that stops at the next "<": a construct without its end is text, so no
# input makes the work grow faster than its length (html.parser's own
# retries are quadratic on "<a<a<a...").
_TAG = re.compile(r"<(/?)([a-zA-Z][^\t\n\r\f />\x00<]*)((?:\"[^\"<]*\"|'[^'<]*'|[^'\"<>])*)>")
_DECLARATION = re.compile(r"<[!?][^<>]*>")
_COMMENT_END = re.compile(r"--\s*>")
_CDATA_ELEMENTS = frozenset({"script", "style"})


def html_to_text(html: str) -> str:
    """The text of an HTML body, one line per block; linear in its length."""
    out = _HtmlText()
    position = 0
    no_comment_end_after: int | None = None  # a search for "-->" failed from here
    text: list[str] = []
    size = len(html)
    while position < size and not out.full:
        lt = html.find("<", position)
        if lt < 0:
            text.append(html[position:])
            break
        text.append(html[position:lt])
        end = -1
        if html.startswith("<!--", lt):
            closing = (
                None if no_comment_end_after is not None else _COMMENT_END.search(html, lt + 4)
            )
            if closing is None:
                no_comment_end_after = lt
            else:
                _flush(out, text)
                end = closing.end()
        elif tag := _TAG.match(html, lt):
            _flush(out, text)
            end = tag.end()
            name = tag.group(2).lower()
            if tag.group(1):
                out.handle_endtag(name)
            else:
                out.handle_starttag(name)
                if tag.group(3).rstrip().endswith("/"):
                    out.handle_endtag(name)
                elif name in _CDATA_ELEMENTS:  # raw text up to its end tag, not read
                    closing = re.compile(rf"</\s*{name}\s*>", re.IGNORECASE).search(html, end)
                    end = size if closing is None else closing.end()
                    out.handle_endtag(name)
        elif declaration := _DECLARATION.match(html, lt):
            _flush(out, text)
            end = declaration.end()
        if end < 0:  # a "<" that starts nothing: text
            text.append("<")
            end = lt + 1
        position = end
    _flush(out, text)
    out.close()
    return "\n".join(out.lines)


def _flush(out: _HtmlText, text: list[str]) -> None:
    if text:
        data = "".join(text)
        text.clear()
        if data:
            out.handle_data(unescape(data))
