"""Numbers that are secrets by what they are: a payment card's number.

A card number is 13 to 19 digits that pass the Luhn check. It is hidden
when it is grouped as printed on a card (four by four, or Amex's 4-6-5),
or written in a row right after a word for a card ("card", "Visa",
"tarjeta", "卡号", …): a long id in a row (an order, a Discord snowflake,
a timestamp in milliseconds) passes the check one time in ten. A number
of few distinct digits is a payment provider's documented test card
(4242 4242 4242 4242) and stays. Standard library only: the hooks redact
their logs with it.
"""

from __future__ import annotations

import re

from .secret_patterns import patterns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

DIGIT_RUN_RE = re.compile(r"[0-9]{4}[ -]?[0-9]{4}")  # no card number without it (ASCII: faster than \d)
CARD_WORDS = ("card", "visa", "mastercard", "amex", "american express", "credit", "debit", "carte", "tarjeta",
              "carta", "cartão", "karte", "кредит", "карт", "卡", "カード", "카드")
CARD_WORD_WINDOW = 60  # characters before a number in a row where a word for a card is looked for
CARD_DISTINCT_DIGITS = 6  # fewer: a test number from a payment provider's documentation


def luhn(digits: str) -> bool:
    """Whether `digits` pass the Luhn check, as every card number does."""
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def card_numbers(text: str, hidden: Callable[[str, str], str]) -> str:
    """`text` with each card number replaced by `hidden("card-number", number)`."""
    def hide(m: re.Match) -> str:
        value = m.group(0)
        digits = value.replace(" ", "").replace("-", "")
        if not luhn(digits) or len(set(digits)) < CARD_DISTINCT_DIGITS:
            return value
        if digits == value:
            window = text[max(0, m.start() - CARD_WORD_WINDOW):m.start()].lower()
            if not any(word in window for word in CARD_WORDS):
                return value
        return hidden("card-number", value)

    return patterns().card.sub(hide, text)
