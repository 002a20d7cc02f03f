"""The assistant announcing its next step in French, Spanish, Italian, Portuguese or German.

`refine` drops status narration ("Let me check…", "I'll update…", "Checking…", "让我看看…") because it
says what the assistant is about to do, not what holds. These are the same openers in the European
languages the spaCy patterns do not read: a first person about to look into something or change it,
"je vais vérifier", "voy a revisar", "vado a controllare", "vou verificar", "lass mich", or doing it
right now, "je regarde", "reviso", "controllo", "verifico", "ich prüfe". A verb that states a choice
("je garde", "uso", "utilizzo", "ich verwende") is not among them: "I'll keep X" is a decision.
"""

from __future__ import annotations

import re
from functools import cache

from . import regex_cache

# Infinitives after "I'm going to" and first persons of the present, per language.
_FR_INF = ("regarder|vérifier|chercher|rechercher|lancer|relancer|lire|relire|ouvrir|examiner|commencer|tester|"
           "inspecter|consulter|explorer|analyser|exécuter|jeter un œil|jeter un coup d'œil|corriger|ajouter|"
           "modifier|mettre à jour|créer|écrire|implémenter|installer|compiler|essayer|voir|parcourir|nettoyer|"
           "déboguer|contrôler")
_FR_1SG = ("regarde|vérifie|cherche|recherche|lance|relance|lis|relis|ouvre|examine|commence|teste|inspecte|"
           "consulte|explore|analyse|exécute|jette un œil|parcours|contrôle|essaie|essaye")
_ES_INF = ("revisar|mirar|comprobar|buscar|leer|abrir|ejecutar|examinar|verificar|explorar|analizar|empezar|comenzar|"
           "probar|lanzar|correr|echar un vistazo|corregir|añadir|agregar|modificar|actualizar|crear|escribir|"
           "implementar|instalar|compilar|intentar|ver|inspeccionar|investigar|arreglar|limpiar|depurar")
_ES_1SG = ("reviso|miro|compruebo|busco|leo|abro|ejecuto|examino|verifico|exploro|analizo|empiezo|comienzo|pruebo|"
           "lanzo|corro|inspecciono|investigo|echo un vistazo")
_IT_INF = ("controllare|vedere|verificare|cercare|leggere|aprire|eseguire|lanciare|esaminare|analizzare|iniziare|"
           "cominciare|provare|testare|esplorare|ispezionare|correggere|aggiungere|modificare|aggiornare|creare|"
           "scrivere|implementare|installare|compilare|sistemare|guardare|dare un'occhiata|indagare|pulire")
_IT_1SG = ("controllo|verifico|cerco|leggo|apro|eseguo|lancio|esamino|analizzo|inizio|comincio|provo|esploro|"
           "ispeziono|guardo|do un'occhiata|indago")
_PT_INF = ("verificar|ver|olhar|procurar|ler|abrir|executar|rodar|examinar|analisar|começar|testar|checar|conferir|"
           "dar uma olhada|corrigir|adicionar|modificar|atualizar|criar|escrever|implementar|instalar|compilar|"
           "investigar|inspecionar|explorar|buscar|rever|revisar|limpar|tentar")
_PT_1SG = ("verifico|procuro|leio|abro|executo|rodo|examino|analiso|começo|testo|checo|confiro|olho|investigo|"
           "inspeciono|exploro|busco|reviso")
_DE_1SG = ("schaue|prüfe|überprüfe|sehe mir|suche|lese|öffne|starte|teste|untersuche|checke|analysiere|"
           "werfe einen blick")

_OPENERS = (
    rf"(?:(?:maintenant|d'abord|ensuite|bon|ok|parfait)\s*,?\s*)?"
    rf"(?:je vais (?:d'abord |maintenant |ensuite )?(?:{_FR_INF})|laisse[sz]?-moi|je (?:{_FR_1SG})|"
    rf"j'(?:examine|inspecte|essaie|essaye|ouvre|analyse|explore|exécute))",
    rf"(?:(?:ahora|primero|bien|ok|perfecto|vale|luego|después)\s*,?\s*)?"
    rf"(?:voy a (?:{_ES_INF})|d[ée]jame|(?:{_ES_1SG}))",
    rf"(?:(?:ora|adesso|prima|poi|bene|ok|perfetto)\s*,?\s*)?"
    rf"(?:vado a (?:{_IT_INF})|fammi|lasciami|(?:{_IT_1SG}))",
    rf"(?:(?:agora|primeiro|bom|ok|perfeito|beleza)\s*,?\s*)?"
    rf"(?:vou (?:{_PT_INF})|deix[ae]-me|(?:{_PT_1SG}))",
    rf"(?:(?:jetzt|zuerst|dann|gut|ok|perfekt)\s*,?\s*)?(?:lass mich|lassen sie mich|ich (?:{_DE_1SG}))",
    r"(?:jetzt|zuerst|dann|als nächstes)\s+(?:schaue|prüfe|überprüfe|suche|lese|öffne|starte|teste|untersuche) ich",
)


@cache
def _openers_re() -> re.Pattern[str]:
    return regex_cache.compile(r"^\W*(?:" + "|".join(_OPENERS) + r")\b", re.IGNORECASE)


def announces_next_step(text: str) -> bool:
    """Whether `text` opens with a European-language first person about to look into or change something."""
    return bool(_openers_re().match(text))
