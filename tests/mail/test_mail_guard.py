"""The loop guard: which mails pbem never answers, and the reply budget."""

from __future__ import annotations

from email import message_from_bytes, policy
from pathlib import Path

import pytest

from pbem.mail.decode import decode_mail
from pbem.mail.guard import ReplyBudget, auto_headers, header_reason, no_reply_reason

OWN = {"game@pbem.example"}


def mail(headers: str, *, content_type: str = "text/plain") -> bytes:
    base = (
        "From: Alice Player <alice@x.example>\n"
        "To: game@pbem.example\n"
        "Subject: Re: [world-1] Turn 3\n"
        "Message-ID: <m1@x.example>\n"
        f"Content-Type: {content_type}\n"
    )
    return (base + headers + "\nPLACE 3 Alaska\n").encode()


NO_REPLY_CASES = {
    "auto-replied": (
        "Auto-Submitted: auto-replied\n",
        "an automatic mail (Auto-Submitted: auto-replied)",
    ),
    "auto-generated": (
        "Auto-Submitted: Auto-Generated; owner-email=x@y\n",
        "an automatic mail (Auto-Submitted: auto-generated)",
    ),
    "precedence-bulk": ("Precedence: bulk\n", "a bulk or list mail (Precedence: bulk)"),
    "precedence-junk": ("Precedence: JUNK\n", "a bulk or list mail (Precedence: junk)"),
    "precedence-list": ("Precedence: list\n", "a bulk or list mail (Precedence: list)"),
    "list-id": ("List-Id: Risk fans <risk.lists.example>\n", "a mailing list mail (List-Id)"),
    "empty-return-path": ("Return-Path: <>\n", "a bounce (empty Return-Path)"),
    "x-autoreply": ("X-Autoreply: yes\n", "an auto-reply (X-Autoreply)"),
    "x-autorespond": ("X-Autorespond: yes\n", "an auto-reply (X-Autorespond)"),
}


@pytest.mark.parametrize("case", sorted(NO_REPLY_CASES))
def test_headers_that_forbid_an_answer(case: str) -> None:
    headers, reason = NO_REPLY_CASES[case]
    raw = mail(headers)
    assert no_reply_reason(decode_mail(raw), OWN) == reason
    assert no_reply_reason(message_from_bytes(raw, policy=policy.default), OWN) == reason
    assert header_reason(message_from_bytes(raw, policy=policy.default)) == reason


def test_delivery_status_report_is_never_answered() -> None:
    raw = (
        b"From: Mail Delivery System <bounces@mx.example>\n"
        b"To: game@pbem.example\nSubject: Undelivered Mail Returned to Sender\n"
        b"Message-ID: <dsn1@mx.example>\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n\nI could not deliver your mail.\n"
        b"--b\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example\n\n"
        b"Final-Recipient: rfc822; gone@x.example\nAction: failed\nStatus: 5.1.1\n"
        b"--b--\n"
    )
    assert no_reply_reason(decode_mail(raw), OWN) == "a delivery or read report (multipart/report)"


@pytest.mark.parametrize(
    ("content_type", "wrapped"),
    [
        ("message/delivery-status", False),  # a bounce that is nothing but the report
        ("message/delivery-status", True),  # a report inside a plain multipart/mixed
        ("message/disposition-notification", True),  # a read receipt
    ],
)
def test_a_report_at_any_level_is_a_bounce(content_type: str, wrapped: bool) -> None:
    head = b"From: relay@mx.example\nTo: game@pbem.example\nSubject: failure\nMIME-Version: 1.0\n"
    report = f"Content-Type: {content_type}\n\nReporting-MTA: dns; mx.example\n".encode()
    if wrapped:
        body = (
            b'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n'
            b"PLACE 3 Alaska\n--b\n" + report + b"--b--\n"
        )
    else:
        body = report
    raw = head + body
    expected = f"a delivery or read report ({content_type})"
    assert no_reply_reason(decode_mail(raw), OWN) == expected


@pytest.mark.parametrize(
    ("sender", "reason"),
    [
        ("MAILER-DAEMON@mx.example", "sent by a mail system (mailer-daemon@mx.example)"),
        ("Postmaster@x.example", "sent by a mail system (postmaster@x.example)"),
        ("game@PBEM.example", "our own address (game@pbem.example)"),
    ],
)
def test_senders_that_are_never_answered(sender: str, reason: str) -> None:
    raw = f"From: Someone <{sender}>\nMessage-ID: <s@x>\n\nhello\n".encode()
    assert no_reply_reason(decode_mail(raw), OWN) == reason
    assert no_reply_reason(message_from_bytes(raw, policy=policy.default), OWN) == reason


def test_mail_without_sender_is_never_answered() -> None:
    raw = b"To: game@pbem.example\nMessage-ID: <s@x>\n\nhello\n"
    assert no_reply_reason(decode_mail(raw), OWN) == "no sender address (or more than one)"
    assert no_reply_reason(message_from_bytes(raw, policy=policy.default), OWN) == (
        "no sender address (or more than one)"
    )


@pytest.mark.parametrize(
    "headers",
    ["", "Auto-Submitted: no\n", "Precedence: first-class\n", "Return-Path: <alice@x.example>\n"],
    ids=["plain", "auto-submitted-no", "precedence-other", "return-path"],
)
def test_normal_mails_may_be_answered(headers: str) -> None:
    raw = mail(headers)
    assert no_reply_reason(decode_mail(raw), OWN) is None
    assert no_reply_reason(message_from_bytes(raw, policy=policy.default), OWN) is None


def test_corpus_order_mails_may_be_answered() -> None:
    corpus = sorted((Path(__file__).parents[1] / "mail_corpus").glob("*.eml"))
    assert len(corpus) >= 16
    reasons = {p.stem: no_reply_reason(decode_mail(p.read_bytes()), OWN) for p in corpus}
    assert reasons == dict.fromkeys(reasons)


def test_our_own_mail_headers_trip_our_own_guard() -> None:
    headers = auto_headers()
    assert headers["Auto-Submitted"] == "auto-generated"
    assert headers["Precedence"] == "bulk"
    raw = mail("".join(f"{k}: {v}\n" for k, v in headers.items()))
    assert (
        no_reply_reason(decode_mail(raw), OWN)
        == "an automatic mail (Auto-Submitted: auto-generated)"
    )


def test_reply_budget_is_a_pure_function_of_counts() -> None:
    budget = ReplyBudget(per_hour=3, exempt=frozenset({"GM@pbem.example"}))
    assert [budget.allows("alice@x.example", n) for n in range(5)] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert budget.allows("gm@pbem.example", 1000) is True
    assert ReplyBudget(per_hour=0).allows("alice@x.example", 0) is False
    assert ReplyBudget().per_hour == 20


def test_reply_budget_rejects_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        ReplyBudget(per_hour=-1)
