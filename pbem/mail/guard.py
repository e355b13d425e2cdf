"""Loop and abuse protection: which mails must never be answered, and how many
answers one address may get.

Answering an auto-reply, a bounce or a mailing list can start a mail loop
that runs until a quota stops it. RFC 3834 says what an automatic responder
must check; this module checks it. Every mail pbem sends carries
``auto_headers()`` so that well-behaved responders on the other side leave
it alone too.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from typing import TYPE_CHECKING

from pbem.mail.bounds import parse_chars, scrub_line
from pbem.mail.identity import address_of

if TYPE_CHECKING:
    from pbem.mail.decode import DecodedMail

_NO_REPLY_LOCAL_PARTS = frozenset({"mailer-daemon", "postmaster"})
_BULK_PRECEDENCE = frozenset({"bulk", "junk", "list", "auto_reply"})


def header_reason(msg: Message) -> str | None:
    """Why the headers of ``msg`` say it must not be answered, or None."""
    auto_submitted = _get(msg, "Auto-Submitted")
    if auto_submitted is not None:
        token = auto_submitted.split(";")[0].strip().lower()
        if token and token != "no":
            return f"an automatic mail (Auto-Submitted: {scrub_line(token, 60)})"
    precedence = (_get(msg, "Precedence") or "").strip().lower()
    if precedence in _BULK_PRECEDENCE:
        return f"a bulk or list mail (Precedence: {scrub_line(precedence, 60)})"
    if _get(msg, "List-Id") is not None:
        return "a mailing list mail (List-Id)"
    return_path = _get(msg, "Return-Path")
    if return_path is not None and return_path.strip() in ("<>", ""):
        return "a bounce (empty Return-Path)"
    if msg.get_content_type() == "multipart/report":
        return "a delivery or read report (multipart/report)"
    report = _report_part(msg)
    if report is not None:
        return f"a delivery or read report ({report})"
    for name in ("X-Autoreply", "X-Autorespond"):
        if _get(msg, name) is not None:
            return f"an auto-reply ({name})"
    return sender_reason(address_of(_get(msg, "From") or ""))


def sender_reason(sender: str) -> str | None:
    """Why this From address must not be answered (empty, a mailer daemon), or None."""
    address = sender.strip().lower()
    if not address:
        return "no sender address (or more than one)"
    if address.split("@")[0] in _NO_REPLY_LOCAL_PARTS:
        return f"sent by a mail system ({scrub_line(address, 320)})"
    return None


def no_reply_reason(mail: DecodedMail | Message, own_addresses: set[str]) -> str | None:
    """Why pbem must not answer this mail, or None when an answer is allowed.

    Takes a DecodedMail (which carries the header checks already) or the
    parsed message itself. ``own_addresses`` are pbem's addresses: a mail from
    one of them is our own mail coming back.
    """
    if isinstance(mail, Message):
        reason = header_reason(mail)
        sender = address_of(_get(mail, "From") or "")
    else:
        reason = mail.auto_submitted or sender_reason(mail.sender)
        sender = mail.sender.lower()
    if reason is not None:
        return reason
    if sender in {address.strip().lower() for address in own_addresses}:
        return f"our own address ({scrub_line(sender, 320)})"
    return None


def auto_headers() -> dict[str, str]:
    """Headers for every mail pbem sends, so that nobody's robot answers it."""
    return {
        "Auto-Submitted": "auto-generated",
        "Precedence": "bulk",
        "X-Auto-Response-Suppress": "OOF, AutoReply",
    }


@dataclass(frozen=True)
class ReplyBudget:
    """At most ``per_hour`` answers to one address per hour.

    Pure: the caller counts what it sent (in its database) and asks. Addresses
    in ``exempt`` (the game master, say) are never limited.
    """

    per_hour: int = 20
    exempt: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.per_hour < 0:
            raise ValueError(f"a reply budget cannot be negative (got {self.per_hour})")
        object.__setattr__(self, "exempt", frozenset(a.lower() for a in self.exempt))

    def allows(self, address: str, sent_in_last_hour: int) -> bool:
        """True when one more answer to ``address`` stays within the budget."""
        if address.strip().lower() in self.exempt:
            return True
        return sent_in_last_hour < self.per_hour


_REPORT_TYPES = frozenset(
    {
        "message/delivery-status",
        "message/disposition-notification",
        "message/global-delivery-status",
    }
)


def _report_part(msg: Message, limit: int = 200) -> str | None:
    """The type of a delivery or read report anywhere in the mail, or None
    (iterative and bounded: a hostile mail cannot make it recurse)."""
    stack = [msg]
    seen = 0
    while stack and seen < limit:
        part = stack.pop()
        seen += 1
        kind = part.get_content_type()
        if kind in _REPORT_TYPES:
            return kind
        if part.is_multipart():
            payload = part.get_payload()
            if isinstance(payload, list):
                stack.extend(p for p in payload if isinstance(p, Message))
    return None


def _get(msg: Message, name: str) -> str | None:
    """A header as text, or None when missing; a malformed header counts as
    its raw text, cut to what a parser may see (pbem.mail.bounds)."""
    try:
        value = msg.get(name)
    except Exception:
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
        value = None if value is None else str(value)[: parse_chars(name)]
    return None if value is None else str(value)
