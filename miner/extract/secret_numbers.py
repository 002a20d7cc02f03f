"""Numbers that are secrets by what they are: a payment card's number, a bank account's IBAN.

A card number is 13 to 19 digits that pass the Luhn check. It is hidden
when it is grouped as printed on a card (four by four, or Amex's 4-6-5),
or written in a row right after a word for a card ("card", "Visa",
"tarjeta", "卡号", …): a long id in a row (an order, a Discord snowflake,
a timestamp in milliseconds) passes the check one time in ten. A number
of few distinct digits is a payment provider's documented test card
(4242 4242 4242 4242) and stays.

An IBAN is a country's code, two check digits and the account, in a row or
in groups of four. It is hidden when it has its country's length and passes
the ISO 7064 mod-97 check (one string of that shape in 97 would pass by
chance). The examples printed in the standard and in banks' documentation
(GB82 WEST 1234 5698 7654 32) stay, as the test cards do. Standard library
only: the hooks redact their logs with both.
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


# Each country's IBAN length, from the IBAN registry (ISO 13616).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29,
    "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24,
    "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    "YE": 30,
}

# The examples of ISO 13616 and of the IBAN registry that documentation copies: no one's account.
DOCUMENTED_IBANS = frozenset({
    "GB82WEST12345698765432", "GB29NWBK60161331926819", "DE89370400440532013000", "FR1420041010050500013M02606",
    "NL91ABNA0417164300", "ES9121000418450200051332", "IT60X0542811101000000123456", "CH9300762011623852957",
    "BE68539007547034", "AT611904300234573201", "PT50000201231234567890154", "IE29AIBK93115212345678",
})


def iban_valid(compact: str) -> bool:
    """Whether `compact` (no spaces, capitals) has its country's IBAN length and passes the mod-97 check."""
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


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


def ibans(text: str, hidden: Callable[[str, str], str]) -> str:
    """`text` with each IBAN replaced by `hidden("iban", iban)`."""
    def hide(m: re.Match) -> str:
        value = m.group(0)
        compact = value.replace(" ", "")
        return hidden("iban", value) if iban_valid(compact) and compact not in DOCUMENTED_IBANS else value

    return patterns().iban.sub(hide, text)
