"""The assistant reporting how a check came out: "All 12 tests pass", "Build succeeded", "Everything checks out".

`refine` drops such a report with the recaps (it says what the assistant just saw, not what holds): a
later session needs the command that runs the tests, not that they passed on a Tuesday. A report is
recognised by how it opens (after "Okay," or "Great —"), in English, French, Spanish, Italian,
Portuguese, German and Chinese: tests or a build that passed, "everything checks out", "it works"; or by
a verdict that ends it ("`cargo clippy` — passes clean").
Japanese and Korean put the verb last, so there it is a test, a build or a compilation that passed,
anywhere in a short sentence.

What a check found stays a memory: "Confirmed — the port is 8080" and "Build succeeded, and the docs
site serves /guide/" say something besides the verdict, and a failure ("The build failed because …")
often says why something broke.
"""

from __future__ import annotations

import re
from functools import cache

from . import regex_cache

# "Okay, ", "Great — ", "好的，": words that open a reply before what it says.
_DISCOURSE = r"(?:(?:ok(?:ay)?|great|perfect|good|nice|excellent|alright|yes|yep|bien|bon|parfait|perfecto|vale|" \
             r"perfetto|ottimo|perfeito|ótimo|gut|perfekt|prima|好的|好|完美|太好了)\W+)?"
_SUBJECT = r"(?:(?:the|all|both|\d+)\s+){0,3}(?:(?:unit|integration|e2e|new|remaining|existing)\s+)?"
_OPENINGS = (
    # English
    _SUBJECT + r"(?:tests?|specs?|checks?)\s+(?:now\s+|still\s+|all\s+)?"
               r"(?:pass(?:es|ed)?|are\s+(?:passing|green)|is\s+passing|succeed(?:ed)?)\b",
    r"(?:everything|it\s+all|all)\s+(?:now\s+)?(?:checks\s+out|works|passes|looks\s+(?:good|right|correct))\b",
    r"(?:the\s+)?(?:build|boot|compilation|compile|lint|linter|type-?check|dry\s+run|smoke\s+test)\s+(?:now\s+)?"
    r"(?:succeeds|succeeded|passes|passed|is\s+clean|was\s+clean|looks\s+(?:right|good)|works|worked)\b",
    r"clean\s+(?:boot|build|run|exit|failure)\b",
    # French, Spanish, Italian, Portuguese, German
    r"(?:tous\s+)?les\s+tests\s+passent\b|la\s+compilation\s+(?:passe|réussit)\b",
    r"(?:todos\s+)?(?:los\s+tests|las\s+pruebas)\s+(?:ya\s+)?pasan\b|la\s+compilación\s+(?:pasa|funciona)\b",
    r"(?:tutti\s+)?i\s+test\s+(?:ora\s+)?passano\b|la\s+(?:build|compilazione)\s+(?:passa|funziona)\b",
    r"(?:todos\s+)?os\s+testes\s+(?:agora\s+)?passam\b|o\s+build\s+passou\b",
    r"(?:alle\s+)?tests\s+(?:sind\s+grün|laufen\s+durch|bestehen)\b|der\s+build\s+läuft\b",
    # "It works", alone or with an adverb, before a stop: "Funciona, aunque…" (not "Funziona su: …").
    r"(?:ça\s+|cela\s+|es\s+)?(?:marche|fonctionne|funciona|funziona|funktioniert)"
    r"(?:\s+(?:bien|bene|correctamente|correttamente|perfectamente|perfettamente|ahora|ora|agora|jetzt|gut|"
    r"einwandfrei|maintenant|correctement|parfaitement))?\s*[,.!—–-]",
    # Chinese
    r"(?:编译|构建|测试|验证|检查)(?:全部|都|已经|已)?(?:通过|成功)|(?:运行|一切)正常",
)
# A verdict that goes on with a statement of its own ("Build succeeded, and the docs site serves /guide/") is
# kept for what it says after the verdict.
_STATEMENT_AFTER = (r"[^.;!?]*?(?:,?\s+(?:and|but|y|e|et|und|pero|ma|mas|mais|aber)|\s*[;—–]|\s+-)\s+"
                    r"(?:the|this|that|it|its|they|there|we|el|la|los|las|il|lo|gli|le|les|o|os|as|der|die|das|es)\b")
# A verdict after a dash or a colon that ends the unit: "`cargo clippy` — passes clean", "10 tests: all passing".
_VERDICT_LAST = r"[—–:]\s*(?:all\s+|now\s+)?(?:pass(?:es|ed|ing)?|green)(?:\s+clean(?:ly)?)?\s*[.!]?\s*$"
# Japanese and Korean: the outcome comes last.
_CJK_ANYWHERE = (r"(?:テスト|ビルド|コンパイル)[^。]{0,20}(?:通りました|パスしました|成功しました)",
                 r"(?:테스트|빌드|컴파일)[^.]{0,20}(?:통과했|성공했)")


@cache
def _opening_re() -> re.Pattern[str]:
    return regex_cache.compile(r"^\W*" + _DISCOURSE + r"(?:" + "|".join(_OPENINGS) + r")", re.IGNORECASE)


@cache
def _statement_after_re() -> re.Pattern[str]:
    return regex_cache.compile(_STATEMENT_AFTER, re.IGNORECASE)


@cache
def _verdict_re() -> re.Pattern[str]:
    return regex_cache.compile("|".join((_VERDICT_LAST, *_CJK_ANYWHERE)), re.IGNORECASE)


def reports_check(text: str) -> bool:
    """Whether the unit reports how a check came out (tests, a build), and says nothing besides."""
    opening = _opening_re().match(text)
    if opening is not None:
        return _statement_after_re().match(text, opening.end()) is None
    return _verdict_re().search(text) is not None
