"""Settings: defaults merged with `$XDG_CONFIG_HOME/miner/config.json` (standard library only).

Read once at each entry point (a hook, the worker, a command), validated and
frozen (`Settings`), and passed down, never read deep inside. An unknown key or
a value of the wrong shape is a one-line `ConfigError` that names the setting.
JSON rather than YAML or TOML because the hooks read it and must stay on the
standard library of every supported Python.
"""

from __future__ import annotations

import os

from . import jsonlite, paths

TYPE_CHECKING = False  # typing costs milliseconds, and every hook reads the settings
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

DEFAULTS: dict[str, Any] = {
    # spaCy pipeline to use when installed; the blank pipeline otherwise.
    "spacy_model": "en_core_web_sm",
    # The trained memory classifier (miner/model/) decides on every unit; false: the rules alone decide.
    "classifier": True,
    # Recall budget: a share of the context window, capped under Claude Code's 10,000-character limit.
    "context_window_tokens": 200_000,
    "budget_share": 0.02,
    "max_block_chars": 9_800,
    "chars_per_token": 4,
    # Ranking: relevance, type weight and recency, as in claude-mem's rerank.
    "weights": {"relevance": 0.6, "type": 0.2, "recency": 0.2},
    # For a question asked on demand (`miner recall QUERY`), relevance leads.
    "query_weights": {"relevance": 0.85, "type": 0.05, "recency": 0.1},
    # A question asked on demand also finds what was said around its best matches, in their own session: up to
    # this many memories before and after each (0: off), at this share of the match's relevance (halved with
    # each step away). An answer often follows the question that names the topic.
    # (Chosen leaving one LoCoMo conversation out, bench/locomo.py --cv: eight folds of ten chose 2 steps, six
    # of them with 0.5.)
    "query_neighbours": 2,
    "query_neighbour_weight": 0.5,
    # Right after a compaction or on resume, what the session said last leads.
    "resume_weights": {"relevance": 0.4, "type": 0.1, "recency": 0.5},
    "type_weights": {"decision": 1.0, "fact": 0.8, "preference": 0.9, "todo": 0.7},
    # A new session (startup, clear): what stands across the whole history, whichever session said it,
    # more than what the last session was about.
    # (Each category weighs the same there: `type_weights` did not move what a new session needed.)
    "startup_weights": {"relevance": 0.4, "type": 0.2, "recency": 0.4},
    "startup_latest": 100,              # candidates: the latest of each category,
    "startup_stretches": 16,            # candidates from every stretch of the history: its runs of sessions,
    "startup_per_stretch": 2,           # its latest few decisions and facts, and as many in the user's own words
    "startup_max_candidates": 240,      # about twice the items a block holds (a cost bound)
    "startup_entry_decay": 0.7,         # each item beyond the first two of one transcript entry (a table,
    "startup_entry_free": 2,            # a long list of options) scores × this, once per better sibling;
    "startup_novelty": 1.0,             # the budget goes by score × (share of words no better item said)^this
    "startup_context_bound": 0.6,       # text that points at its own session ("line 39", "like this"): score × this
    # Unconfirmed (hedged) memories stay out of every block unless asked for; above 0 a new session shows
    # them, marked "(unconfirmed)", at score × this.
    "startup_tentative": 0.0,
    "half_life_days": 30.0,
    # Cold storage: `miner gc` moves memories whose heat falls below this out of recall.
    "cold_threshold": 0.05,
    # Standing kinds age slower than details: in the heat that sends memories to cold storage, a category's
    # half-life lasts this many times longer.
    "category_half_life_scale": {"preference": 4.0, "decision": 1.5, "todo": 2.0, "fact": 1.0},
    "session_half_life_hours": 8,
    "pinned_boost": 1.0,
    "role_weights": {"user": 1.0, "assistant": 0.7},
    # Pack the block by value per character^this, so one long item does not displace several short ones.
    "density_exponent": 0.5,
    # Void marking: cluster by keyword Jaccard, void weak clusters until this share is void.
    "void_share": 0.3,
    "void_jaccard": 0.25,
    "void_min_candidates": 12,
    "void_crowd_factor": 2.0,
    "max_candidates": 160,
    # UserPromptSubmit: what the memories and the archive hold about the prompt, at most this many characters
    # (0: off). Small on purpose: it comes with every prompt.
    "prompt_block_chars": 1500,
    # Keep every cleaned prose unit (redacted, quality-gated) in an archive the prompt hook and search can find.
    "archive": True,
    # After a compaction or a resume, the block opens with the session's latest words (its requests and the
    # assistant's replies), in up to this share of the budget; memories fill the rest.
    "restore_recent_share": 0.15,
    # Then what the user said earlier in the session (the archive's units of their prompts), the likeliest
    # memories first, in up to this share (0: off): a rule or a deferral said once, early, outlives the
    # compaction even when no memory was drawn from it.
    "restore_user_share": 0.25,
    # A new session's block opens with the last session's latest requests (0: off).
    "last_session_requests": 2,
    # Hooks. recall_cache: the worker renders the next SessionStart block ahead of time (see blockcache).
    "recall_cache": True,
    # PreCompact writes the checkpoint at once, then waits for its background miner (which mines, writes the
    # checkpoint again and renders the block after the compaction) until this many seconds after it started.
    # A miner that loads spaCy needs a few seconds: it usually finishes during the compaction instead.
    "precompact_timeout_s": 1.0,
    "hook_log_max_bytes": 256 * 1024,
}


# Settings read when present, with no default: `dedup` (see dedup.py), checked against this shape.
OPTIONAL: dict[str, dict[str, Any]] = {"dedup": {"threshold": 0.8, "embedder": ""}}
# Settings earlier versions had, removed because turning them off did not move what recall answers
# (leave-one-project-out, both ways); two of them stay as fixed guards (see recall.rank.STANDING_SHARES). A config
# file that still sets one is not refused: the setting is ignored, and `miner doctor` says so.
REMOVED = frozenset({"startup_type_weights", "startup_session_decay", "startup_session_free",
                     "startup_restated_bonus", "startup_half_life_share", "startup_shares",
                     "startup_recall_feedback", "session_bonus", "startup_code_like", "startup_code_ratio",
                     "startup_role_weights", "startup_half_life_scale", "startup_specific_bonus"})
NULLABLE = frozenset({"spacy_model"})  # null: the blank pipeline
POSITIVE = frozenset({"half_life_days", "category_half_life_scale"})  # half-lives divide an age
# The least of each: their product divides an age, and two tiny ones (1e-200 each) made it 0.
MIN_HALF_LIFE = 0.001
# Claude Code cuts a hook's additionalContext beyond 10,000 characters (`blockcache.CONTEXT_LIMIT`).
AT_MOST_CHARS = {"prompt_block_chars": 9_999}
# Counts and sizes below 1 leave no room or no candidate (an empty block, or a division by zero).
AT_LEAST_ONE = frozenset({"context_window_tokens", "chars_per_token", "max_block_chars", "startup_max_candidates",
                          "max_candidates", "startup_stretches"})
# Shares of a budget or a score, weights and thresholds between 0 and 1.
AT_MOST_ONE = frozenset({"budget_share", "void_share", "void_jaccard", "restore_recent_share", "restore_user_share",
                         "query_neighbour_weight", "startup_entry_decay", "startup_context_bound", "cold_threshold",
                         "dedup.threshold"})
MAX_EXPONENT = 10.0  # `density_exponent`, `startup_novelty`: a power of a share; far above it, floats overflow
EXPONENTS = frozenset({"density_exponent", "startup_novelty"})
MAX_NUMBER = 1e12  # far above any sensible setting, far below what overflows


class ConfigError(ValueError):
    """The config file is broken; the message names it, the setting, and what to do."""


class Settings(dict):
    """Validated settings, read-only: built once at an entry point (`load`) and passed down.

    A `dict` (JSON-serialisable, `dict(settings, key=value)` gives a plain copy), whose in-place changes are
    refused: code that needs other values builds them with `changed` (validated like the file).
    """

    __slots__ = ()

    def _read_only(self, *args, **kwargs):
        raise TypeError("settings are read-only; build others with config.changed(settings, key=value)")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only  # type: ignore

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_freeze, (_plain(self),))


def _plain(value):
    return {k: _plain(v) for k, v in value.items()} if isinstance(value, dict) else value


def _freeze(values: dict) -> Settings:
    frozen = {k: _freeze(v) if isinstance(v, dict) else v for k, v in values.items()}
    return Settings(frozen)


def config_path() -> Path:
    from pathlib import Path

    return Path(paths.config_file())


def _shown(value: Any) -> str:
    import json  # only for an error message

    return json.dumps(value)[:40]


def _kind(default: Any) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        return "a whole number"
    if isinstance(default, float):
        return "a number"
    if isinstance(default, str):
        return "a string"
    return "a JSON object"


def _check(name: str, value: Any, default: Any, where: str) -> None:
    """Raise a one-line ConfigError when `value` does not have the shape of `default`."""
    def refuse(what: str) -> None:
        raise ConfigError(f"{where}: setting {name!r} {what}; fix it or remove it")

    if isinstance(default, dict):
        if not isinstance(value, dict):
            refuse(f"must be a JSON object, not {_shown(value)}")
        for key, item in value.items():
            if key not in default:
                refuse(f"has no key {key!r} (known: {', '.join(sorted(default))})")
            _check(f"{name}.{key}", item, default[key], where)
        return
    numeric = isinstance(default, (int, float)) and not isinstance(default, bool)
    if numeric and isinstance(value, (int, float)) and not isinstance(value, bool) and (
            value != value or abs(value) > MAX_NUMBER):  # NaN, Infinity (JSON takes both), 1e308, 10**400
        shown = f"a number of {len(str(abs(value)))} digits" if isinstance(value, int) else _shown(value)
        refuse(f"must be a number from 0 to {MAX_NUMBER:.0e}, not {shown}")
    fits = (isinstance(value, bool) if isinstance(default, bool)
            else isinstance(value, str) if isinstance(default, str)
            else isinstance(value, (int, float)) and not isinstance(value, bool)
            and (not isinstance(default, int) or float(value).is_integer()))
    if not fits:
        refuse(f"must be {_kind(default)}, not {_shown(value)}")
    if name == "dedup.embedder" and value:
        import re  # (only here: the hooks read the settings and import no `re`)

        if not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", value):
            refuse(f"must be 'module:attribute' (what to import), or empty, not {_shown(value)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < 0:
            refuse(f"must not be negative ({value})")
        if value < MIN_HALF_LIFE and name.split(".")[0] in POSITIVE:
            refuse(f"must be at least {MIN_HALF_LIFE:g}, not {_shown(value)} (it is a half-life)")
        if value > AT_MOST_CHARS.get(name, value):
            refuse(f"must be at most {AT_MOST_CHARS[name]:,}, not {_shown(value)} (Claude Code cuts what a hook adds "
                   "beyond 10,000 characters)")
        if value < 1 and name in AT_LEAST_ONE:
            refuse(f"must be 1 or more, not {_shown(value)} (less leaves the block no room)")
        if value > 1 and name in AT_MOST_ONE:
            refuse(f"must be from 0 to 1, not {_shown(value)} (it is a share)")
        if value > MAX_EXPONENT and name in EXPONENTS:
            refuse(f"must be from 0 to {MAX_EXPONENT:g}, not {_shown(value)} (it is an exponent)")


def validated(user: dict[str, Any], where: str = "settings") -> Settings:
    """DEFAULTS with `user`'s values, checked and frozen.

    A JSON object merges key by key into the default object (`{"weights": {"type": 0.3}}` changes that one
    weight); every other value replaces the default. An unknown key or a value of the wrong shape is a
    ConfigError naming the setting; a removed setting is ignored.
    """
    merged = _plain(DEFAULTS)
    for key, value in user.items():
        if key in REMOVED:
            continue
        if key in OPTIONAL:
            _check(key, value, OPTIONAL[key], where)
            merged[key] = _plain(value)
            continue
        if key not in DEFAULTS:
            from .textutil import closest

            near = closest(key, [*DEFAULTS, *OPTIONAL])
            hint = f" (did you mean {near!r}?)" if near else " (the settings are listed in the README)"
            raise ConfigError(f"{where}: unknown setting {key!r}{hint}; fix it or remove it")
        if value is None and key in NULLABLE:
            merged[key] = None
            continue
        _check(key, value, DEFAULTS[key], where)
        if isinstance(value, dict):
            merged[key].update(value)
        else:
            merged[key] = int(value) if isinstance(DEFAULTS[key], int) and not isinstance(value, bool) else value
    return _freeze(merged)


def load(path: Path | str | None = None) -> Settings:
    """The settings: defaults, overlaid with the user's config file when there is one, validated."""
    path = os.fspath(path) if path else paths.config_file()
    if not os.path.isfile(path):
        if os.path.exists(path):  # a folder where the file goes is no settings file, and no settings to ignore
            raise ConfigError(f"{path} is not a file; remove it, or put the settings file there")
        return validated({})
    try:
        user = jsonlite.loads(paths.read_small(path))
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror}); check its permissions") from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix or remove it") from None
    if not isinstance(user, dict):
        raise ConfigError(f"{path} must hold a JSON object; fix or remove it")
    return validated(user, str(path))


def changed(settings: dict[str, Any], **values: Any) -> Settings:
    """`settings` with some values replaced (an object merges key by key, as in the file), validated."""
    base = _plain(settings)
    for key, value in values.items():
        base[key] = {**base[key], **value} if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return validated(base)


def removed_keys(path: Path | str | None = None) -> list[str]:
    """Keys of the user's config file that earlier versions read and this one ignores, sorted."""
    try:
        user = jsonlite.loads(paths.read_small(os.fspath(path) if path else paths.config_file()))
    except (OSError, ValueError, RecursionError):
        return []
    return sorted(k for k in user if k in REMOVED) if isinstance(user, dict) else []


def budget_chars(config: dict[str, Any], budget_tokens: int | None = None) -> int:
    """Characters the recall block may use: the token budget, never over the hard cap."""
    tokens = budget_tokens or int(config["context_window_tokens"] * config["budget_share"])
    return max(200, min(int(tokens * config["chars_per_token"]), int(config["max_block_chars"])))
