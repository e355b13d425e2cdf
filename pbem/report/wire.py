"""A mail's bytes written straight from its parts, without an EmailMessage.

``mail_bytes`` gives exactly the bytes of ``bytes(to_mime(...))`` (with a
text attachment added by ``add_attachment`` when there is one) for the mails
pbem makes: the same headers in the same order, folded by the same policy
(``mime.POLICY``), the bodies in the transfer encoding ``set_content(text,
charset="utf-8")`` picks, each picture's part as the generator writes it,
and the MIME boundaries drawn the same way and in the same order (innermost
multipart first, as the generator does). What it does not know how to write
(an attachment that is not text or has an odd file name, a value that is not
a str, a Content-* extra header, a policy that is not the one it was written
for) goes the plain way, ``to_mime``, so no mail is ever lost or changed
(tests/report/test_report_mime_writer.py compares the two on every kind of mail).

Why it pays (scripts/bench/mime.py; the figures in docs/PERFORMANCE.md): the
standard library parses every header again at each ``set_param``, folds
every header anew, searches the whole mail with a regex for each boundary it
draws, and writes quoted-printable one character at a time. Here every
header's fold is kept, a boundary header is folded once per shape with the
new boundary put in its place, plain Message-IDs skip the parser, a picture's
part is written once for every mail that carries it, and quoted-printable is
written line by line, each line's encoding kept (a game's reports repeat
most of their lines).
"""

from __future__ import annotations

import binascii
import hashlib
import random
import re
import sys
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from email import quoprimime
from email.generator import BytesGenerator
from email.message import EmailMessage
from email.utils import format_datetime
from io import BytesIO
from threading import Lock

from pbem.report import mime
from pbem.report.mime import RenderedMail

KEPT_QP_LINES = 8192  # quoted-printable lines kept (many games' reports; a game has hundreds)
KEPT_PICTURES = 32  # pictures' parts kept: a poll answers one turn of many games in a row
KEPT_FOLDS = 1024  # folded headers kept: a poll's From, To, kinds, games, parts' headers
_lock = Lock()
_folds: OrderedDict[tuple[str, str], bytes] = OrderedDict()
_qp_kept: dict[bytes, bytes] = {}  # a line (no line break) -> its quoted-printable
_boundary_folds: dict[tuple[str, int], tuple[bytes, bytes]] = {}
_pictures: OrderedDict[tuple[str, bytes], bytes] = OrderedDict()  # (cid, PNG) -> its part
_BOUNDARY_FORMAT = f"%0{len(repr(sys.maxsize - 1))}d"  # as email.generator's _fmt
# Message-IDs as pbem and common mailers make them (no '?', so no encoded word, which
# the parser would decode; no quotes, comments, brackets or white space but one space)
_ID = r"<[A-Za-z0-9._+=-]+@[A-Za-z0-9][A-Za-z0-9.-]*>"
_IDS = re.compile(rf"{_ID}(?: {_ID})*", re.ASCII)
_ONE_ID = re.compile(_ID, re.ASCII)  # Message-ID: the parser keeps only the first
_ID_HEADERS = {"Message-ID": _ONE_ID, "In-Reply-To": _IDS, "References": _IDS}
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*", re.ASCII)  # quoted as it is
_BOUNDARY_SHAPE = re.compile(r"={15}[0-9]+==")  # what _make_boundary draws: no ".N" suffix

# the bytes quoted-printable writes as they are (quoprimime's body map, plus the line breaks)
_PASS = bytes(range(0x20, 0x7F)).replace(b"=", b"") + b"\t\r\n"
_QUOTED = [f"={c:02X}" for c in range(256)]
_TABLE = {c: _QUOTED[c] for c in range(256) if c not in _PASS}
_FEW = 24  # distinct characters to escape one str.replace each; more: one translate


class WriterUnsupported(Exception):
    """The mail needs something the writer does not do; the EmailMessage path writes it."""


def qp_encode(body: str, maxlinelen: int = 76, eol: str = "\n") -> str:
    """``quoprimime.body_encode(body, maxlinelen, eol)``, the same string, faster.

    The escaping is a ``str.replace`` per distinct character to escape (usually
    '=' and the few bytes of an accented letter) instead of a per-character
    translate; only the lines that are long or end in white space are cut.
    ``body`` holds bytes as characters (latin-1), as the content manager
    gives it; anything else goes to the standard function."""
    if maxlinelen < 4 or not body:
        return str(quoprimime.body_encode(body, maxlinelen, eol))
    try:
        escaped = _escape(body)
    except UnicodeEncodeError:
        return str(quoprimime.body_encode(body, maxlinelen, eol))
    out = [
        line if len(line) <= maxlinelen and line[-1:] not in (" ", "\t") else
        _cut(line, maxlinelen, eol)
        for line in escaped.splitlines()
    ]  # fmt: skip
    if escaped[-1] in "\r\n":
        out.append("")
    return eol.join(out)


def _escape(body: str) -> str:
    """Every character quoted-printable does not write as it is, as =XX (latin-1 only)."""
    escape = set(body.encode("latin-1").translate(None, _PASS))
    if len(escape) > _FEW:
        return body.translate(_TABLE)
    if 0x3D in escape:  # first: the other escapes bring in '=' of their own
        body = body.replace("=", "=3D")
        escape.discard(0x3D)
    for c in escape:
        body = body.replace(chr(c), _QUOTED[c])
    return body


def _cut(line: str, maxlinelen: int, eol: str) -> str:
    """One escaped line as quoted-printable lines: soft breaks where it is too long
    (never inside an escape), white space at its end quoted as room allows."""
    size = len(line)
    spaced = line[-1:] in (" ", "\t")
    if size <= maxlinelen and not spaced:
        return line
    out: list[str] = []
    add = out.append
    start = 0
    last = size - 1 - maxlinelen  # cut while the rest is longer than the line allows
    width = maxlinelen - 1  # room for the soft break's '='
    while start <= last:
        stop = start + width
        if line[stop - 2] == "=":  # an escape would be cut: break before it
            add(line[start : stop - 1])
            start = stop - 2
        elif line[stop - 1] == "=":
            add(line[start:stop])
            start = stop - 1
        else:
            add(line[start:stop] + "=")
            start = stop
    if spaced:
        room = start - last
        space = line[-1]
        if room >= 3:
            add(line[start:-1] + _QUOTED[ord(space)])
        elif room == 2:
            add(line[start:-1] + space + "=" + eol)
        else:
            add(line[start:-1] + "=" + eol + _QUOTED[ord(space)])
    else:
        add(line[start:])
    return eol.join(out)


def _qp_lines(lines: list[bytes], maxlinelen: int) -> bytes:
    """``qp_encode`` of the lines joined by "\\n" with one at the end, line by line.

    Quoted-printable works line by line, and a poll's HTML is mostly the same
    lines (the board's table, the styles): nearly every line of a game's
    reports was seen before, so each line's encoding is kept."""
    kept = _qp_kept if maxlinelen == 78 else {}
    out = list(map(kept.get, lines))
    if None in out:
        if len(kept) > KEPT_QP_LINES:
            kept.clear()  # a new game's lines: start again (each line is its own)
        for i, line in enumerate(lines):
            if out[i] is None:
                done = _cut(_escape(line.decode("latin-1")), maxlinelen, "\n").encode("ascii")
                kept[line] = out[i] = done
    return b"\n".join(out) + b"\n"  # type: ignore[arg-type]  # no None left


def encode_text(text: str, max_line_length: int = 78) -> tuple[str, bytes]:
    """(Content-Transfer-Encoding, body bytes) as ``set_content(text, charset="utf-8")``
    chooses them under a policy with linesep "\\n" and cte_type "8bit", and as
    the bytes generator then writes the body: 7bit or 8bit when every line
    fits, else quoted-printable or base64, whichever is shorter on the first
    ten lines (the standard heuristic)."""
    lines = text.encode("utf-8").splitlines()
    if max(map(len, lines), default=0) <= max_line_length:
        body = b"\n".join(lines) + b"\n"
        return ("7bit" if body.isascii() else "8bit"), body
    sniff = b"\n".join(lines[:10]) + b"\n"
    sniff_qp = qp_encode(sniff.decode("latin-1"), max_line_length)
    if len(sniff_qp) > len(binascii.b2a_base64(sniff)):
        data = b"\n".join(lines) + b"\n"
        step = max_line_length // 4 * 3
        return "base64", b"".join(
            binascii.b2a_base64(data[i : i + step]) for i in range(0, len(data), step)
        )
    if len(lines) <= 10:
        return "quoted-printable", sniff_qp.encode("ascii")
    return "quoted-printable", _qp_lines(lines, max_line_length)


def folded(name: str, value: str) -> bytes:
    """The header's line(s) as the generator writes them under ``mime.POLICY``.

    A header's folded form depends only on its name, its value and the policy,
    so it is kept (the same From, To, kind and part headers in most mails)."""
    plain = _ID_HEADERS.get(name)
    if plain is not None and len(name) + len(value) <= 76 and plain.fullmatch(value):
        # a new id in nearly every mail: plain ids on one line fold to themselves
        return f"{name}: {value}\n".encode("ascii")
    key = (name, value)
    with _lock:
        done = _folds.get(key)
        if done is not None:
            _folds.move_to_end(key)
            return done
    stored_name, header = mime.POLICY.header_store_parse(name, value)
    done = mime.POLICY.fold_binary(stored_name, header)
    with _lock:
        _folds[key] = done
        while len(_folds) > KEPT_FOLDS:
            _folds.popitem(last=False)
    return done


def multipart_header(subtype: str, boundary: str) -> bytes:
    """``Content-Type: multipart/SUBTYPE; boundary="..."`` as set_boundary leaves it, folded.

    Parsing this header is the dearest of a mail's and its boundary is new in
    every mail; a boundary as ``_make_boundary`` draws it (fixed width, '='
    and digits) folds the same way whatever its digits, so the first fold of
    each shape is kept and later boundaries are put in its place."""
    value = f'multipart/{subtype}; boundary="{boundary}"'
    if not _BOUNDARY_SHAPE.fullmatch(boundary):
        return _fold_fresh("Content-Type", value)
    key = (subtype, len(boundary))
    template = _boundary_folds.get(key)
    new = boundary.encode("ascii")
    if template is not None:
        done, old = template
        return done.replace(old, new)
    done = _fold_fresh("Content-Type", value)
    if done.count(new) == 1:
        with _lock:
            _boundary_folds[key] = (done, new)
    return done


def _fold_fresh(name: str, value: str) -> bytes:
    """Fold a header parsed anew (a boundary header never comes again)."""
    return mime.POLICY.fold_binary(name, mime.POLICY.header_factory(name, value))


def _supported() -> bool:
    """The policy is the one this writer copies (it is a module global: tests may swap it)."""
    pol = mime.POLICY
    return (
        type(pol) is mime.Policy
        and pol.linesep == "\n"
        and pol.cte_type == "8bit"
        and pol.max_line_length == 78
        and not pol.utf8
        and pol.mangle_from_ is False
    )


def _top_headers(
    rendered: RenderedMail,
    sender: str,
    recipient: str,
    message_id: str,
    in_reply_to: str | None,
    references: Sequence[str],
    extra_headers: Mapping[str, str] | None,
    date: datetime | None,
) -> list[tuple[str, bytes]]:
    """The headers to_mime sets, in its order, before the MIME ones: (name, folded).

    Each is parsed when to_mime would set it, also one an extra header then
    replaces, so a value the parser refuses is refused as before."""
    fields = (sender, recipient, rendered.subject, message_id, in_reply_to or "")
    if not all(type(v) is str for v in (*fields, rendered.kind, rendered.game)):
        raise WriterUnsupported("a header value that is not a str")
    if type(rendered.text) is not str or type(rendered.html) is not str:
        raise WriterUnsupported("a body that is not a str")
    extras = list((extra_headers or {}).items())
    for name, value in extras:
        if type(name) is not str or type(value) is not str:
            raise WriterUnsupported("an extra header that is not a str")
        if name.lower().startswith("content-") or name.lower() == "mime-version":
            raise WriterUnsupported(f"extra header {name}: it would move into a MIME part")
    headers: list[tuple[str, bytes]] = []

    def add(name: str, value: str) -> None:
        headers.append((name, folded(name, value)))

    add("From", sender)
    add("To", recipient)
    add("Subject", rendered.subject)
    add("Date", format_datetime(date or datetime.now(UTC)))
    add("Message-ID", mime.angled(message_id))
    if in_reply_to:
        add("In-Reply-To", mime.angled(in_reply_to))
    refs = list(dict.fromkeys(mime.angled(r) for r in references))
    if in_reply_to and mime.angled(in_reply_to) not in refs:
        refs.append(mime.angled(in_reply_to))
    if refs:
        add("References", " ".join(refs))
    add("Auto-Submitted", "auto-generated")
    add("X-Auto-Response-Suppress", "All")
    if rendered.kind:
        add("X-Pbem-Kind", rendered.kind)
    if rendered.game:
        add("X-Pbem-Game", rendered.game)
    for name, value in extras:
        lower = name.lower()
        headers = [(n, f) for n, f in headers if n.lower() != lower]
        add(name, value)
    return headers


def _text_part(subtype: str, text: str, mime_version: bool, disposition: bytes = b"") -> bytes:
    """A text part as set_content(text, subtype=..., charset="utf-8") builds it."""
    cte, body = encode_text(text)
    head = (
        folded("Content-Type", f'text/{subtype}; charset="utf-8"')
        + folded("Content-Transfer-Encoding", cte)
        + disposition
    )
    if mime_version:
        head += folded("MIME-Version", "1.0")
    return head + b"\n" + body


def _picture_bytes(cid: str, data: bytes) -> bytes:
    """The inline picture part's bytes, as ``add_related`` builds it and the generator
    writes it inside a mail; written once per picture (it goes to every player)."""
    key = (cid, data)
    with _lock:
        done = _pictures.get(key)
        if done is not None:
            _pictures.move_to_end(key)
            return done
    part = EmailMessage(policy=mime.POLICY)
    part.set_content(
        data,
        maintype="image",
        subtype="png",
        cid=mime.angled(cid),
        disposition="inline",
        filename=mime.picture_filename(cid),
    )
    buffer = BytesIO()
    BytesGenerator(buffer, False, policy=mime.POLICY).flatten(part, False, "\n")
    done = buffer.getvalue()
    with _lock:
        _pictures[key] = done
        while len(_pictures) > KEPT_PICTURES:
            _pictures.popitem(last=False)
    return done


@contextmanager
def boundaries_of(message_id: str) -> Iterator[None]:
    """A scope in which a mail's MIME boundaries are drawn from its Message-ID,
    not at random: the mail made again (a notice told twice) is the same bytes.

    Both ways to the bytes (``draw_boundary`` here, the standard generator in
    ``to_mime``) draw from the ``random`` module, so the scope seeds it and
    puts its state back after. The telling stage runs on one thread; nothing
    else in pbem draws from ``random`` (the rules have their own streams)."""
    seed = hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).digest()
    state = random.getstate()
    random.seed(seed)
    try:
        yield
    finally:
        random.setstate(state)


def draw_boundary(text: bytes) -> str:
    """A MIME boundary for a multipart whose parts are ``text``, drawn as
    ``email.generator.Generator._make_boundary`` draws it (the same ``random``
    call, so the same boundary from the same seed).

    The standard one searches the whole mail with a regex for the boundary
    before using it; here the regex runs only when the boundary occurs in the
    mail at all, which practically never happens."""
    token = random.randrange(sys.maxsize)
    boundary = "=" * 15 + _BOUNDARY_FORMAT % token + "=="
    if b"--" + boundary.encode("ascii") not in text:
        return boundary
    found, counter = boundary, 0
    while re.search(b"^--" + re.escape(found.encode("ascii")) + b"(--)?$", text, re.MULTILINE):
        found = f"{boundary}.{counter}"
        counter += 1
    return found


def _multipart(subtype: str, parts: list[bytes], head: bytes) -> bytes:
    """``head`` (the headers before Content-Type), the boundary header and the parts,
    the boundary drawn as the generator draws it: after its parts are written."""
    boundary = draw_boundary(b"\n".join(parts))
    mark = b"--" + boundary.encode("ascii")
    return b"".join(
        (
            head,
            multipart_header(subtype, boundary),
            b"\n",
            mark,
            b"\n",
            (b"\n" + mark + b"\n").join(parts),
            b"\n",
            mark,
            b"--\n",
        )
    )


def _write(
    rendered: RenderedMail,
    top: list[tuple[str, bytes]],
    attachment: tuple[str, str] | None = None,
    attachment_type: str = "plain",
) -> bytes:
    head = b"".join(f for _, f in top) + folded("MIME-Version", "1.0")
    text = _text_part("plain", rendered.text, mime_version=False)
    # the HTML part has its own MIME-Version (add_alternative builds it as a message);
    # make_related leaves it on the multipart/related part that takes the HTML's place
    html = _text_part("html", rendered.html, mime_version=not rendered.images)
    if rendered.images:
        pictures = [_picture_bytes(cid, data) for cid, data in sorted(rendered.images.items())]
        html = _multipart("related", [html, *pictures], folded("MIME-Version", "1.0"))
    if attachment is None:
        return _multipart("alternative", [text, html], head)
    # add_attachment: the alternative moves into a multipart/mixed (MIME-Version stays
    # on top), the attachment beside it is a text part built as a message
    alternative = _multipart("alternative", [text, html], b"")
    filename, content = attachment
    attached = _text_part(
        attachment_type,
        content,
        mime_version=True,
        disposition=folded("Content-Disposition", f'attachment; filename="{filename}"'),
    )
    return _multipart("mixed", [alternative, attached], head)


def _attachment_ok(attachment: tuple[str, str] | None, attachment_type: str) -> bool:
    """An attachment the writer writes: a str, an ASCII file name that needs no quoting."""
    if attachment is None:
        return True
    if type(attachment) is not tuple or len(attachment) != 2:
        return False
    filename, content = attachment
    return (
        type(content) is str
        and type(filename) is str
        and type(attachment_type) is str
        and _PLAIN_NAME.fullmatch(filename) is not None
        and _PLAIN_NAME.fullmatch(attachment_type) is not None
    )


def mail_bytes(
    rendered: RenderedMail,
    *,
    sender: str,
    recipient: str,
    message_id: str,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    extra_headers: Mapping[str, str] | None = None,
    date: datetime | None = None,
    attachment: tuple[str, str] | None = None,
    attachment_type: str = "plain",
) -> bytes:
    """The mail's bytes: ``bytes(to_mime(...))``, with ``attachment`` (file name,
    text) added as ``add_attachment`` adds it; written directly when it can be."""
    if _supported() and _attachment_ok(attachment, attachment_type):
        try:
            top = _top_headers(
                rendered, sender, recipient, message_id, in_reply_to, references,
                extra_headers, date,
            )  # fmt: skip
            return _write(rendered, top, attachment, attachment_type)
        except WriterUnsupported:
            pass  # a value the writer does not copy exactly: the standard library writes it
    msg = mime.to_mime(
        rendered,
        sender=sender,
        recipient=recipient,
        message_id=message_id,
        in_reply_to=in_reply_to,
        references=references,
        extra_headers=extra_headers,
        date=date,
    )
    if attachment is not None:
        filename, content = attachment
        msg.add_attachment(content, subtype=attachment_type, filename=filename)
    return bytes(msg)
