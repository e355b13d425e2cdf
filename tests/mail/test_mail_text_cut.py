"""A text cut to the mail layer's limits is marked, never read in part, and its
answer does not call the cut length the mail's (pbem.mail.decode, parse_orders).
"""

from __future__ import annotations

import pytest

from pbem.mail import bounds
from pbem.mail.decode import bounded_text, decode_mail
from pbem.maps import builtin_map
from pbem.orders import OrdersError, parse_orders

BOARD = builtin_map("classic")


def test_bounded_text_says_whether_it_cut() -> None:
    assert bounded_text("a\nb") == ("a\nb", False)
    many = "\n".join(["x"] * (bounds.MAX_TEXT_LINES + 1))
    assert bounded_text(many) == ("\n".join(["x"] * bounds.MAX_TEXT_LINES), True)
    long = "y" * (bounds.MAX_TEXT_CHARS + 1)
    assert bounded_text(long) == ("y" * bounds.MAX_TEXT_CHARS, True)
    assert bounded_text("y" * bounds.MAX_TEXT_CHARS) == ("y" * bounds.MAX_TEXT_CHARS, False)


@pytest.mark.parametrize(
    ("body", "html", "cut"),
    [
        ("PLACE 3 Alaska\n" * 100, False, False),
        ("PLACE 3 Alaska\n" * 20_000, False, True),  # 300,000 characters
        ("x\n" * 25_000, False, True),  # 25,000 lines, 50,000 characters
        ("x<br>" * 30_000, True, True),  # the HTML reader stops at 20,000 lines
        ("x<br>" * 100, True, False),
    ],
)
def test_a_decoded_mail_says_whether_its_text_was_cut(body: str, html: bool, cut: bool) -> None:
    kind = "html" if html else "plain"
    raw = (
        "From: ann@example.org\r\nTo: pbem@example.org\r\nSubject: x\r\n"
        f"Content-Type: text/{kind}; charset=us-ascii\r\n\r\n{body}"
    ).encode()
    assert decode_mail(raw).text_cut is cut


def test_a_cut_text_is_refused_as_longer_than_what_is_left() -> None:
    with pytest.raises(OrdersError) as caught:
        parse_orders("PLACE 1 Alaska\n" * 3, BOARD, cut=True)
    assert [p.message for p in caught.value.problems] == [
        "the mail is longer than 45 characters; orders are read only from mails of at "
        "most 20000 characters"
    ]
