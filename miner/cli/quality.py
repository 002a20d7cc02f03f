"""`miner eval|train|rules`: measuring and tuning extraction, thin commands over `evaluation` and `training`.

`register(main)` adds them to the `miner` group.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import click

from .common import ReadableFile, counted, load_config, project_dir
from .group import Group

# --- evaluation ----------------------------------------------------------------------------


def _shared_data() -> Path | None:
    """The shared data folder beside a source checkout (../shared/data), when there is one."""
    here = Path(__file__).resolve().parents[3] / "shared" / "data"
    return here if here.is_dir() else None


@contextmanager
def _gold_checked():
    """A gold file not laid out as GUIDELINES.md says is one line naming the file, the line and what is wrong."""
    from ..evaluation.transcripts import GoldError

    try:
        yield
    except GoldError as exc:
        raise click.ClickException(str(exc)) from None


@click.command(name="eval")
@click.option("--gold", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Gold folder (with extraction/, restore/, units/, multi/).")
@click.option("--transcripts", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of <owner>__<repo>/<name>.jsonl transcripts: score extraction and restore.")
@click.option("--multi", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of whole project folders: score cross-session recall through the real hook.")
@click.option("--cv", "data", type=click.Path(file_okay=False, path_type=Path), is_flag=False, flag_value="",
              default=None, help="Leave one project out: train without each dev transcript and project, score it. "
                                 "DATA is the shared data folder (default: ../shared/data beside the checkout).")
@click.option("--prompt", is_flag=True,
              help="With --multi or --cv: also ask each question as the new session's first prompt (the "
                   "UserPromptSubmit hook), next to plain BM25 over all earlier prose.")
@click.option("--rules-only", is_flag=True, help="With --cv: score the rules alone (no classifier), for comparison.")
@click.option("--labels", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="With --cv: the folder of label references (default: the ones shipped with the tool).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--only", default="", help="Only sources (or, with --cv, groups) whose name contains this.")
def eval_(gold: Path | None, transcripts: Path | None, multi: Path | None, data: Path | None, prompt: bool,
          rules_only: bool, labels: Path | None, as_json: bool, only: str) -> None:
    """Score extraction, restore and cross-session recall against gold labels.

    With --cv, every figure is cross-validated: each dev transcript and project is scored with a classifier
    trained, and tuned, without it.
    """
    config = load_config()
    if data is not None:
        from ..evaluation.transcripts import GoldError
        from ..training.cv import cross_validate, format_cv
        from ..training.dataset import DataError, NoDataError

        folder = data if str(data) not in ("", ".") else _shared_data()
        if folder is None:
            raise click.UsageError("no shared data folder beside this checkout; give it: --cv DIR")
        try:
            report = cross_validate(folder, config, only=only, use_classifier=not rules_only, labels=labels,
                                    prompt=prompt, progress=lambda message: click.echo(message, err=True))
        except (DataError, GoldError) as exc:
            hint = "; give the shared data folder: --cv DIR" if isinstance(exc, NoDataError) else ""
            raise click.ClickException(f"{exc}{hint}") from None
        click.echo(json.dumps(report, indent=2) if as_json else format_cv(report))
        return
    if gold is None:
        raise click.UsageError("give --gold DIR (with --transcripts and/or --multi), or --cv")
    if not transcripts and not multi:
        raise click.UsageError("give --transcripts DIR (extraction and restore) and/or --multi DIR (cross-session)")
    if transcripts:
        from ..evaluation.transcripts import evaluate, format_report

        with _gold_checked():
            report = evaluate(gold, transcripts, config, only=only)
        if not any(not r.get("missing") for r in report["sources"]):
            raise click.ClickException(f"nothing to score: {gold} has labels (extraction/*.jsonl, restore/*.jsonl) "
                                       f"for {len(report['sources'])} transcript(s), none of them under "
                                       f"{transcripts}; give the folders that go together")
        click.echo(json.dumps(report, indent=2) if as_json else format_report(report))
    if multi:
        from ..evaluation.multi import evaluate_multi, format_multi

        with _gold_checked():
            report = evaluate_multi(multi, gold, config, prompt=prompt)
        if not any(not p.get("missing") for p in report["projects"]):
            raise click.ClickException(f"nothing to score: {gold} has questions (multi/*.jsonl) for "
                                       f"{len(report['projects'])} project(s), none of them a folder of {multi}; "
                                       "give the folders that go together")
        click.echo(json.dumps(report, indent=2) if as_json else format_multi(report))


@click.command()
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The shared data folder (gold/, transcripts/, multi/); default: ../shared/data beside the checkout.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the model goes (default: the package's own model folder, the one the miner loads).")
@click.option("--labels", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The folder of label references (default: the ones shipped with the tool).")
def train(data: Path | None, out: Path | None, labels: Path | None) -> None:
    """Rebuild the memory classifier from the training data (seeded: the same data gives the same model)."""
    from ..evaluation.transcripts import GoldError
    from ..extract.classify import MODEL_DIR, thresholds_text
    from ..training.dataset import DataError, NoDataError
    from ..training.train import train as do_train

    folder = data or _shared_data()
    if folder is None:
        raise click.UsageError("no shared data folder beside this checkout; give it with --data DIR")
    target = out or MODEL_DIR
    if target.exists() and not target.is_dir() or not target.exists() and not target.parent.is_dir():
        raise click.ClickException(f"cannot write the model to {target}: give --out a folder, or a new one in a "
                                   "folder that exists")  # said before the training, not after it
    try:
        result = do_train(folder, out or MODEL_DIR, progress=lambda message: click.echo(message, err=True),
                          labels=labels)
    except (DataError, GoldError) as exc:
        hint = "; give the shared data folder: --data DIR" if isinstance(exc, NoDataError) else ""
        raise click.ClickException(f"{exc}{hint}") from None
    oof = result["out_of_fold"]
    thresholds = thresholds_text(result["threshold"])
    click.echo(f"model written to {out or MODEL_DIR}: thresholds on P(none) {thresholds} "
               f"(out-of-fold P {oof['precision']} R {oof['recall']} F1 {oof['f1']}); "
               f"{sum(result['units'].values())} units of {len(result['groups'])} projects"
               + (f"; {result['mismatched_labels']} label references no longer match their unit"
                  if result["mismatched_labels"] else ""))


# --- rules ---------------------------------------------------------------------------------------


@click.group(cls=Group)
def rules() -> None:
    """Inspect and check extraction rules."""


def _rule_files(project: str | None, checking: bool = False) -> list[Path]:
    """The rule files that apply in the project; a note on stderr when its own file is left out, untrusted.
    `checking`: its own file is listed anyway (it is checked before it is trusted)."""
    from ..extract import rules as rules_mod

    root = project_dir(project)
    if project and not os.path.isdir(os.path.expanduser(project)):
        raise click.ClickException(f"no such folder: {project}; give the project's folder with --project")
    files = rules_mod.rule_files(root)
    own = rules_mod.project_rule_path(root)
    if own is not None and own not in files:
        click.echo(f"note: {own} is not applied: it is not trusted as it is now (read it, then `miner rules trust"
                   f"{' --project ' + root if project else ''}`)", err=True)
        if checking:
            files.append(own)
    return files


@rules.command(name="check")
@click.option("--project", type=str, help="Also check this project's .claude/miner-rules.yaml.")
def rules_check(project: str | None) -> None:
    """Validate every rule file (schema, regexes and each rule's examples), the secret kinds' files, and the
    glossary and synonym files."""
    from ..extract import rules as rules_mod
    from ..extract.redact import load_extra
    from ..extract.secret_rules import SecretRuleError, shipped_secret_file, user_secret_file
    from ..memory.lexicon import SynonymError, read_synonym_file
    from ..recall.glossary import default_files

    files = _rule_files(project, checking=True)
    secret_files = [p for p in (shipped_secret_file(), user_secret_file()) if p.is_file()]
    word_files = default_files()
    try:
        ruleset = rules_mod.load_rules(files)
        kinds = load_extra(secret_files)  # (each kind's examples are checked as it loads)
        groups = sum(len(read_synonym_file(f)) for f in word_files)
    except (rules_mod.RuleError, SecretRuleError, SynonymError) as exc:
        raise click.ClickException(str(exc)) from None
    problems = rules_mod.check_examples(ruleset)
    unknown = rules_mod.unknown_disables(files)
    for problem in rules_mod.replaced_ids(files) + problems + unknown:  # (a replaced rule: told, no problem)
        click.echo(problem, err=True)
    if problems or unknown:
        raise click.ClickException(", ".join(f"{count} {what}" for count, what in (
            (len(problems), "example(s) fail"), (len(unknown), "disabled id(s) name no rule")) if count))
    click.echo(f"{counted(groups, 'group')} of words in {counted(len(word_files), 'file')} (glossary and synonyms): "
               "all valid.")
    click.echo(f"{counted(len(ruleset.rules), 'rule')} in {counted(len(files), 'file')}: all valid, all examples "
               f"behave. {counted(len(kinds), 'secret kind')} in {counted(len(secret_files), 'file')}: all valid.")


@rules.command(name="trust")
@click.option("--project", type=str, help="The project whose .claude/miner-rules.yaml to trust (default: the cwd's).")
@click.option("--revoke", is_flag=True, help="Stop applying it.")
def rules_trust(project: str | None, revoke: bool) -> None:
    """Apply a project's own rules (.claude/miner-rules.yaml) as the file is now.

    A repository brings its author's rule file: it changes nothing of what is mined until you have read it and
    trusted it here. A change to the file (a pull) leaves it out again until you trust it again.
    """
    from .. import paths
    from ..extract import rules as rules_mod

    root = project_dir(project)
    path = rules_mod.project_rule_path(root)
    if path is None:
        raise click.ClickException(f"{root} has no .claude/miner-rules.yaml; nothing to trust")
    if revoke:
        rules_mod.trust(path, paths.config_dir(), revoke=True)
        click.echo(f"{path} is no longer applied")
        return
    try:
        rules, disabled = rules_mod.load_file(path)
    except rules_mod.RuleError as exc:
        raise click.ClickException(f"{exc}; nothing trusted") from None
    rules_mod.trust(path, paths.config_dir())
    click.echo(f"{path} trusted as it is now: {counted(len(rules), 'rule')}, {len(disabled)} disabled")
    for rule in rules:
        where = "  (global: recalled in every project)" if rule.scope == "global" else ""
        click.echo(f"  {rule.id:<44} {rule.category:<10} {','.join(rule.roles)}{where}")
    for rule_id in sorted(disabled):
        click.echo(f"  disables {rule_id}")


@rules.command(name="list")
@click.option("--project", type=str, help="Include this project's rules.")
def rules_list(project: str | None) -> None:
    """List the active rules."""
    from ..extract import rules as rules_mod

    files = _rule_files(project)
    try:
        ruleset = rules_mod.load_rules(files)
    except rules_mod.RuleError as exc:
        raise click.ClickException(str(exc)) from None
    for note in rules_mod.replaced_ids(files):
        click.echo(note, err=True)
    for rule in ruleset.rules:  # (the effect: keep, hint or drop; the file: shipped, or which of yours)
        whose = os.path.basename(rule.source) if rule.own else "shipped"
        click.echo(f"{rule.id:<44} {rule.category:<10} {rule.effect:<5} {rule.lang:<3} {','.join(rule.roles):<15} "
                   f"{rule.confidence:.2f} {whose}")


def _learnt_secrets() -> tuple | None:
    """The salt and digests of the secrets the memory store learnt (None without a store): what mining hides, a
    trace hides."""
    from ..memory.store import Store, StoreError

    try:
        with Store(readonly=True) as store:
            return store.secret_digests()
    except (StoreError, sqlite3.Error):
        return None


@contextmanager
def _tracing_miner():
    """A miner that traces units and stores nothing, over a throwaway store: testing the rules makes no memory
    store and reads none."""
    import tempfile

    from ..memory.store import Store
    from ..runtime.mine import Miner

    with tempfile.TemporaryDirectory(prefix="miner-rules-") as tmp, Store(Path(tmp) / "trace.db") as store:
        yield Miner(store, load_config())


@rules.command(name="test")
@click.argument("text", required=False)
@click.option("--transcript", type=ReadableFile(),
              help="Trace every unit of a transcript instead of TEXT.")
@click.option("--role", type=click.Choice(["user", "assistant"]), default="user", show_default=True,
              help="Who says TEXT.")
@click.option("--all-units", is_flag=True,
              help="With --transcript: also show units that no rule fired on and the classifier left out.")
@click.option("--project", type=str, help="Whose own (trusted) rules apply too (default: the cwd's project).")
def rules_test(text: str | None, transcript: str | None, role: str, all_units: bool, project: str | None) -> None:
    """Show which rules fire on each unit, the classifier's probabilities, and what refinement did to it."""
    from ..evaluation.tune import text_turn, trace_turns, transcript_turns
    from ..extract.classify import LABELS, threshold_role

    if bool(text) == bool(transcript):
        raise click.UsageError("give TEXT or --transcript FILE (one of them)")
    if all_units and not transcript:
        raise click.UsageError("--all-units goes with --transcript (TEXT is one unit, shown whatever fires on it)")
    if transcript and click.get_current_context().get_parameter_source("role") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--role says who says TEXT; a transcript's turns say who speaks (leave --role out)")
    turns = transcript_turns(transcript) if transcript else [text_turn(text, role)]
    _rule_files(project)  # (says when the project's own file is left out)
    with _tracing_miner() as miner:
        traced = trace_turns(miner, turns, project_dir(project), _learnt_secrets())
    for t in traced:
        if not t.rules and not t.candidate and not all_units and transcript:
            continue
        click.echo(f"[{t.unit.turn.role}] {t.unit.text}")
        click.echo(f"    langs: {','.join(t.langs) or '-'}   rules: {', '.join(t.rules) or 'none'}   -> {t.outcome}")
        if t.scores:
            probabilities = "  ".join(f"{label} {t.scores.get(label, 0.0):.2f}" for label in LABELS)
            whose = threshold_role(t.unit.turn.role)
            threshold = miner.classifier.thresholds[whose] if miner.classifier else None
            bar = f"   (a memory when P(none) < {threshold}, the {whose}'s threshold)" if threshold is not None else ""
            click.echo(f"    classifier: {probabilities}{bar}")
        if t.steps:
            click.echo(f"    refinement: {' > '.join(t.steps)}")
        if t.candidate:
            c = t.candidate
            extra = f"   subject: {c.subject}   value: {c.value}" if c.subject or c.value else ""
            click.echo(f"    {c.category}{' (unconfirmed)' if c.tentative else ''}: {c.text}{extra}")
            click.echo(f"    keywords: {', '.join(c.keywords)}")
    if not traced:
        click.echo(f"No prose to test in {transcript}: no unit of what the user or the assistant said."
                   if transcript else "No prose to test in TEXT once it is cleaned (code, commands, markup).")
    elif not any(t.rules for t in traced):
        click.echo("No rule fired." if traced[0].scores is not None
                   else "No rule fired (and no classifier is installed: `miner train` builds it).")


@rules.command(name="stats")
@click.option("--gold", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="Gold folder (with extraction/).")
@click.option("--transcripts", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="Folder of <owner>__<repo>/<name>.jsonl transcripts.")
@click.option("--show-only", default=3, show_default=True, type=click.IntRange(0, 1000),
              help="Gold units found only by a rule to print, per rule.")
def rules_stats(gold: Path, transcripts: Path, show_only: int) -> None:
    """Per rule: hits, precision against the gold, and gold units only it finds."""
    from ..evaluation.transcripts import transcript_for
    from ..evaluation.tune import rule_stats

    sources = [p.stem for p in (gold / "extraction").glob("*.jsonl")]
    if not any(transcript_for(source, transcripts) for source in sources):
        raise click.ClickException(f"nothing to score: {len(sources)} gold file(s) in {gold / 'extraction'}, none with "
                                   f"its transcript under {transcripts} (<owner>__<repo>/<name>.jsonl)")
    with _tracing_miner() as miner, _gold_checked():
        scores = rule_stats(miner, gold, transcripts)
    click.echo(f"{'rule':<44} {'hits':>5} {'correct':>7} {'precision':>9} {'only it':>7}")
    for rule_id, score in sorted(scores.items(), key=lambda kv: (-kv[1].hits, kv[0])):
        precision = f"{score.precision:.2f}" if score.precision is not None else "-"
        click.echo(f"{rule_id:<44} {score.hits:>5} {score.correct:>7} {precision:>9} {len(score.only_it):>7}")
        for text in score.only_it[:show_only]:
            click.echo(f"    only: {text[:110]}")


COMMANDS = (eval_, train, rules)


def register(group: click.Group) -> None:
    """Add the evaluation, training and rule commands to the `miner` command group."""
    for command in COMMANDS:
        group.add_command(command)
