"""The README's two screenshots of the web viewer, taken from synthetic sessions (not a benchmark: it lives
beside them because it drives the real tool the same way).

    .venv/bin/python bench/screenshots.py [--out docs]

Mines three made-up sessions of a made-up project into a temporary store, starts `miner ui --no-browser`,
and has Playwright's Chromium (Debian's, /usr/bin/chromium) save the memories page in a wide window and the
startup block ("Told at start") in a narrow one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from builders import Session  # noqa: E402  (tests/builders.py: transcripts in Claude Code's shape)
from ui import start, stop  # noqa: E402  (bench/ui.py)
from ui_support import CHROMIUM_ARGS, environment, transcript_path  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def sessions(env: dict[str, str], project: Path) -> None:
    one = Session(transcript_path(env, project, "one"), str(project), start="2026-11-24T09:00:00")
    one.user("We decided to use pnpm workspaces for the monorepo.")
    one.assistant("Done. The web app now builds with `pnpm -r build` and the lockfile is pnpm-lock.yaml.")
    one.user("I prefer small commits with messages in the imperative mood.")
    one.assistant("The API server listens on port 8080 and reads its settings from config/api.toml.")
    one.user("TODO: add rate limiting to the public endpoints before the launch.")
    two = Session(transcript_path(env, project, "two"), str(project), start="2026-11-26T14:00:00")
    two.user("Let's go with Postgres 16 for the main database, not MySQL.")
    two.assistant("The migrations live in db/migrations and run with `pnpm db:migrate`.")
    two.user("Never touch the generated client in src/gen; regenerate it with `pnpm gen` instead.")
    two.assistant("Problem: the CI cache missed on every run. Cause: the cache key used the branch name.")
    three = Session(transcript_path(env, project, "three"), str(project), start="2026-11-30T10:00:00")
    three.user("We decided to deploy the frontend on Netlify; the API stays on Fly.")
    three.assistant("The staging database is db-staging.internal, port 5433.")
    three.user("I'd rather keep error messages short and say what to do next.")
    three.user("TODO: write the runbook for restoring the database from a backup.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="miner-shots-") as tmp:
        env = environment(Path(tmp))
        project = Path(tmp) / "src" / "shop"
        project.mkdir(parents=True)
        sessions(env, project)
        subprocess.run([sys.executable, "-m", "miner.cli", "mine", "--all", "-q"], env=env, check=True,
                       capture_output=True)
        proc, url, _ = start(env, str(project))
        try:
            base = url.split("/?")[0]
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1100, "height": 760})
                page.goto(url)
                page.screenshot(path=str(args.out / "ui-memories.png"))
                page.set_viewport_size({"width": 390, "height": 844})
                page.goto(base + "/told")
                page.screenshot(path=str(args.out / "ui-told-narrow.png"))
                browser.close()
        finally:
            stop(proc)
    print(f"wrote {args.out / 'ui-memories.png'} and {args.out / 'ui-told-narrow.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
