"""decode_mail: real-looking mails from common mail programs give exactly their new text."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.decode import (
    MAX_DEPTH,
    Attachment,
    decode_bytes,
    decode_mail,
    html_to_text,
    strip_reply,
    synthetic_message_id,
    unflow,
)
from pbem.mail.errors import MailError, MailTooDeep, MailTooLarge, UndecodableMail
from pbem.mail.identity import identify

CORPUS = Path(__file__).parents[1] / "mail_corpus"
CORPUS_MAILS = sorted(CORPUS.glob("*.eml"))


def corpus(name: str) -> bytes:
    return (CORPUS / f"{name}.eml").read_bytes()


def test_corpus_is_complete() -> None:
    names = {p.stem for p in CORPUS_MAILS}
    assert names == {p.stem for p in CORPUS.glob("*.expected")}
    assert names >= {
        "gmail_reply",
        "outlook_original_message",
        "outlook_from_sent",
        "outlook_underscore",
        "apple_mail_reply",
        "apple_mail_forward",
        "thunderbird_reply",
        "html_only",
        "qp_cp1252",
        "base64_utf8",
        "flowed_delsp",
        "signature",
        "attachment",
        "unknown_charset",
        "mislabelled_ascii",
        "crlf",
    }
    assert b"\r\n" in corpus("crlf") and b"\n" not in corpus("crlf").replace(b"\r\n", b"")


@pytest.mark.parametrize("path", CORPUS_MAILS, ids=lambda p: p.stem)
def test_corpus_mail_gives_exactly_the_expected_text(path: Path) -> None:
    expected = path.with_suffix(".expected").read_text(encoding="utf-8")
    assert decode_mail(path.read_bytes()).text + "\n" == expected


@pytest.mark.parametrize("name", ["gmail_reply", "outlook_underscore"])
def test_html_alternative_gives_the_same_text_as_the_plain_one(name: str) -> None:
    msg = BytesParser(policy=policy.default).parsebytes(corpus(name))
    html = msg.get_body(preferencelist=("html",))
    assert html is not None and html.get_content_type() == "text/html"
    expected = (CORPUS / f"{name}.expected").read_text(encoding="utf-8")
    assert strip_reply(html_to_text(html.get_content())) + "\n" == expected


def test_headers_of_a_gmail_reply() -> None:
    mail = decode_mail(corpus("gmail_reply"))
    assert mail.message_id == "<CAF1xq+b7Yd8Wc0m=Qk1ZpA@mail.gmail.com>"
    assert mail.sender == "alice.player@gmail.com"
    assert mail.sender_name == "Alice Player"
    assert mail.subject == "Re: [world-1] Turn 3: your move"
    assert mail.in_reply_to == "<turn-3.world-1@pbem.example>"
    assert mail.references == ["<turn-3.world-1@pbem.example>"]
    assert mail.recipients == ["game@pbem.example"]
    assert mail.date == datetime(2025, 2, 3, 10, 2, 41, tzinfo=UTC)
    assert mail.auto_submitted is None
    assert mail.source == "plain"
    assert mail.attachments == []
    raw = corpus("gmail_reply")
    assert mail.checksum == hashlib.sha256(raw).hexdigest()
    assert mail.size == len(raw)


def test_encoded_headers_are_decoded() -> None:
    mail = decode_mail(corpus("qp_cp1252"))
    assert mail.sender_name == "François Müller"
    assert mail.subject == "[world-1] ordres de François"
    assert decode_mail(corpus("base64_utf8")).subject == "[world-1] έντολές"
    apple = decode_mail(corpus("apple_mail_reply"))
    assert apple.sender_name == "Zoë Washburne"
    assert apple.date == datetime(2025, 2, 7, 9, 41, 7, tzinfo=timezone(timedelta(hours=1)))


def test_html_only_mail_is_turned_into_text() -> None:
    mail = decode_mail(corpus("html_only"))
    assert mail.source == "html"
    assert "alert" not in mail.text and "ignored" not in mail.text


def test_attachments_are_listed_and_not_read() -> None:
    mail = decode_mail(corpus("attachment"))
    assert mail.attachments == [
        Attachment("battle-map.png", "image/png"),
        Attachment("more-orders.txt", "text/plain"),
    ]
    assert "PLACE 99" not in mail.text


def test_mail_without_text_part_has_empty_text() -> None:
    raw = (
        b"From: a@b.example\r\nMessage-ID: <x@y>\r\nMIME-Version: 1.0\r\n"
        b"Content-Type: application/pdf; name=orders.pdf\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n"
    )
    mail = decode_mail(raw)
    assert (mail.text, mail.source) == ("", "none")
    assert mail.attachments == [Attachment("orders.pdf", "application/pdf")]


# --- size and broken input ---------------------------------------------------


def _plain_mail(body: str, message_id: str | None = "<m@x.example>") -> bytes:
    head = "From: Player <player@x.example>\r\nTo: game@pbem.example\r\nSubject: orders\r\n"
    if message_id:
        head += f"Message-ID: {message_id}\r\n"
    return (head + "\r\n" + body).encode()


def test_oversized_mail_is_refused_with_a_message_for_the_sender() -> None:
    raw = _plain_mail("PLACE 3 Alaska\r\n" + "x" * 1_100_000)
    with pytest.raises(MailTooLarge) as caught:
        decode_mail(raw)  # the one limit, [mail] max_mail_bytes's default
    assert caught.value.size == len(raw)
    assert caught.value.limit == 1_048_576
    assert f"{len(raw):,} bytes" in caught.value.message
    assert "at most 1,048,576 bytes" in caught.value.message
    assert isinstance(caught.value, MailError)


def test_size_limit_is_inclusive_and_configurable() -> None:
    raw = _plain_mail("PLACE 3 Alaska\r\n")
    assert decode_mail(raw, max_bytes=len(raw)).text == "PLACE 3 Alaska"
    with pytest.raises(MailTooLarge):
        decode_mail(raw, max_bytes=len(raw) - 1)


def test_missing_message_id_gives_a_stand_in_stable_across_deliveries() -> None:
    raw = _plain_mail("PLACE 3 Alaska\r\n", message_id=None)
    expected = decode_mail(raw).message_id
    assert expected.endswith("@pbem.invalid>") and len(expected) == len("<@pbem.invalid>") + 40
    assert synthetic_message_id(raw) == expected
    # A second delivery adds trace headers: still the same mail.
    again = b"Received: from relay.example by mx.example; Tue, 1 Dec 2026 10:00:00 +0000\r\n"
    again += b"Delivered-To: pbem@localhost\r\nReturn-Path: <x@y.example>\r\n" + raw
    assert decode_mail(again).message_id == expected
    # Other content is another mail.
    assert decode_mail(raw + b"x").message_id != expected


def test_folded_message_id_is_unfolded() -> None:
    raw = _plain_mail("x\r\n", message_id="\r\n <folded@x.example>")
    assert decode_mail(raw).message_id == "<folded@x.example>"


@pytest.mark.parametrize(
    "raw",
    [b"", b"  \r\n\r\n", b"just some text without any header\nand a second line\n"],
    ids=["empty", "blank", "no-header"],
)
def test_bytes_that_are_no_mail_are_undecodable(raw: bytes) -> None:
    with pytest.raises(UndecodableMail):
        decode_mail(raw)


def test_mail_without_from_has_empty_sender_and_a_no_reply_reason() -> None:
    mail = decode_mail(b"Subject: hi\r\nMessage-ID: <a@b>\r\n\r\nPLACE 3 Alaska\r\n")
    assert (mail.sender, mail.sender_name) == ("", "")
    assert mail.auto_submitted == "no sender address (or more than one)"
    assert mail.text == "PLACE 3 Alaska"


@pytest.mark.parametrize(
    "sender",
    [
        b"alice@example.org, mallory@evil.example",
        b"Alice <alice@example.org>, Mallory <mallory@evil.example>",
    ],
)
def test_a_from_line_with_two_addresses_speaks_for_neither(sender: bytes) -> None:
    raw = b"From: " + sender + b"\r\nSubject: hi\r\nMessage-ID: <a@b>\r\n\r\nHELP\r\n"
    mail = decode_mail(raw)
    assert mail.sender == ""
    assert mail.auto_submitted == "no sender address (or more than one)"
    assert identify(raw).sender == ""


@pytest.mark.parametrize(
    ("sender", "address"),
    [
        (b'"Doe, Alice" <alice@example.org>', "alice@example.org"),
        (b"alice@example.org <alice@example.org>", "alice@example.org"),
        (b"alice@example.org (at alice@home.example)", "alice@example.org"),
    ],
)
def test_one_address_with_commas_or_addresses_in_its_name_is_that_address(
    sender: bytes, address: str
) -> None:
    raw = b"From: " + sender + b"\r\nSubject: hi\r\nMessage-ID: <a@b>\r\n\r\nHELP\r\n"
    assert decode_mail(raw).sender == address
    assert identify(raw).sender == address


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_decode_or_raise_a_mail_error(raw: bytes) -> None:
    try:
        mail = decode_mail(raw)
    except MailError:
        return
    assert isinstance(mail.text, str)


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"),
        max_size=300,
    )
)
def test_any_text_in_a_mail_decodes(body: str) -> None:
    raw = (
        "From: p@x.example\nMessage-ID: <h@x>\nContent-Type: text/plain; charset=utf-8\n"
        "Content-Transfer-Encoding: 8bit\n\n" + body
    ).encode()
    assert isinstance(decode_mail(raw).text, str)


# --- the pieces ------------------------------------------------------------------


def test_order_lines_that_look_like_markers_are_kept() -> None:
    text = "\n".join(
        [
            "PLACE 3 Alaska",
            "- a line starting with dash",
            "-- not a signature",
            "---",
            "ATTACK Alaska -> Kamchatka UNTIL 3 LEFT",
            "-> still an order line",
            "On turn 5 the north was mine",
            "FORTIFY 2 Ontario -> Quebec",
        ]
    )
    assert strip_reply(text) == text


def test_bare_double_dash_ends_the_text_like_the_signature_separator() -> None:
    assert strip_reply("PLACE 3 Alaska\n--\nBob\nPLACE 9 Peru") == "PLACE 3 Alaska"
    assert strip_reply("PLACE 3 Alaska\n-- \nBob") == "PLACE 3 Alaska"


def test_wrote_line_without_a_quote_after_it_is_kept() -> None:
    text = "PRESS TO ALL\nAlice wrote:\nthat she will attack\nENDPRESS"
    assert strip_reply(text) == text


def test_interleaved_reply_keeps_the_text_below_the_quote() -> None:
    text = "On Mon, 3 Feb 2025, GM wrote:\n> Your turn.\n\nPLACE 3 Alaska\n> more\nEND"
    assert strip_reply(text) == "PLACE 3 Alaska\nEND"


def test_from_line_without_sent_or_date_is_kept() -> None:
    assert strip_reply("PRESS TO bob\nFrom: your friend\nENDPRESS") == (
        "PRESS TO bob\nFrom: your friend\nENDPRESS"
    )


@pytest.mark.parametrize(
    "footer",
    [
        "Sent from my iPhone",
        "Sent from my Galaxy",
        "Get Outlook for iOS",
        "Sent from Mail for Windows",
    ],
)
def test_phone_footers_are_dropped(footer: str) -> None:
    assert strip_reply(f"PLACE 3 Alaska\n\n{footer}") == "PLACE 3 Alaska"


def test_nbsp_and_zero_width_characters_are_normalised() -> None:
    assert strip_reply("PLACE\xa03\u200b Alaska\ufeff") == "PLACE 3 Alaska"


def test_unflow_joins_soft_breaks_and_keeps_the_signature_separator() -> None:
    assert unflow("a \nb\n-- \nsig", delsp=False) == "a b\n-- \nsig"
    assert unflow("UN \nTIL\n", delsp=True) == "UNTIL\n"
    assert unflow(" From here\n >x", delsp=False) == "From here\n>x"


def test_unflow_ends_a_paragraph_when_the_quote_depth_changes() -> None:
    assert unflow("> quoted \nnew text", delsp=False) == "> quoted \nnew text"
    assert unflow(">> a \n>> b", delsp=False) == ">> a b"


@pytest.mark.parametrize(
    ("data", "charset", "expected"),
    [
        ("Århus".encode(), "x-unknown", "Århus"),
        ("Århus".encode("cp1252"), "utf-8", "Århus"),
        ("café – ok".encode("cp1252"), "us-ascii", "café – ok"),
        ("Århus".encode(), None, "Århus"),
        (b"plain", "rot13", "plain"),
        ("Zoë".encode("iso-8859-15"), "iso-8859-15", "Zoë"),
        (b"\x81\x8d", "x-unknown", "\ufffd\ufffd"),
    ],
)
def test_decode_bytes_falls_back_sensibly(data: bytes, charset: str | None, expected: str) -> None:
    assert decode_bytes(data, charset) == expected


def test_html_blockquotes_become_quoted_lines() -> None:
    html = "<p>PLACE 3 Alaska</p><blockquote>old<br>text<blockquote>older</blockquote></blockquote>"
    assert html_to_text(html) == "PLACE 3 Alaska\n> old\n> text\n>> older"


def test_html_pre_keeps_its_lines() -> None:
    assert html_to_text("<pre>PLACE 3 Alaska\nPLACE 2 Peru</pre>") == "PLACE 3 Alaska\nPLACE 2 Peru"


def test_auto_reply_reason_is_carried_in_the_decoded_mail() -> None:
    raw = (
        b"From: p@x.example\r\nAuto-Submitted: auto-replied\r\nMessage-ID: <v@x>\r\n\r\n"
        b"I am on holiday.\r\n"
    )
    assert decode_mail(raw).auto_submitted == "an automatic mail (Auto-Submitted: auto-replied)"


def test_pgp_mime_signed_mail_reads_the_signed_text() -> None:
    raw = (
        b"From: a@x.example\nMessage-ID: <s@x>\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature";'
        b' boundary="sig"\n\n'
        b"--sig\nContent-Type: text/plain; charset=utf-8; format=flowed\n\n"
        b"PLACE 3 Alaska\n-- \nme\n\n"
        b'--sig\nContent-Type: application/pgp-signature; name="signature.asc"\n'
        b'Content-Disposition: attachment; filename="signature.asc"\n\n'
        b"-----BEGIN PGP SIGNATURE-----\nxyz\n-----END PGP SIGNATURE-----\n--sig--\n"
    )
    mail = decode_mail(raw)
    assert mail.text == "PLACE 3 Alaska"
    assert mail.attachments == [Attachment("signature.asc", "application/pgp-signature")]


def _nested(depth: int) -> bytes:
    """A multipart mail with ``depth`` multiparts one inside the other."""
    head = "From: p@x.example\r\nTo: game@pbem.example\r\nSubject: deep\r\nMIME-Version: 1.0\r\n"
    parts = []
    for level in range(depth):
        parts.append(f'Content-Type: multipart/mixed; boundary="b{level}"\r\n\r\n--b{level}\r\n')
    body = "Content-Type: text/plain\r\n\r\nPLACE 3 Alaska\r\n"
    tail = "".join(f"\r\n--b{level}--\r\n" for level in reversed(range(depth)))
    return (head + "".join(parts) + body + tail).encode()


def test_a_mail_nested_too_deeply_gets_a_plain_answer_not_python_s() -> None:
    assert decode_mail(_nested(5)).text == "PLACE 3 Alaska"  # a real mail's depth is fine
    for depth in (MAX_DEPTH + 1, 5000):
        with pytest.raises(MailTooDeep) as caught:
            decode_mail(_nested(depth), max_bytes=10_000_000)
        assert str(caught.value) == (
            f"This mail is too deeply nested (more than {MAX_DEPTH} parts inside one another) "
            "to be read. Please send your orders as plain text in a new mail."
        )
        assert "recursion" not in str(caught.value)


def test_identity_ignores_trace_headers_but_not_content() -> None:
    raw = _plain_mail("PLACE 3 Alaska\r\n")
    relayed = (
        b"Received: from a by b; Tue, 1 Dec 2026 10:00:00 +0000\r\nX-Original-To: g@x\r\n" + raw
    )
    first, second = identify(raw), identify(relayed)
    assert first == second
    assert first.message_id == "<m@x.example>" and first.sender == "player@x.example"
    other = identify(_plain_mail("PLACE 4 Alaska\r\n"))  # same Message-ID, other content
    assert other.message_id == first.message_id and other.content_hash != first.content_hash
    assert identify(b"\xff\xfe garbage without headers").message_id.endswith("@pbem.invalid>")
