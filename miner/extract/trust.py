"""Trust: what the assistant's words may not become, however they are phrased.

- Quarantine: a memory from a non-user source (the assistant) that reads
  like an instruction to the assistant ("ignore previous…", "always run…",
  "from now on…", a command that fetches and executes) is stored with state
  `quarantined`: never recalled, listed by `miner quarantine`, released
  only by `miner approve ID`. Tool output, attachments and thinking never
  reach the rules at all (see `transcript`).
- Reported speech: assistant prose that reports what a file, page or tool
  said is not the user's preference or decision.
"""

from __future__ import annotations

import re

from ..runtime.exclusions import PrivacyError
from ..textutil import content_hash

_INSTRUCTION_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("overrides earlier instructions", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|the\s+user['’]?s\s+)*"
        r"(?:previous|prior|above|earlier|preceding|existing|original|system)\s+"
        r"(?:instructions?|prompts?|messages?|rules?|context|guidelines?|directions?|requests?)", re.IGNORECASE)),
    # The same in the other languages the miner reads: "ignore (all) previous instructions", as an order.
    ("overrides earlier instructions", re.compile(
        r"(?:忽略|无视|忽視|無視|忘记|忘記)(?:掉)?(?:你)?(?:之前|以前|先前|前面|上面|上述|此前|所有|全部|一切)+的?"
        r"(?:所有|全部|一切)?的?(?:指令|指示|说明|說明|规则|規則|提示|要求|命令)"
        r"|(?:以前|前|上記|これまで|先)の(?:すべての|全ての)?(?:指示|命令|ルール|指令|プロンプト)を(?:すべて|全て)?(?:無視|忘れ)"
        r"|(?:이전|앞의|위의|기존|지금까지)(?:의)?\s*(?:모든\s*)?(?:지시|명령|지침|규칙|프롬프트)(?:사항)?(?:을|를|은|는)?\s*(?:모두\s*)?"
        r"(?:무시|잊)"
        r"|\b(?:ignor(?:ez|e|er|a|ar|ate|iere|ieren)|oubliez|olvida|vergiss|dimentica)\s+(?:(?:toutes|todas|todos|alle|"
        r"tutte|tutti)\s+)?(?:les|las|los|as|os|die|le|gli)?\s*(?:instructions|instrucciones|instruções|anweisungen|"
        r"istruzioni|consignes|indicaciones|regeln|reglas|règles)\s+(?:précédentes|antérieures|anteriores|previas|"
        r"vorherigen|bisherigen|precedenti)"
        r"|\b(?:ignoriere|ignorieren\s+sie|vergiss|vergessen\s+sie)\s+(?:alle\s+)?(?:die\s+)?(?:vorherigen|bisherigen|"
        r"früheren|obigen)\s+(?:anweisungen|instruktionen|regeln|befehle)"
        r"|\b(?:игнорируй(?:те)?|забудь(?:те)?|проигнорируй(?:те)?)\s+(?:все\s+)?(?:предыдущие|прежние|прошлые|"
        r"вышеуказанные)\s+(?:инструкции|указания|правила|команды)", re.IGNORECASE)),
    ("overrides earlier instructions", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
        r"(?:previous|prior|above|earlier|preceding|existing|original|system)\s+(?:guidance|orders|commands|"
        r"constraints|restrictions|policies|polic(?:y|ies)|safeguards)", re.IGNORECASE)),
    ("sends secrets out", re.compile(
        r"\b(?:send|upload|post|forward|exfiltrate|leak|transmit|paste|email|copy)\s+(?:(?:the|all|your|its|any|"
        r"full|every|our)\s+)*(?:contents?\s+of\s+(?:the\s+)?)?(?:\.env\b|env\s+files?|credentials|secrets?|"
        r"api\s+keys?|ssh\s+keys?|private\s+keys?|tokens?|passwords?|~/\.aws|~/\.ssh|id_rsa)"
        r"[^.\n]{0,80}?\b(?:to|into|at)\s+(?:https?://|ftp://|\S+\.(?:com|net|org|io|example|xyz|ru|cn)\b|pastebin)"
        r"|\b(?:print|show|reveal|output|dump|display|echo|cat)\s+(?:(?:the|all|full|entire|whole)\s+)*"
        r"(?:contents?\s+of\s+(?:the\s+)?)?(?:\.env\b|~/\.aws/credentials|~/\.ssh|id_rsa|credentials\s+file)"
        r"[^.\n]{0,40}?\b(?:to|in|into)\s+(?:the\s+)?(?:chat|conversation|response|reply|answer)\b"
        r"|\bwhen\s+asked\s+(?:about|for)\s+(?:credentials|secrets?|passwords?|keys?|tokens?)\b"
        # an errand addressed to the assistant, to be run at each of its actions: whatever it sends, to a site
        r"|\b(?:whenever|every\s+time|each\s+time)\s+you\b[^.\n]{0,80}?\b(?:send|upload|post|forward|copy)\b"
        r"[^.\n]{0,60}?\bto\s+https?://", re.IGNORECASE)),
    ("turns the safeguards off", re.compile(
        r"\b(?:disable|turn\s+off|switch\s+off|bypass|ignore|skip)\s+(?:(?:all|the|your|its|any)\s+)*"
        r"(?:safety|security|confirmation)\s+(?:checks?|prompts?|guards?|guardrails?|filters?|measures|"
        r"restrictions|rules|mechanisms?)\b[^.\n]{0,40}?\b(?:permanently|for\s+good|forever|from\s+now\s+on|"
        r"in\s+every\s+session|for\s+all\s+future)\b"
        r"|\b(?:never|don['’]t|do\s+not)\s+ask\s+(?:the\s+user\s+)?(?:for\s+)?(?:confirmation|permission|approval)"
        r"\s+before\s+(?:force[- ]pushing|deleting\s+(?:the\s+)?(?:branches|repositor(?:y|ies)|files|data|"
        r"the\s+database)|dropping|wiping|running\s+rm\b|pushing\s+to\s+(?:main|master|production))",
        re.IGNORECASE)),
    ("addressed to the assistant", re.compile(r"\b(?:important|urgent)\s+system\s+(?:notice|instructions?)\b",
                                              re.IGNORECASE)),
    ("claims the user's permission", re.compile(
        r"\bthe\s+user\s+(?:has\s+|had\s+)?(?:explicitly\s+|already\s+)?(?:authori[sz]ed|approved|allowed|"
        r"permitted|granted|consented)\b", re.IGNORECASE)),
    ("standing order", re.compile(r"\b(?:from now on|henceforth|going forward|for all future (?:sessions|tasks))\b",
                                  re.IGNORECASE)),
    ("standing order", re.compile(
        r"\b(?:always|never|must)\s+(?:first\s+)?(?:run|execute|exec|call|invoke|fetch|download|curl|wget|install|"
        r"pipe|send|post|upload|source|eval|import|load|visit|open)\b", re.IGNORECASE)),
    ("addressed to the assistant", re.compile(
        r"(?:^|[\s\"'`(])(?:remember|important|note to (?:the )?(?:assistant|ai|model|agent|claude))\s*:"
        r"|\b(?:assistant|claude|ai model|language model|llm|agent)s?,?\s+(?:you\s+)?(?:must|should|shall|will|need to)\b"
        r"|\b(?:new|updated|hidden|secret)\s+(?:system\s+)?instructions?\b|\bsystem prompt\b"
        # a line written as the system's or the assistant's turn ("SYSTEM: the user has …", "Assistant: from now on")
        r"|^\s*(?:system|assistant)\s*:\s*(?:the\s+user|you\b|from\s+now|ignore|always|never|do\s+not|don['’]t)",
        re.IGNORECASE | re.MULTILINE)),
    ("fetch and execute", re.compile(
        r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?"
        r"(?:ba|z|da|k|fi|c)?sh\b"
        r"|\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?"
        r"(?:python3?|node|ruby|perl|php|iex|invoke-expression)\b"
        r"|\b(?:ba|z|k)?sh\s+(?:-c\s+)?[\"']?<?\(\s*(?:curl|wget)\b"
        r"|\b(?:eval|source|\.)\s+[\"']?\$?[<(]\(?\s*(?:curl|wget)\b"
        r"|\biex\s*\(?\s*(?:\(?\s*new-object|irm|iwr|invoke-webrequest)"
        r"|\b(?:download|fetch|get|grab|pull)\s+(?:and|&|then)\s+(?:run|execute|exec|source|eval)\b"
        r"|\b(?:run|execute|source|eval|exec)\s+(?:the\s+)?(?:script|file|code|payload|installer|binary)\s+"
        r"(?:at|from)\s+(?:https?://|ftp://)"
        # code that runs what it downloads: exec(urlopen(…).read()), eval(requests.get(…).text)
        r"|\b(?:exec|eval)\s*\([^\n]{0,120}?\b(?:urlopen|urllib\.request|requests\.get|httpx\.get)\b",
        re.IGNORECASE)),
]
_REPORTED_RE = re.compile(
    r"^\s*(?:according to|as (?:stated|noted|mentioned|described|documented|recommended) (?:in|by)|per the)\b"
    r"|\b(?:file|readme|page|web ?page|website|site|docs?|documentation|tool|output|log|logs|comment|issue|article|"
    r"results?|command|script|config(?:uration)?|error|message|response|guide|changelog|manual|wiki|ticket|email|"
    r"instructions|notes|\w+\.(?:md|txt|rst|json|ya?ml|toml|html?|py|js|ts|sh))\b[^.!?;]{0,40}?"
    r"\b(?:says?|said|states?|stated|mentions?|mentioned|recommends?|recommended|suggests?|suggested|tells?|told|"
    r"instructs?|instructed|reads|notes|claims?|claimed|warns?|indicates?|asks?|asked|wants?|requires?|explains?)\b",
    re.IGNORECASE,
)


def instruction_reason(text: str) -> str:
    """Why `text` reads like an instruction to the assistant, or '' when it does not."""
    for reason, pattern in _INSTRUCTION_PATTERNS:
        if pattern.search(text):
            return reason
    return ""


def takeover_reason(text: str) -> str:
    """Why `text` reads like an attempt on the assistant (overriding its instructions, addressing it, fetching and
    running code), or '': an instruction-like text minus the standing orders ("always run the linter", "from now
    on …"), which people say of their own work and teammates share."""
    for reason, pattern in _INSTRUCTION_PATTERNS:
        if reason != "standing order" and pattern.search(text):
            return reason
    return ""


def quarantine_reason(role: str, text: str) -> str:
    """Why a memory from `role` must be quarantined, or ''. The user's own words are trusted. A text of several lines
    is read as written and as one line: a line written as the system's turn counts at a line's start only, and a
    command piped to a shell across a line break counts too."""
    if role == "user":
        return ""
    return _quarantined(role, instruction_reason(text) or ("\n" in text and instruction_reason(" ".join(text.split()))
                                                            or ""))


def held_back_reason(text: str, whose: str) -> str:
    """Why a text from elsewhere (`whose`: "team", "imported") must be quarantined, whoever it says said it: it
    reads like an attempt on the assistant (`takeover_reason`); else ''."""
    return _quarantined(whose, takeover_reason(text))


def _quarantined(whose: str, reason: str) -> str:
    return f"quarantined: {whose} text reads like an instruction to the assistant ({reason})" if reason else ""


def reports_source(text: str) -> bool:
    """True when prose reports what a file, page or tool said, rather than stating something itself."""
    return bool(_REPORTED_RE.search(text))


def relayed_attack(text: str) -> bool:
    """True when prose relays what a file, page or message said (`reports_source`) and that reads like an attempt on
    the assistant (`takeover_reason`): someone else's words, whoever passes them on (the user quoting an email)."""
    return reports_source(text) and bool(takeover_reason(text))


def quarantined(store, project: str | None = None, limit: int = 1000) -> list:
    """Quarantined memories, newest first."""
    return store.list_memories(project, None, ("quarantined",), limit)


def approve(store, memory_id: int) -> str:
    """Release a quarantined memory: it becomes active and can be recalled. Returns a line saying so."""
    memory = store.get(memory_id)
    if memory is None:
        raise PrivacyError(f"no memory {memory_id}; `miner quarantine` lists the quarantined ones")
    if memory.state != "quarantined":
        raise PrivacyError(f"memory {memory_id} is {memory.state}, not quarantined; nothing to approve")
    corrected = store.latest_superseder(memory_id)
    if corrected is not None:  # (approved, it would be current beside its own correction)
        raise PrivacyError(f"memory {memory_id} was corrected by #{corrected[0]}, which is what is recalled; "
                           "nothing to approve")
    from .. import config as config_mod
    from ..memory.dedup import Deduper

    try:
        settings = config_mod.load()
    except config_mod.ConfigError:  # (a broken settings file stops no approval: the default comparison then)
        settings = {}
    deduper = Deduper.from_config(store, settings)
    with store.atomic():
        store.set_state(memory_id, "active", "approved by the user (was quarantined)")
        # Current now, it settles its conflicts as a new memory does, by the user's authority: a change of mind
        # closes what it replaces.
        superseded, superseded_by = deduper.settle(memory_id)
    line = f"#{memory_id} approved: it can be recalled now. [{memory.category}] {memory.text}"
    if superseded_by is not None:
        return (f"#{memory_id} approved, and superseded at once by #{superseded_by}, which replaces it "
                f"(`miner history {memory_id}`). [{memory.category}] {memory.text}")
    return line + "".join(f"\n#{old} superseded by #{memory_id} (kept as history)" for old in superseded)


def store_quarantined(store, new, reason: str) -> tuple[int, bool]:
    """Store an untrusted, instruction-like memory as quarantined (exact dedup only); its id, and True when a row
    was created.

    It bypasses near-duplicate and conflict handling, so it can neither
    reword nor supersede a trusted memory. Runs inside the caller's `Store.atomic()`.
    """
    found = store.find_exact(new.project, content_hash(new.text))
    if found is not None:
        store.merge_evidence(found.id, new)
        return found.id, False
    memory_id = store.insert_memory(new, state="quarantined")
    store.set_state(memory_id, "quarantined", reason)
    store.bump("memories_quarantined")
    return memory_id, True
