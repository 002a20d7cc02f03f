"""Hook registration in settings.json and the plugin form (real files under tmp_path)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from miner.install import settings as st

REPO = Path(__file__).resolve().parent.parent
LAUNCH = REPO / "hooks" / "launch.sh"
PY_A = "/opt/miner-a/venv/bin/python"
PY_B = "/opt/miner b/venv/bin/python"  # a space: must come out shell-quoted


def dump(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


@pytest.fixture
def home(isolated_home, monkeypatch):
    """The isolated HOME from conftest, without CLAUDE_CONFIG_DIR (so ~/.claude is used)."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return isolated_home


@pytest.fixture
def user_settings(home) -> Path:
    return home / ".claude" / "settings.json"


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


def leftovers(path: Path) -> list[Path]:
    return [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


RICH = {
    "model": "opus",
    "env": {"GREETING": "héllo — 你好"},
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "cat ~/ctx.md"}]}
        ],
    },
    "statusLine": {"type": "command", "command": "status.sh"},
}


# --------------------------------------------------------------------------- commands


def test_hook_command_is_absolute_quoted_and_marked():
    cmd = st.hook_command(PY_B, "session-start")
    assert cmd == ("'/opt/miner b/venv/bin/python' -I -c 'import sys; from miner.hooks import main; sys.exit(main())' "
                   "session-start")
    assert st.MARKER in cmd and st.is_ours(cmd) and st.is_current(cmd)
    assert st.command_executable(cmd) == PY_B
    plain = st.hook_command(PY_A, "stop")
    assert plain == f"{PY_A} -I -c 'import sys; from miner.hooks import main; sys.exit(main())' stop"
    assert st.is_ours(f"{PY_A} -I -m miner.hooks stop") and not st.is_current(f"{PY_A} -I -m miner.hooks stop")
    assert not st.is_ours("say done") and not st.is_current("say done")
    assert st.command_executable(plain) == PY_A


def test_hook_command_makes_a_relative_interpreter_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cmd = st.hook_command("venv/bin/python", "stop")
    assert st.command_executable(cmd) == str(tmp_path / "venv" / "bin" / "python")


def test_command_executable_tolerates_garbage():
    assert st.command_executable("") == ""
    assert st.command_executable("'unterminated") == ""


# --------------------------------------------------------------------------- planning


def test_plan_install_shape_and_purity():
    original = json.loads(json.dumps(RICH))
    new = st.plan_install(original, PY_A)
    assert original == RICH  # input untouched
    for event, arg in st.EVENTS.items():
        mine = [
            (group, handler)
            for group in new["hooks"][event]
            for handler in group["hooks"]
            if st.MARKER in handler.get("command", "")
        ]
        assert len(mine) == 1
        group, handler = mine[0]
        assert "matcher" not in group
        assert handler["type"] == "command"
        assert handler["command"] == st.hook_command(PY_A, arg)
        assert handler["timeout"] == st.TIMEOUTS[event]
        assert handler.get("async", False) is (event == "Stop")
    assert st.TIMEOUTS == {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 10, "PreCompact": 60, "SessionEnd": 5}


def test_plan_install_collapses_duplicates_and_keeps_shared_groups():
    ours = {"type": "command", "command": st.hook_command(PY_A, "stop"), "timeout": 10, "async": True}
    settings = {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "a.sh"}, dict(ours)]},
                {"hooks": [dict(ours)]},
            ]
        }
    }
    new = st.plan_install(settings, PY_B)
    stop = new["hooks"]["Stop"]
    assert len(stop) == 1  # the group emptied by dedup is gone, the shared one stays
    assert stop[0]["hooks"][0] == {"type": "command", "command": "a.sh"}
    assert stop[0]["hooks"][1]["command"] == st.hook_command(PY_B, "stop")
    assert st.registered_commands(new)["Stop"] == [st.hook_command(PY_B, "stop")]


def test_plan_uninstall_removes_only_ours_and_keeps_preexisting_empty_parts():
    settings = {
        "hooks": {
            "Notification": [],
            "Stop": [{"hooks": []}],
            "SubagentStop": [{"hooks": [{"type": "command", "command": "x -m miner.hooks stop"}]}],
        }
    }
    new = st.plan_uninstall(st.plan_install(settings, PY_A))
    # our stray SubagentStop entry is ours too: removed, list dropped
    assert new == {"hooks": {"Notification": [], "Stop": [{"hooks": []}]}}


def test_plan_rejects_hooks_that_are_not_objects():
    with pytest.raises(st.SettingsError):
        st.plan_install({"hooks": []}, PY_A)
    with pytest.raises(st.SettingsError):
        st.plan_install({"hooks": {"Stop": {"hooks": []}}}, PY_A)
    assert st.plan_uninstall({"hooks": []}) == {"hooks": []}


def test_registered_commands_lists_ours_per_event():
    new = st.plan_install(RICH, PY_A)
    got = st.registered_commands(new)
    assert got == {event: [st.hook_command(PY_A, arg)] for event, arg in st.EVENTS.items()}
    assert st.registered_commands(RICH) == {}
    assert st.registered_commands({"hooks": "junk"}) == {}


# --------------------------------------------------------------------------- install / uninstall


def test_install_into_missing_file(user_settings):
    lines = st.install("user", None, PY_A)
    assert user_settings.is_file()
    text = user_settings.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    data = json.loads(text)
    assert list(data) == ["hooks"]
    assert list(data["hooks"]) == list(st.EVENTS)
    assert set(st.registered_commands(data)) == set(st.EVENTS)
    assert backups(user_settings) == []
    assert any(line.startswith("SessionStart: add ") for line in lines)
    assert lines[-1] == f"created {user_settings}"


def test_install_preserves_other_settings_and_hooks(user_settings):
    user_settings.parent.mkdir(parents=True)
    original = dump(RICH)
    user_settings.write_text(original, encoding="utf-8")

    st.install("user", None, PY_A)
    data = json.loads(user_settings.read_text(encoding="utf-8"))
    assert list(data) == list(RICH)  # key order kept
    for key in ("model", "env", "permissions", "statusLine"):
        assert data[key] == RICH[key]
    hooks = data["hooks"]
    assert list(hooks)[:3] == ["PreToolUse", "Stop", "SessionStart"]
    assert hooks["PreToolUse"] == RICH["hooks"]["PreToolUse"]
    assert hooks["Stop"][0] == RICH["hooks"]["Stop"][0]  # theirs first, ours appended
    assert hooks["SessionStart"][0] == RICH["hooks"]["SessionStart"][0]
    assert len(hooks["Stop"]) == 2 and len(hooks["SessionStart"]) == 2
    [backup] = backups(user_settings)
    assert backup.read_text(encoding="utf-8") == original
    assert leftovers(user_settings) == []


def test_second_install_writes_nothing(user_settings):
    st.install("user", None, PY_A)
    before = user_settings.stat()
    text = user_settings.read_bytes()
    lines = st.install("user", None, PY_A)
    after = user_settings.stat()
    assert user_settings.read_bytes() == text
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert backups(user_settings) == []
    assert lines[-1].endswith("unchanged, nothing written")
    described = [line for line in lines[:-1] if not line.startswith("warning: ")]
    assert len(described) == len(st.EVENTS)
    assert all("already registered" in line for line in described)


def test_interpreter_change_updates_entry_in_place(user_settings):
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(dump(RICH), encoding="utf-8")
    st.install("user", None, PY_A)
    first = json.loads(user_settings.read_text(encoding="utf-8"))

    lines = st.install("user", None, PY_B)
    second = json.loads(user_settings.read_text(encoding="utf-8"))
    assert st.registered_commands(second) == {
        event: [st.hook_command(PY_B, arg)] for event, arg in st.EVENTS.items()
    }
    # same positions: only the command strings changed
    for event in st.EVENTS:
        assert len(second["hooks"][event]) == len(first["hooks"][event])
    assert second["hooks"]["Stop"][0] == RICH["hooks"]["Stop"][0]
    assert any(line.startswith("Stop: replace ") for line in lines)
    assert len(backups(user_settings)) >= 1


def test_reinstalling_keeps_what_the_user_gave_our_handlers(user_settings):
    """`miner install` (every ./install.sh) reset our handlers to {type, command, timeout}: a status message the user
    added was lost, and a timeout they raised went back down."""
    st.install("user", None, PY_A)
    settings = json.loads(user_settings.read_text(encoding="utf-8"))
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]
    start.update(timeout=30, statusMessage="Recalling the project's memory")
    stop = settings["hooks"]["Stop"][0]["hooks"][0]
    stop.update(timeout=1)  # lower than ours: an older default, or too short for the hook's budget
    user_settings.write_text(dump(settings), encoding="utf-8")
    st.install("user", None, PY_B)
    again = json.loads(user_settings.read_text(encoding="utf-8"))
    assert again["hooks"]["SessionStart"][0]["hooks"][0] == {
        "type": "command", "command": st.hook_command(PY_B, st.EVENTS["SessionStart"]), "timeout": 30,
        "statusMessage": "Recalling the project's memory"}
    assert again["hooks"]["Stop"][0]["hooks"][0]["timeout"] == st.TIMEOUTS["Stop"]
    assert st.plan_install(again, PY_B) == again  # and a second install changes nothing


def test_uninstall_restores_byte_identical_original(user_settings):
    user_settings.parent.mkdir(parents=True)
    original = dump(RICH)
    user_settings.write_text(original, encoding="utf-8")
    st.install("user", None, PY_A)
    st.install("user", None, PY_B)
    lines = st.uninstall("user", None)
    assert user_settings.read_text(encoding="utf-8") == original
    assert sum(line.startswith(("SessionStart: remove", "Stop: remove")) for line in lines) == 2


def test_uninstall_when_there_was_no_hooks_key(user_settings):
    user_settings.parent.mkdir(parents=True)
    plain = {"model": "sonnet", "env": {"A": "1"}}
    original = dump(plain)
    user_settings.write_text(original, encoding="utf-8")
    st.install("user", None, PY_A)
    assert "hooks" in json.loads(user_settings.read_text(encoding="utf-8"))
    st.uninstall("user", None)
    assert "hooks" not in json.loads(user_settings.read_text(encoding="utf-8"))
    assert user_settings.read_text(encoding="utf-8") == original


def test_uninstall_removes_a_settings_file_that_held_nothing_but_ours(tmp_path):
    """`install --scope project` then `uninstall --scope project` left `.claude/settings.json` holding `{}` and a
    backup of our hooks in the repository; a file that holds anything else keeps it, and a link is never removed."""
    project = tmp_path / "repo"
    project.mkdir()
    path = st.settings_path("project", str(project))
    st.install("project", str(project), "/usr/bin/python3")
    assert path.exists()
    assert st.uninstall("project", str(project), dry_run=True)[-1].startswith(f"dry run: would remove {path}")
    assert st.uninstall("project", str(project))[-1] == f"removed {path} (nothing but ours was in it)"
    assert list(path.parent.iterdir()) == []
    path.write_text('{"permissions": {"allow": ["Bash(ls)"]}}\n')
    st.install("project", str(project), "/usr/bin/python3")
    st.uninstall("project", str(project))
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(ls)"]}}
    shared = tmp_path / "shared-settings.json"
    path.unlink()
    path.symlink_to(shared)
    st.install("project", str(project), "/usr/bin/python3")
    st.uninstall("project", str(project))
    assert path.is_symlink() and json.loads(shared.read_text()) == {}
    dotfiles = tmp_path / "dotfiles" / ".claude"  # a folder above it a link: the file is the repository's
    dotfiles.mkdir(parents=True)
    linked = tmp_path / "linked-project"
    linked.mkdir()
    (linked / ".claude").symlink_to(dotfiles)
    st.install("project", str(linked), "/usr/bin/python3")
    st.uninstall("project", str(linked))
    assert json.loads((dotfiles / "settings.json").read_text()) == {}


def test_uninstall_from_missing_file_creates_nothing(user_settings):
    lines = st.uninstall("user", None)
    assert not user_settings.exists()
    assert not user_settings.parent.exists()
    assert lines[0].startswith("no Transcript Miner hooks")


def test_uninstall_keeps_foreign_handlers_in_a_shared_group(user_settings):
    user_settings.parent.mkdir(parents=True)
    ours = {"type": "command", "command": st.hook_command(PY_A, "stop"), "timeout": 10}
    theirs = {"type": "command", "command": "notify-send done"}
    user_settings.write_text(
        dump({"hooks": {"Stop": [{"hooks": [theirs, ours]}]}}), encoding="utf-8"
    )
    st.uninstall("user", None)
    assert json.loads(user_settings.read_text(encoding="utf-8")) == {
        "hooks": {"Stop": [{"hooks": [theirs]}]}
    }


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_invalid_json_is_refused_and_nothing_is_written(user_settings, action):
    user_settings.parent.mkdir(parents=True)
    broken = '{\n  "model": "opus",\n  "hooks": {\n}\n'
    user_settings.write_text(broken, encoding="utf-8")
    call = (lambda: st.install("user", None, PY_A)) if action == "install" else (
        lambda: st.uninstall("user", None)
    )
    with pytest.raises(st.SettingsError) as err:
        call()
    message = str(err.value)
    assert message.startswith(f"{user_settings} is not valid JSON (line ")
    assert " col " in message and message.endswith("fix or move it, then run again")
    assert user_settings.read_text(encoding="utf-8") == broken
    assert backups(user_settings) == []
    assert leftovers(user_settings) == []


@pytest.mark.parametrize("content", ["[1, 2]\n", '"text"\n', "null\n"])
def test_non_object_json_is_refused(user_settings, content):
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(content, encoding="utf-8")
    with pytest.raises(st.SettingsError, match="is not a JSON object"):
        st.install("user", None, PY_A)
    assert user_settings.read_text(encoding="utf-8") == content
    assert backups(user_settings) == []


@pytest.mark.parametrize(("content", "said"), [
    ('{"x": {"big": 1e400}}\n', "the number 1e400"),
    ('{"x": NaN}\n', "NaN"),
    ('{"x": -Infinity}\n', "-Infinity"),
    ('{"x": "\\ud800"}\n', "lone surrogate"),
])
def test_what_json_cannot_write_back_is_refused_before_anything_is_written(user_settings, content, said):
    """Python reads these, Claude Code's JSON parser does not: writing them back would turn a file Claude Code read
    into one it rejects (a lone surrogate cannot be written at all)."""
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(content, encoding="utf-8")
    with pytest.raises(st.SettingsError, match=said):
        st.install("user", None, PY_A, dry_run=True)  # a dry run says so too, not "would update"
    with pytest.raises(st.SettingsError, match=said) as err:
        st.install("user", None, PY_A)
    assert str(user_settings) in str(err.value) and "\n" not in str(err.value)
    assert user_settings.read_text(encoding="utf-8") == content
    assert backups(user_settings) == [] and leftovers(user_settings) == []


def test_a_folder_that_cannot_be_written_is_one_line(monkeypatch):
    """Whatever stops the write (permissions, a read-only file system) is a SettingsError naming the file, not a
    traceback; /proc/self stands for a folder no one can create files in, root included."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/proc/self")
    with pytest.raises(st.SettingsError, match=r"^cannot write /proc/self/settings\.json \(.+\); check the perm"):
        st.install("user", None, PY_A)


def test_a_settings_file_its_owner_made_read_only_is_left_as_it_is(user_settings):
    """It was replaced (its mode kept) without a word: the owner had made it read-only so that nothing changes it."""
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(dump(RICH), encoding="utf-8")
    os.chmod(user_settings, 0o444)
    with pytest.raises(st.SettingsError, match=r"is read-only \(mode 444\): nothing written; make it writable"
                                               r".*see the change with `miner install --dry-run`$"):
        st.install("user", None, PY_A)  # (the option is the command's: install.sh, which says this line, has none)
    assert user_settings.read_text(encoding="utf-8") == dump(RICH) and backups(user_settings) == []
    assert st.install("user", None, PY_A, dry_run=True)[-1].startswith("dry run: would update")


def test_hooks_not_an_object_is_refused_with_the_path(user_settings):
    user_settings.parent.mkdir(parents=True)
    content = dump({"hooks": ["nope"]})
    user_settings.write_text(content, encoding="utf-8")
    with pytest.raises(st.SettingsError, match=str(user_settings)):
        st.install("user", None, PY_A)
    assert user_settings.read_text(encoding="utf-8") == content


def test_dry_run_writes_nothing(user_settings):
    lines = st.install("user", None, PY_A, dry_run=True)
    assert not user_settings.parent.exists()
    assert lines[-1].startswith("dry run: would create")
    assert any(line.startswith("PreCompact: add ") for line in lines)

    user_settings.parent.mkdir(parents=True)
    original = dump(RICH)
    user_settings.write_text(original, encoding="utf-8")
    lines = st.install("user", None, PY_A, dry_run=True)
    assert lines[-1].startswith("dry run: would update")
    assert user_settings.read_text(encoding="utf-8") == original
    assert backups(user_settings) == []

    st.install("user", None, PY_A)
    installed = user_settings.read_text(encoding="utf-8")
    lines = st.uninstall("user", None, dry_run=True)
    assert lines[-1].startswith("dry run: would update")
    assert user_settings.read_text(encoding="utf-8") == installed
    assert len(backups(user_settings)) == 1  # the real install's only


def test_backup_keeps_the_original_mode(user_settings):
    user_settings.parent.mkdir(parents=True)
    original = dump({"model": "opus"})
    user_settings.write_text(original, encoding="utf-8")
    os.chmod(user_settings, 0o600)
    st.install("user", None, PY_A)
    [backup] = backups(user_settings)
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(user_settings.stat().st_mode) == 0o600
    assert backup.read_text(encoding="utf-8") == original
    assert backup.name.startswith("settings.json.bak-")
    stamp = backup.name.split(".bak-", 1)[1]
    assert len(stamp) == 14 and stamp.isdigit()


def test_symlinked_settings_stays_a_symlink(user_settings, tmp_path):
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(dump({"model": "opus"}), encoding="utf-8")
    user_settings.parent.mkdir(parents=True)
    user_settings.symlink_to(real)
    st.install("user", None, PY_A)
    assert user_settings.is_symlink()
    assert set(st.registered_commands(json.loads(real.read_text(encoding="utf-8")))) == set(
        st.EVENTS
    )


def test_a_file_changed_since_reading_is_not_overwritten(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(dump({"model": "opus"}), encoding="utf-8")
    stale = dump({"model": "sonnet"})
    with pytest.raises(st.SettingsError, match="changed while"):
        st.apply(path, {"model": "haiku"}, stale, dry_run=False)
    assert json.loads(path.read_text(encoding="utf-8")) == {"model": "opus"}
    assert backups(path) == []


def test_settings_paths(home, tmp_path, monkeypatch):
    assert st.settings_path("user", None) == home / ".claude" / "settings.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert st.settings_path("user", None) == tmp_path / "cfg" / "settings.json"
    project = tmp_path / "proj"
    assert st.settings_path("project", str(project)) == project / ".claude" / "settings.json"
    assert st.settings_path("local", str(project)) == project / ".claude" / "settings.local.json"
    monkeypatch.chdir(tmp_path)
    assert st.settings_path("project", None) == tmp_path / ".claude" / "settings.json"
    with pytest.raises(st.SettingsError, match="unknown scope"):
        st.settings_path("global", None)


def test_project_scope_install_leaves_user_settings_alone(user_settings, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    lines = st.install("project", str(project), PY_A)
    target = project / ".claude" / "settings.json"
    assert lines[-1] == f"created {target}"
    assert set(st.registered_commands(json.loads(target.read_text(encoding="utf-8")))) == set(
        st.EVENTS
    )
    assert not user_settings.exists()


def test_install_warns_when_the_interpreter_is_missing(user_settings, tmp_path):
    lines = st.install("user", None, str(tmp_path / "nope" / "python"))
    assert any(line.startswith("warning: ") for line in lines)
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    lines = st.install("user", None, str(fake))
    assert not any(line.startswith("warning: ") for line in lines)


# --------------------------------------------------------------------------- plugin form


def test_plugin_manifest():
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "transcript-miner"
    assert manifest["version"] and manifest["description"]


def test_plugin_hooks_match_the_settings_registration():
    config = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    hooks = config["hooks"]
    assert list(hooks) == list(st.EVENTS)
    for event, arg in st.EVENTS.items():
        [group] = hooks[event]
        assert "matcher" not in group
        [handler] = group["hooks"]
        wanted = {
            "type": "command",
            "command": f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/launch.sh" {arg}',
            "timeout": st.TIMEOUTS[event],
        }
        if event in st.ASYNC_EVENTS:
            wanted["async"] = True
        assert handler == wanted


def _run_launch(env: dict, args=("session-start",), stdin: str = '{"hook_event_name": "x"}'):
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    base.update(env)
    return subprocess.run(
        ["sh", str(LAUNCH), *args], input=stdin, capture_output=True, text=True, env=base,
        timeout=30,
    )


def test_launch_script_is_executable():
    assert os.access(LAUNCH, os.X_OK)
    assert LAUNCH.read_text(encoding="utf-8").startswith("#!/bin/sh\n")


def test_launch_fails_open_when_not_installed(tmp_path):
    result = _run_launch({"HOME": str(tmp_path)})
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "transcript-miner is not installed: run ./install.sh --no-hooks from its repository (the plugin runs the hooks)"
    ]


def _fake_python(prefix: Path) -> Path:
    python = prefix / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\necho "args: $*"\ncat\nexit 3\n')
    python.chmod(0o755)
    return python


def test_launch_execs_the_installed_python_with_args_and_stdin(tmp_path):
    miner_home = tmp_path / "mh"
    _fake_python(miner_home)
    payload = '{"session_id": "s1", "source": "startup"}'
    result = _run_launch(
        {"HOME": str(tmp_path), "MINER_HOME": str(miner_home)}, ("pre-compact",), payload
    )
    assert result.stdout == f"args: -I -c {st.ENTRY} pre-compact\n{payload}"
    assert result.stderr == ""
    assert result.returncode == 3  # exec: the hook's own exit code comes through


def test_launch_reads_a_leading_tilde_in_miner_home_as_the_home_folder(tmp_path):
    """A settings.json `env` block hands MINER_HOME over unexpanded; the miner itself reads `~` as the home."""
    _fake_python(tmp_path / "memory")
    result = _run_launch({"HOME": str(tmp_path), "MINER_HOME": "~/memory"}, ("stop",), "{}")
    assert result.stdout == f"args: -I -c {st.ENTRY} stop\n{{}}"


def test_launch_falls_back_to_the_xdg_data_dir(tmp_path):
    xdg = tmp_path / "xdg"
    _fake_python(xdg / "miner")
    result = _run_launch(
        {"HOME": str(tmp_path), "XDG_DATA_HOME": str(xdg), "MINER_HOME": str(tmp_path / "empty")},
        ("stop",),
        "{}",
    )
    assert result.stdout == f"args: -I -c {st.ENTRY} stop\n{{}}"


def test_launch_default_location_under_home(tmp_path):
    _fake_python(tmp_path / ".local" / "share" / "miner")
    result = _run_launch({"HOME": str(tmp_path)}, ("session-end",), "{}")
    assert result.stdout == f"args: -I -c {st.ENTRY} session-end\n{{}}"


@pytest.mark.parametrize("env", [{"MINER_HOME": "mdata"}, {"XDG_DATA_HOME": "data"}, {"MINER_HOME": "./mdata"}])
def test_launch_never_runs_an_interpreter_of_the_folder_it_runs_in(tmp_path, env):
    """Claude Code runs the hook in the user's project, and a repository's `.claude/settings.json` can set the hooks'
    environment: a relative MINER_HOME or XDG_DATA_HOME named the repository's own `mdata/venv/bin/python`, which ran
    on every event. A relative value is ignored (the XDG specification says so of its own)."""
    repo = tmp_path / "repo"
    _fake_python(repo / "mdata")
    _fake_python(repo / "data" / "miner")
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"), **env}
    result = subprocess.run(["sh", str(LAUNCH), "stop"], input="{}", capture_output=True, text=True, env=base,
                            cwd=repo, timeout=30)
    assert "args:" not in result.stdout and result.returncode == 0
    assert "transcript-miner is not installed" in result.stderr


@pytest.mark.parametrize("indent", [4, "\t", None])
def test_install_and_uninstall_keep_the_files_indentation_and_final_newline(user_settings, indent):
    """A settings.json indented otherwise (4 spaces, tabs, or none at all) came back with two spaces: a dotfile
    repository's diff of one added hook was as long as the file."""
    user_settings.parent.mkdir(parents=True)
    original = json.dumps(RICH, indent=indent, ensure_ascii=False)  # and no newline at its end
    user_settings.write_text(original, encoding="utf-8")
    st.install("user", None, PY_A)
    installed = user_settings.read_text(encoding="utf-8")
    assert installed == json.dumps(json.loads(installed), indent=indent, ensure_ascii=False)
    assert set(st.registered_commands(json.loads(installed))) == set(st.EVENTS)
    st.uninstall("user", None)
    assert user_settings.read_text(encoding="utf-8") == original


@pytest.mark.parametrize("bom,newline", [("\ufeff", "\n"), ("", "\r\n"), ("\ufeff", "\r\n")])
def test_install_and_uninstall_keep_the_files_byte_order_mark_and_line_endings(user_settings, bom, newline):
    """A settings.json saved with a byte order mark or Windows' line endings lost them, and its tab indentation with
    the mark: install then uninstall was no longer the file it was."""
    user_settings.parent.mkdir(parents=True)
    original = (bom + json.dumps(RICH, indent="\t", ensure_ascii=False) + "\n").replace("\n", newline)
    user_settings.write_bytes(original.encode("utf-8"))
    st.install("user", None, PY_A)
    installed = user_settings.read_bytes().decode("utf-8")
    assert installed.startswith(bom + "{" + newline + "\t") and installed.count("\n") == installed.count(newline)
    assert set(st.registered_commands(json.loads(installed.lstrip("\ufeff")))) == set(st.EVENTS)
    st.uninstall("user", None)
    assert user_settings.read_bytes().decode("utf-8") == original
