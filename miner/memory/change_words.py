"""How a change of mind is said in Spanish, Portuguese, Italian, French, German, Turkish, Russian, Korean, Japanese,
Arabic and Hindi.

`text_features` reads English and Chinese changes with its own patterns; these
are the same three kinds for the other languages, as pattern strings by
language group (Latin-script languages, Cyrillic, Hangul, Japanese, Arabic, Devanagari):

- `REPLACED`: patterns whose `term` group is the thing replaced ("en lugar de
  MySQL", "statt Jest", "вместо Webpack", "Redux 말고", "Firebase ではなく",
  "passa da npm a pnpm", ", а не 7000", "master in main umbenannt");
- `MARKERS`: words that say a statement corrects or replaces an earlier one
  without naming what it replaced ("en realidad", "anzi", "finalement",
  "nicht mehr", "поправка", "이제부터", "やっぱり");
- `REMOVED`: directives that take a thing away ("quita Sentry", "retire
  Google Analytics", "убери Redux", "버튼은 빼", "CI から外し").

`languages` says which groups to try on a text: a group's patterns run only on
text of its script, and the Latin group's only on text holding a word of those
languages (`LATIN_WORDS`), so that English text pays for none of them.

They are written from the languages, not from any transcript; the pairs in
tests/fixtures/pairs/languages*.jsonl measure them (see the README there).
A marker alone closes nothing: `supersede` still asks for the same topic and a
swapped name or number, as it does for English.
"""

from __future__ import annotations

import re

from ..textutil import has_cjk, has_cyrillic, has_hangul

# One name, number or `code span`: what was replaced is a single thing far more often than a phrase, and a
# longer term must be found whole in the older statement.
_TERM = r"(?P<term>`[^`\n]{1,40}`|[\w][\w.#+@/-]*)"
# Up to three words, where the phrase is bounded on both sides ("no X sino Y", ", not X.").
_TERMS = r"(?P<term>`[^`\n]{1,40}`|[\w][\w.#+@/-]*(?:\s+[\w.#+@/-]+){0,2}?)"
# A Korean term: the word right before the marker (a particle written onto it is dropped by `text_features`).
_KO_TERM = r"(?<!\w)(?P<term>(?!이름)[\w.#+@/-]+?)"
# A name in Japanese text: Latin letters and digits, a katakana word or a few Han characters.
# (A number may carry a one-character unit: "30分".)
_JA_TERM = (r"(?P<term>`[^`\n]{1,40}`|[A-Za-z0-9][A-Za-z0-9_.#+@/-]*[\u3400-\u9fff]?|[\u30a0-\u30ff]{2,12}|"
            r"[\u3400-\u9fff]{1,8})")
# Articles and contracted prepositions of Spanish, Portuguese, Italian, French and German, left out of a term.
_ART = (r"(?:(?:el|la|los|las|lo|il|gli|le|les|un|una|uno|une|o|os|as|um|uma|du|des|der|die|das|den|dem|ein|eine|"
        r"einen|del|dello|della|pelo|pela|do)\s+|l['’])?")
# Where a thing is (port 3000, "sur GitHub Pages"): the preposition before a negated term.
_PREP = r"(?:(?:en|in|em|na|no|sur|auf|su|es|è|ist|est|é|el)\s+)*"

LATIN, CYRILLIC, HANGUL, JAPANESE, ARABIC, DEVANAGARI = "latin", "cyrillic", "hangul", "japanese", "arabic", "devanagari"
# The name before a Turkish "yerine", with or without its case ending ("RabbitMQ'nun yerine").
_TR_TERM = r"(?P<term>`[^`\n]{1,40}`|[\w.#+@/-]*\w)(?:['’]\w{1,4})?"

# Words that show a text is (at least partly) Spanish, Portuguese, Italian, French or German: their patterns run
# only on such a text. Function words no English text uses, and the words the patterns open with.
LATIN_WORDS = frozenset("""
    de la el los las que del por para con una es ya mejor ahora y se lo su más pero muy este esta hay hemos vamos
    quita quitar elimina eliminar borra borrar saca sacar uses usar nada sino renombramos renombrar corrijo
    os não em da uma um é com mais mas na pelo pela você isso também tira tirar apaga apagar remova remover troca
    trocar mudar il di che della gli per è più non si ho abbiamo questo anzi invece anziché togli togliere rimuovi
    rimuovere leva niente bensì le les et du une est pas sur dans ne au à pour avec je nous vous plutôt finalement
    retire retirer supprime supprimer enlève enlever der das und ist nicht mit den dem ein eine wir ich von zu auf
    für im mehr es sie auch nur noch wie wenn dass bitte jetzt dann statt anstatt anstelle stattdessen doch lieber
    kein keine keinen entferne entfernen lösche löschen sondern inzwischen umbenannt
    ve bir bu için ile yerine olarak kullan kullanalım kullanıyoruz kullanacağız geçelim geçiyoruz artık şimdi
""".split())

REPLACED = {
    LATIN: (
        # instead of X
        r"\b(?:(?:en lugar de|en vez de|em vez de|ao invés de|no lugar de|invece di|invece che|anziché|al posto di|"
        r"au lieu de|à la place de|plutôt que|statt|anstatt|anstelle von)\s+|au lieu d['’]|à la place d['’])"
        r"(?:usar\s+|utilizar\s+|usare\s+|utiliser\s+|de\s+|di\s+|d['’])?" + _ART + _TERM,
        # not X but Y
        r"\b(?:no|non|nicht|pas|não)\s+" + _PREP + _ART + _TERMS + r"\s*(?:,\s*(?:ma|mas|mais|sino|sondern)|"
        r"\s+(?:sino|sondern|bensì|mais|mas))\b",
        # …, not X.  (Spanish "no" only before a preposition or article: English ", no jargon." is no correction.)
        r"[,;]\s*(?:y\s+|e\s+|und\s+|et\s+)?(?:(?:non|nicht|pas|não)\s+|no\s+(?=(?:en|el|la|los|las|es|al)\s))"
        + _PREP + _ART + _TERMS + r"\s*(?:[,.;!)]|$)",
        # from X to Y, said with a verb of change
        r"\b(?:cambi|pas|migr|mud|troc|mov|traslad|sustitu|reemplaz|actualiz|baj|sub|reduc|redu|aument|alter)\w*\s+"
        r"(?:\S+\s+){0,4}?de\s+" + _ART + _TERMS + r"\s+(?:a|al|para|pra|à|ao)\b",
        r"\b(?:cambi|pass|migr|spost|sostitu|aggiorn|ridu|ridott|aument|port|alz|abbass)\w*\s+(?:\S+\s+){0,4}?"
        r"(?:da|dal|dallo|dalla|dai|dagli|dalle)\s+" + _ART + _TERMS + r"\s+(?:a|al|allo|alla|ai|agli|alle|in)\b",
        r"\b(?:chang|pass|migr|remplac|rédui|redui|augment|bascul|déplac|mont|baiss)\w*\s+(?:\S+\s+){0,4}?"
        r"(?:de\s+|du\s+|des\s+|d['’])" + _ART + _TERMS + r"\s+(?:à|au|aux|vers|pour|en)\b",
        r"\bvon\s+" + _ART + _TERMS + r"\s+(?:auf|zu|zum|zur|nach)\s",
        # replace X with Y
        r"\b(?:reemplaz|sustitu|substitu|sostitu|remplac|troc)\w*\s+" + _ART + _TERM
        + r"\s+(?:por|pelo|pela|con|col|par|per)\b",
        r"\bersetz\w*\s+" + _ART + _TERM + r"\s+durch\b",
        r"\b" + _ART + _TERM + r"\s+durch\s+\S+(?:\s+\S+){0,2}?\s+ersetz",
        # X renamed (to Y)
        r"\b(?:renombr|renome|rinomin|renomm)\w*\s+(?:\S+\s+)??" + _ART + _TERM
        + r"\s+(?:a|como|por|para|in|come|en|à)\s",
        r"(?P<term>`[^`\n]{1,40}`|[\w.#+@/-]*\w)\s+(?:(?:fue|ha sido|foi|è stato|è stata|a été|est)\s+)?"
        r"(?:renombrad|renomead|rinominat|renommé)",
        r"(?P<term>`[^`\n]{1,40}`|[\w.#+@/-]*\w)\s+wurde\s+(?:in\s+\S+\s+)?umbenannt",
        r"\b" + _ART + r"(?!(?:wurde|wird|haben|hat)\b)" + _TERM
        + r"\s+in\s+\S+\s+(?:umbenannt|umbenennen|umbenennt)\b",
        # no longer X
        r"\bya no\s+(?:us|utiliz|necesit|quer|corr|ejecut)\w*\s+" + _ART + _TERM,
        r"\bnão\s+(?:us|utiliz|precis|quer|rod)\w*\s+mais\s+" + _ART + _TERM,
        r"\bnon\s+(?:us|utilizz|serv|vogli|facc)\w*\s+più\s+" + _ART + _TERM,
        r"\bn(?:e\s+|['’])(?:utilis|emplo|vou|veu)\w*\s+plus\s+(?:de\s+|d['’])?" + _ART + _TERM,
        r"\b(?:kein|keine|keinen)\s+" + _TERM + r"\s+mehr\b",
        r"\b(?:nutzen|verwenden|benutzen|brauchen|nehmen)\s+(?:wir\s+|ihr\s+)?" + _ART + _TERM + r"\s+nicht\s+mehr\b",
        # Turkish: X instead of ("X yerine Y kullanalım")
        _TR_TERM + r"\s+yerine\b",
    ),
    CYRILLIC: (
        r"\bвместо\s+" + _TERM,
        r"\bне\s+(?:на\s+|в\s+)?" + _TERMS + r"\s*,\s*а\b",
        r"[,;]\s*(?:а\s+)?не\s+(?:на\s+|в\s+)?" + _TERMS + r"\s*(?:[,.;!)]|$)",
        r"\b(?:перех|перейд|переш|переезж|перее|перенес|перенос|мигр|смен|помен|замен|переключ|обнов|уменьш|увелич|"
        r"сократ|подня|сниз)\w*\s+(?:\S+\s+){0,4}?с\s+" + _TERMS + r"\s+на\b",
        r"\b(?:замени|заменить|заменим|заменил|поменяй|поменять|поменяем|поменял)\w*\s+" + _TERM + r"\s+на\b",
        r"\bпереименова\w*\s+(?:\S+\s+)??" + _TERM + r"\s+в\s",
        r"(?P<term>`[^`\n]{1,40}`|[\w.#+@/-]*\w)\s+(?:(?:был|была|было)\s+)?переименова",
        r"\b(?:больше|уже)\s+не\s+(?:использ|нуж|пиш|запуска|дела|приме)\w*\s+" + _TERM,
    ),
    HANGUL: (
        _KO_TERM + r"에서\s+[\w.#+@/-]+?(?:으로|로)\s*(?:바꾸|바꿨|바꿔|변경|전환|교체|옮기|옮겼|옮겨|올리|올렸|"
        r"올려|내리|내렸|내려|줄이|줄였|줄여|늘리|늘렸|늘려|업그레이드|마이그레이션)",
        _KO_TERM + r"(?:을|를)\s+[\w.#+@/-]+?(?:으로|로)\s*(?:바꾸|바꿨|바꿔|교체|대체|변경)",
        _KO_TERM + r"(?:을|를|은|는)?\s+\S+?(?:으로|로)\s*(?:이름을\s*)?"
        r"(?:리네임|이름\s*변경|이름을\s*바꿨|이름을\s*바꿔)",
        _KO_TERM + r"(?:은|는|을|를|이|가)?\s+(?:더 이상|더는|이제)\s+(?:안\s+)?(?:쓰|사용|쓴|써)",
        _KO_TERM + r"(?:은|는|이|가)?\s+말고\b",
        _KO_TERM + r"\s+대신",
        _KO_TERM + r"(?:이|가)\s+아니라",
    ),
    JAPANESE: (
        _JA_TERM + r"\s*から\s*\S+?\s*(?:に|へ)\s*(?:変更|変え|移行|切り替え|乗り換え|移し|上げ|下げ)",
        _JA_TERM + r"\s*を\s*\S+?\s*(?:に|へ)\s*(?:変更|変え|置き換え|差し替え|切り替え)",
        _JA_TERM + r"\s*(?:を|は)\s*(?:\S+?\s*(?:に|へ)\s*)?(?:リネーム|名前を変更|改名|名称変更)",
        _JA_TERM + r"\s*(?:の代わりに|じゃなく|ではなく)",
        _JA_TERM + r"\s*(?:は|を)\s*(?:もう\s*)?(?:使わない|やめ|止め|廃止)",
    ),
    ARABIC: (
        r"(?:بدلاً|بدلا|عوضاً|عوضا)\s+(?:من|عن)\s+(?:ال)?" + _TERM,
    ),
    DEVANAGARI: (
        _TERM + r"\s+(?:की\s+जगह|के\s+बजाय|के\s+बदले)",
    ),
}

MARKERS = {
    LATIN: r"\b(?:en lugar de|en vez de|ya no|en realidad|me equivoqué|corrijo|corrección|a partir de ahora|"
           r"de ahora en adelante|mejor (?:usa|usemos|usar|pon|poner)|em vez de|ao invés de|na verdade|me enganei|"
           r"correção|mudei de ideia|a partir de agora|daqui pra frente|desisti\w*|invece di|invece che|anziché|"
           r"al posto di|in realtà|anzi|mi sono sbagliat[oa]|correggo|correzione|d['’]ora in poi|da ora in poi|"
           r"ho cambiato idea|non \w+ più|au lieu d|à la place d|plutôt que|en fait|finalement|je me suis trompée?|"
           r"désormais|à partir de maintenant|j['’]ai changé d['’]avis|n['’]\w+ plus|ne \w+ plus|statt|anstatt|"
           r"anstelle|stattdessen|nicht mehr|doch lieber|lieber doch|ab jetzt|ab sofort|korrektur|"
           r"ich habe mich geirrt|inzwischen|umsteigen|umstellen|yerine|vazgeçtim|fikrimi değiştirdim)\b",
    CYRILLIC: r"\b(?:вместо|больше не|уже не|на самом деле|вообще-то|поправка|я ошибся|ошиблась|отныне|"
              r"с этого момента|передумал\w*)\b",
    HANGUL: r"대신|말고|더 이상|더는|사실은|정정|이제부터|앞으로는|아니라",
    JAPANESE: r"の代わりに|やっぱり|訂正|に移行|に変わ|に変え|今後は|これからは|をやめ|はやめ",
    ARABIC: r"بدلاً من|بدلا من|عوضاً عن|عوضا عن|غيرت رأيي|لم نعد",
    DEVANAGARI: r"की जगह|के बजाय|के बदले|मन बदल|अब से",
}

REMOVED = {
    LATIN: (
        r"\b(?:quita|quitar|quitad|elimina|eliminar|borra|borrar|saca|sacar|no uses|no usar|deja de usar|togli|"
        r"togliere|rimuovi|rimuovere|eliminare|leva|levare|non usare|smetti di usare|supprime|supprimer|supprimez|"
        r"retire|retirer|retirez|enlève|enlever|enlevez|n['’]utilise pas|n['’]utilisez pas|arrête d['’]utiliser|"
        r"remover|remova|tira|tirar|tire|apaga|apagar|apague|não use|não usar|pare de usar|entferne|entfernt|"
        r"lösche|löscht|streiche|verzichte auf|niente|nada de)\s+" + _ART + _TERMS,
        r"(?<!\w)" + _ART + _TERM + r"\s+(?:entfernen|löschen|weglassen|rausnehmen|streichen|fliegt raus)\b",
    ),
    CYRILLIC: (
        r"\b(?:убери|убрать|уберите|удали|удалить|удалите|не используй|не используйте|не использовать)\s+" + _TERMS,
    ),
    HANGUL: (
        _KO_TERM + r"(?:은|는|을|를|이|가)?\s+(?:빼|제거|삭제|없애|쓰지 마|사용하지 마)",
    ),
    JAPANESE: (
        _JA_TERM + r"\s*(?:は|を|から)?\s*(?:削除|消し|外し|外す|使わない|やめ)",
    ),
    ARABIC: (
        r"(?:احذف|احذفوا|أزل|أزيلوا|لا\s+تستخدم)\s+(?:ال)?" + _TERMS,
    ),
    DEVANAGARI: (
        _TERM + r"\s+(?:को\s+)?(?:हटा|हटाओ|हटाएं|हटाइए)",
    ),
}

_ARABIC_RE, _DEVANAGARI_RE = re.compile("[\u0600-\u06ff]"), re.compile("[\u0900-\u097f]")
_SCRIPTS = ((JAPANESE, has_cjk), (CYRILLIC, has_cyrillic), (HANGUL, has_hangul),
            (ARABIC, lambda raw: not raw.isascii() and _ARABIC_RE.search(raw) is not None),
            (DEVANAGARI, lambda raw: not raw.isascii() and _DEVANAGARI_RE.search(raw) is not None))


def languages(raw: str, words: list[str]) -> list[str]:
    """Which of the groups above may say something in `raw` (`words`: its lower-cased word tokens): a cheap
    look before any of their patterns runs. Japanese patterns also run on Chinese text (the same characters)."""
    found = [LATIN] if not LATIN_WORDS.isdisjoint(words) else []
    return found + [group for group, holds in _SCRIPTS if holds(raw)]
