"""Wall time and peak RSS of the hooks, each run as a fresh process the way Claude Code runs them.

    .venv/bin/python bench/hooks.py [--installed] [--runs 30] [--sizes 1000,10000,100000]

Prints p50/p95 wall time and peak RSS of `miner-hook session-start` (source
startup, ranked against the last checkpoint; and compact at the middle
size) against stores of 1k, 10k and 100k memories, of `miner-hook stop`, of `miner-hook pre-compact` at the largest size (nothing new in
the transcript, and six new lines that its miner must start for),
of `miner-hook user-prompt-submit` against 10k memories and 200k archived
units (a prompt the store answers, with the glossary compiled and without
it, and with the full-text indexes left as written instead of merged and
their common terms counted as `miner mine` leaves them; one it does not
answer, one of words common in the store (kept counts, and as written), and
a 10 MB prompt),
and of `python -c pass` from the same interpreter in the same run, for
scale. Each hook runs as `miner install` registers it (`python -I -c ENTRY
EVENT`). Targets (p50, × `python -c pass`): session-start ≤ 2.5 × at 10k and
100k memories, rendered ahead and live; stop ≤ 1.5 ×; user-prompt-submit
≤ 2.5 ×; pre-compact at 100k ≤ 1 s with nothing new, ≤ 2 s with new lines;
the 10 MB prompt ≤ 1 s.

The compacted session has 400 prompts and their replies in the archive, which
the block after a compaction draws the user's earlier words from.

SessionStart is measured twice: "rendered" when the block was rendered ahead
(by the worker after its last write, or by PreCompact) and the store has not
changed since — the usual case —, and "live" when it is built from the store
(`recall_cache` off; what a miss costs). Rows marked [-S] start the
interpreter without `site` (the package found through PYTHONPATH), to show
what a hook registration without `site` would save; "p50 - pass" compares
each row with the `python -c pass` of the same kind.

Everything lives in a temporary HOME. Stores are filled straight through
`Store.add_memory` in one transaction (synthetic text), not by mining. The
detached worker a hook starts is waited for, untimed, before the next run,
so that it does not compete for the CPU. Bytecode caching is enabled for
the hook processes (an installed tool has its .pyc files; the repo's
PYTHONDONTWRITEBYTECODE=1 would make every run compile the package).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import launcher

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

WORDS = ("database cache postgres redis deploy kubernetes frontend react build pipeline tests pytest lint docker "
         "api auth token queue worker retry index schema migration logging metrics billing invoice customer search "
         "ranking config parser exporter scheduler webhook storage bucket cdn graphql grpc protobuf").split()
CATEGORIES = ("decision", "fact", "preference", "todo")
PROJECT_SHARE = 0.8  # the rest belongs to other projects


def isolated_env(root: Path) -> dict[str, str]:
    home = root / "home"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=str(home), MINER_HOME=str(root / "miner-home"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), CLAUDE_CONFIG_DIR=str(home / ".claude"))
    return env


def with_env(env: dict[str, str]):
    """Point this process's own `miner` imports at the benchmark's folders."""
    for key in ("HOME", "MINER_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR"):
        os.environ[key] = env[key]
    from miner import paths

    paths.project_root.cache_clear()


def build_store(count: int, project: str, session_id: str) -> float:
    """`count` synthetic memories (80% in `project`, one preference in 25 global) said over sessions of 40
    memories each, every session on record, and a last-session checkpoint; returns seconds taken."""
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    rng = random.Random(count)
    started = time.perf_counter()
    with Store() as store:
        with store.atomic():
            for i in range(count):
                words = rng.sample(WORDS, 4)
                text = (f"We decided to use {words[0]} with {words[1]} for the {words[2]} {words[3]} layer "
                        f"(item {i}).")
                store.add_memory(NewMemory(
                    project=project if rng.random() < PROJECT_SHARE else f"/work/other-{i % 9}",
                    category=CATEGORIES[i % 4], text=text, confidence=round(rng.uniform(0.4, 0.95), 2),
                    rule_id="bench", role="user", session_id=f"bench-{i // 40}", transcript="/bench.jsonl",
                    entry_uuid=f"bench-{i}", ts=session_ts(i // 40),
                    scope="global" if CATEGORIES[i % 4] == "preference" and i % 25 == 3 else "project"))
            store.upsert_sessions((f"bench-{k}", project, project, "main", "/bench.jsonl", session_ts(k))
                                  for k in range(count // 40 + 1))
            store.upsert_session(session_id, project, project, "main", "/bench.jsonl", "2025-12-01T10:00:00.000Z")
        store.put_checkpoint("last-session", project, {"session_id": "last-session", "project": project,
                                                       "task": ["Add retry with backoff to the webhook worker queue."],
                                                       "decisions": [], "todos": []})
        store.put_checkpoint(session_id, project, {"session_id": session_id, "project": project,
                                                   "task": ["Move the invoice exporter to the scheduler."],
                                                   "decisions": [], "todos": []})
    return time.perf_counter() - started


def session_ts(k: int) -> str:
    """When synthetic session `k` was held: one every six hours, in order."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_700_000_000 + k * 21_600))


def installed_python(root: Path) -> str:
    """A fresh venv with the package copied into its site-packages, as a non-editable install leaves it (no
    `.pth` path finder, which makes every interpreter start slower); its python."""
    import shutil
    import subprocess
    import sysconfig

    venv = root / "installed-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    shutil.copytree(REPO / "miner", Path(purelib) / "miner", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", Path(purelib) / "miner" / "default_rules")  # where the wheel puts them
    # The miner's dependencies (spaCy, PyYAML) from this interpreter's environment, as a plain path: its own
    # `.pth` files (the editable finder among them) are not run from there.
    (Path(purelib) / "miner-bench-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(python)


def build_archive(count: int, project: str) -> float:
    """`count` synthetic archived units (80% in `project`, a few in Chinese); returns seconds taken."""
    from miner.memory.store import Store
    from miner.textutil import char_bigrams

    rng = random.Random(count + 1)
    han = "数据库缓存部署测试发票客户搜索配置服务队列重试索引日志"
    started = time.perf_counter()

    def rows():
        for i in range(count):
            words = rng.sample(WORDS, 6)
            if i % 20 == 0:
                text = "".join(rng.sample(han, 8)) + f"，第{i}条。"
            else:
                text = (f"The {words[0]} {words[1]} now goes through the {words[2]} {words[3]}, and the "
                        f"{words[4]} keeps its {words[5]} (unit {i}).")
            role = "user" if i % 3 == 0 else "assistant"
            yield (project if rng.random() < PROJECT_SHARE else f"/work/other-{i % 9}", f"bench-{i // 200}",
                   "/bench.jsonl", f"archive-{i}", 0, role, f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z",
                   text, " ".join(char_bigrams(text)), round(rng.random(), 3))

    planted = [  # what a prompt asks about: a few units with words the rest of the store does not use
        "The webhook retry policy is exponential backoff with jitter, capped at five attempts.",
        "Jitter keeps the retries of many webhook consumers from arriving at the same second.",
        "We agreed with the payments team that a dead-lettered webhook is replayed by hand.",
    ]
    with Store() as store, store.atomic():
        store.archive_units(rows())
        store.archive_units([(project, "bench-planted", "/bench.jsonl", f"planted-{n}", 0, "assistant",
                                  "2025-11-30T10:00:00Z", text, "", 0.8) for n, text in enumerate(planted)])
    return time.perf_counter() - started


def build_session_archive(project: str, session_id: str, prompts: int = 400) -> None:
    """What a long session said, as the archive keeps it: `prompts` prompts of the user's (three units each) and
    the assistant's replies (six units each), which the block after a compaction draws the user's words from."""
    from miner.memory.store import Store
    from miner.textutil import char_bigrams

    rng = random.Random(prompts)

    def rows():
        for p in range(prompts):
            for role, units in (("user", 3), ("assistant", 6)):
                for u in range(units):
                    words = rng.sample(WORDS, 4)
                    text = f"Keep the {words[0]} {words[1]} away from the {words[2]} {words[3]} (prompt {p}, unit {u})."
                    yield (project, session_id, "/bench.jsonl", f"{session_id}-{role}-{p}", u, role,
                           session_ts(p), text, " ".join(char_bigrams(text)), round(rng.random(), 3))

    with Store() as store, store.atomic():
        store.archive_units(rows())


def make_transcript(project: str, session_id: str) -> Path:
    """A short transcript in Claude's folder, already mined (the Stop worker then has nothing to do)."""
    from miner import paths
    from miner.extract.transcript import head_digest
    from miner.memory.store import Store

    folder = paths.projects_dir() / paths.encode_project(project)
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{session_id}.jsonl"
    with open(transcript, "w", encoding="utf-8") as handle:
        for i in range(20):
            role = "user" if i % 2 == 0 else "assistant"
            content = f"Turn {i}: let's keep the exporter simple." if role == "user" else [
                {"type": "text", "text": f"Reply {i}: done."}]
            handle.write(json.dumps({"type": role, "uuid": f"u{i}", "sessionId": session_id, "cwd": project,
                                     "timestamp": "2025-12-01T10:00:00.000Z",
                                     "message": {"role": role, "content": content}}) + "\n")
    resolved = str(transcript.resolve())
    with Store() as store, store.atomic():
        store.set_watermark(resolved, transcript.stat().st_size, transcript.stat().st_ino,
                            head_digest(resolved, 512), project)
    return transcript


def wait_for_workers(home: Path, timeout: float = 120.0) -> None:
    from miner.worker import running_workers

    deadline = time.monotonic() + timeout
    while running_workers(home) and time.monotonic() < deadline:
        time.sleep(0.01)


class Launcher(launcher.Launcher):
    """The shared launcher, answering (wall seconds, peak RSS in KiB, stdout) and failing on an error exit."""

    def run(self, argv: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, int, bytes]:
        result = super().run(argv, env, stdin)
        if result["status"] != 0:
            raise RuntimeError(f"{argv} exited with {result['status']}")
        return result["seconds"], result["maxrss_kb"], result["stdout"].encode()


class Scenario:
    """One command measured as a fresh process; `before` (untimed) sets up each run."""

    def __init__(self, label: str, argv: list[str], stdin: bytes, env: dict[str, str], before=None, check=None):
        self.label, self.argv, self.stdin, self.env = label, argv, stdin, env
        self.before, self.check = before, check
        self.times: list[float] = []
        self.rss: list[float] = []

    def run(self, launcher: Launcher, keep: bool) -> None:
        if self.before:
            self.before()
        elapsed, peak, out = launcher.run(self.argv, self.stdin, self.env)
        if self.check:
            self.check(out)
        wait_for_workers(Path(self.env["MINER_HOME"]))  # untimed: a worker must not steal the next run's CPU
        if keep:
            self.times.append(elapsed * 1000)
            self.rss.append(peak / 1024)

    def row(self) -> tuple[float, float, float]:
        times = sorted(self.times)
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        return statistics.median(times), p95, max(self.rss)


def check_block(out: bytes) -> None:
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    if len(context.encode("utf-16-le")) // 2 >= 10_000:
        raise RuntimeError("block over 10,000 characters")


def session_start_scenarios(hook: list[str], env: dict[str, str], size: int, project: str, session_id: str,
                            sources: tuple[str, ...]) -> list[Scenario]:
    """SessionStart against one store, for each source, with the block rendered ahead and built live.

    The block is rendered ahead by the hooks' own interpreter and code (`hook[0]`): an entry records the code it
    was rendered with, so one rendered by this checkout would be refused by an installed copy whenever a file of
    the checkout is edited during the run."""
    scenarios = []
    for mode in ("rendered", "live"):
        mode_env = dict(env, XDG_CONFIG_HOME=str(Path(env["XDG_CONFIG_HOME"]) / mode))
        config_file = Path(mode_env["XDG_CONFIG_HOME"]) / "miner" / "config.json"
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(json.dumps({"recall_cache": mode == "rendered"}))
        for source in sources:
            sid = session_id if source == "compact" else "new-session"
            payload = json.dumps({"session_id": sid, "transcript_path": "", "cwd": project, "source": source,
                                  "hook_event_name": "SessionStart"}).encode()

            def render_ahead(mode_env=mode_env, source=source, sid=sid):
                # What the worker (startup) or PreCompact (compact) leaves behind after its last write.
                import subprocess

                entry = f"blockcache.session_path({sid!r})" if source == "compact" else \
                    f"blockcache.startup_path({project!r})"
                code = ("from miner.recall import blockcache\n"
                        f"blockcache.refresh({entry}, {project!r}, {source!r}, "
                        f"{sid if source == 'compact' else ''!r})")
                subprocess.run([hook[0], "-I", "-c", code], env=mode_env, check=True)

            scenarios.append(Scenario(f"session-start {source} {size // 1000}k {mode}", [*hook, "session-start"],
                                      payload, mode_env, render_ahead if mode == "rendered" else None, check_block))
    return scenarios


def pre_compact_scenarios(hook: list[str], env: dict[str, str], size: int, project: str,
                          session_id: str) -> list[Scenario]:
    """PreCompact against one store: with nothing new in the transcript, and with six new lines each run (its
    miner then has to start: the hook waits for it `precompact_timeout_s` at most)."""
    with_env(env)
    transcript = make_transcript(project, session_id)
    payload = json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": project,
                          "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}).encode()
    added = [0]

    def six_new_lines():
        with open(transcript, "a", encoding="utf-8") as handle:
            for _ in range(6):
                added[0] += 1
                handle.write(json.dumps({"type": "user", "uuid": f"new-{added[0]}", "sessionId": session_id,
                                         "cwd": project, "timestamp": "2025-12-01T11:00:00.000Z",
                                         "message": {"role": "user", "content": f"Let's also cache the invoice "
                                                                                f"totals, step {added[0]}."}})
                             + "\n")

    return [Scenario(f"pre-compact {size // 1000}k, nothing new", [*hook, "pre-compact"], payload, env),
            Scenario(f"pre-compact {size // 1000}k, 6 new lines", [*hook, "pre-compact"], payload, env,
                     six_new_lines)]


def prompt_scenarios(hook: list[str], env: dict[str, str], project: str, session_id: str,
                     archived: int) -> list[Scenario]:
    """UserPromptSubmit against 10k memories and `archived` archived units: a prompt the store answers (each run a
    session that was shown nothing yet), one it does not, and a 10 MB pasted prompt."""
    import shutil

    from miner.memory.store import Store
    from miner.recall import glossary
    from miner.recall.shown import shown_path

    with_env(env)
    took = build_store(10_000, project, session_id) + build_archive(archived, project)
    print(f"(store of 10,000 memories and {archived:,} archived units built in {took:.1f}s)", flush=True)
    # Written in one go, the indexes are made of many segments; `miner mine` merges them after a backfill and counts
    # their common terms, as here (the worker after each pass). A copy left as written shows what that saves.
    unmerged = dict(env, MINER_HOME=env["MINER_HOME"] + "-unmerged")
    shutil.copytree(env["MINER_HOME"], unmerged["MINER_HOME"])
    with Store() as store:
        segments = {index: store.index_segments(index) for index in ("memories_fts", "archive_fts")}
        started = time.perf_counter()
        store.merge_indexes(rounds=None)
        left = {index: store.index_segments(index) for index in segments}
        merged = time.perf_counter()
        store.count_common_terms()
        common = store.db.execute("SELECT COUNT(*) FROM common_terms").fetchone()[0]
    print(f"(segments {segments} merged to {left} in {merged - started:.2f}s; {common} common terms counted in "
          f"{time.perf_counter() - merged:.2f}s)", flush=True)

    def payload(prompt: str) -> bytes:
        return json.dumps({"session_id": "prompt-session", "transcript_path": "", "cwd": project,
                           "hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()

    def forget_shown(glossary_too: bool = False, home_env: dict[str, str] = env):
        """A session shown nothing yet; the glossary compiled as a miner of this home compiles it (or none)."""
        with_env(home_env)
        Path(shown_path("prompt-session")).unlink(missing_ok=True)
        if glossary_too:
            Path(glossary.cache_file()).unlink(missing_ok=True)
        else:
            glossary.refresh()

    def answered(out: bytes) -> None:
        if not out.strip():
            raise RuntimeError("the prompt hook printed nothing for a prompt the store answers")
        if len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) > 1500:
            raise RuntimeError("prompt block over 1,500 characters")

    question = "What did we settle on for jitter in the webhook retries, and who replays a dead-lettered one?"
    common = "Why does the deploy pipeline retry the webhook when the redis cache token expires in the billing worker?"
    pasted = question + " Here is the log:\n" + "2025-12-01 10:00:00 INFO worker heartbeat ok\n" * (10 * 2**20 // 44)
    return [Scenario("user-prompt-submit 10k+archive", [*hook, "user-prompt-submit"], payload(question), env,
                     forget_shown, answered),
            Scenario("user-prompt-submit 10k+archive, no glossary", [*hook, "user-prompt-submit"], payload(question),
                     env, lambda: forget_shown(glossary_too=True), answered),
            Scenario("user-prompt-submit 10k+archive, indexes as written", [*hook, "user-prompt-submit"],
                     payload(question), unmerged, lambda: forget_shown(home_env=unmerged), answered),
            Scenario("user-prompt-submit, nothing relevant", [*hook, "user-prompt-submit"],
                     payload("Say hello in French, please."), env, forget_shown),
            # Words the store holds in thousands of rows: what counting a term costs when FTS5 reads its rows
            Scenario("user-prompt-submit, common words", [*hook, "user-prompt-submit"], payload(common), env,
                     forget_shown),
            Scenario("user-prompt-submit, common words, as written", [*hook, "user-prompt-submit"], payload(common),
                     unmerged, lambda: forget_shown(home_env=unmerged)),
            Scenario("user-prompt-submit, 10 MB prompt", [*hook, "user-prompt-submit"], payload(pasted), env,
                     forget_shown, answered)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--sizes", default="1000,10000,100000", help="store sizes, comma-separated")
    parser.add_argument("--archive", type=int, default=200_000, help="archived units beside 10k memories "
                                                                    "for the prompt hook (0: leave it out)")
    parser.add_argument("--installed", action="store_true",
                        help="run the hooks and `python -c pass` from a venv the package is copied into, as a "
                             "non-editable install (what users run), instead of this interpreter")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]

    print(f"machine: {os.cpu_count()} cores, {platform.platform()}")
    launcher = Launcher()
    with tempfile.TemporaryDirectory(prefix="miner-bench-") as tmp:
        root = Path(tmp)
        python = installed_python(root) if args.installed else sys.executable
        # As `miner install` registers it: isolated, so the checkout in the working folder is not on sys.path.
        from miner.install.settings import ENTRY

        hook = [python, "-I", "-c", ENTRY]
        print(f"python: {platform.python_version()} ({python}{', installed copy' if args.installed else ''})")
        project = str(root / "work" / "shop-api")
        session_id = "0f6c2a9e-bench-4d1e-9a43-5d6f7e8a9b0c"
        scenarios = [Scenario("python -c pass", [python, "-c", "pass"], b"", isolated_env(root / "empty"))]

        env = isolated_env(root / "stop")
        with_env(env)
        transcript = make_transcript(project, session_id)
        stop_payload = json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": project,
                                   "hook_event_name": "Stop", "stop_hook_active": False}).encode()
        scenarios.append(Scenario("stop", [*hook, "stop"], stop_payload, env))
        marking_env = isolated_env(root / "stop-marking")
        with_env(marking_env)
        marking_transcript = make_transcript(project, session_id)
        from miner.runtime import locks

        held = locks.try_lock(str(marking_transcript.resolve()))  # plays a miner that is already running
        marking_payload = stop_payload.replace(json.dumps(str(transcript))[1:-1].encode(),
                                               json.dumps(str(marking_transcript))[1:-1].encode())
        scenarios.append(Scenario("stop (miner running: mark only)", [*hook, "stop"], marking_payload, marking_env))

        middle = sorted(sizes)[len(sizes) // 2]
        for size in sizes:
            env = isolated_env(root / f"store-{size}")
            with_env(env)
            took = build_store(size, project, session_id)
            print(f"(store of {size:,} memories built in {took:.1f}s)", flush=True)
            if size == middle:
                build_session_archive(project, session_id)
            sources = ("startup", "compact") if size == middle else ("startup",)
            scenarios += session_start_scenarios(hook, env, size, project, session_id, sources)
            if size == max(sizes):
                scenarios += pre_compact_scenarios(hook, env, size, project, session_id)

        if args.archive:
            scenarios += prompt_scenarios(hook, isolated_env(root / "prompt"), project, session_id, args.archive)

        # The same, started with `python -S` (no site: no .pth files, no editable-install finder), the
        # package found through PYTHONPATH instead: what a registration without `site` would save.
        import miner

        package_root = str(Path(miner.__file__).resolve().parent.parent)
        for scenario in [scenarios[0], scenarios[1]] + [s for s in scenarios if s.label.endswith("10k rendered")]:
            fast_env = dict(scenario.env, PYTHONPATH=package_root)  # (-I would ignore PYTHONPATH: not here)
            argv = [a for a in scenario.argv[1:] if a != "-I"]
            scenarios.append(Scenario(scenario.label + " [-S]", [python, "-S", *argv], scenario.stdin,
                                      fast_env, scenario.before, scenario.check))

        # Round-robin, so that the machine's load drifts over every command alike.
        started = time.monotonic()
        load = os.getloadavg()[0]
        for round_ in range(args.warmup + args.runs):
            for scenario in scenarios:
                scenario.run(launcher, keep=round_ >= args.warmup)
        locks.release(held)
    launcher.close()

    print(f"{args.runs} runs each, round-robin after {args.warmup} warm-up rounds, "
          f"{time.monotonic() - started:.0f}s; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'command (miner-hook ...)':<41} {'p50 ms':>8} {'p95 ms':>8} {'peak RSS MB':>12} {'p50 - pass':>11} "
          f"{'x pass':>7}")
    bases = {False: scenarios[0].row()[0], True: next(s.row()[0] for s in scenarios if s.label.endswith("[-S]"))}
    for scenario in scenarios:
        p50, p95, rss = scenario.row()
        fast = scenario.label.endswith("[-S]")
        extra = "" if scenario.label.startswith("python -c pass") else f"{p50 - bases[fast]:+.1f}"
        print(f"{scenario.label:<41} {p50:>8.1f} {p95:>8.1f} {rss:>12.1f} {extra:>11} {p50 / bases[fast]:>7.2f}")
    prompt = [s for s in scenarios if s.label.startswith("user-prompt-submit") and not s.label.endswith("[-S]")]
    for scenario in prompt:
        print(f"{scenario.label}: p50 {scenario.row()[0] / bases[False]:.2f} x python -c pass")
    print("targets: session-start p50 <= 2.5 x python -c pass at 10k and 100k memories, rendered ahead and live; "
          "stop p50 <= 1.5 x; pre-compact at 100k <= 1 s with nothing new, <= 2 s with new lines; user-prompt-submit p50 <= 2.5 x at 10k memories and 200k archived units; the 10 MB "
          "prompt <= 1 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
