#!/usr/bin/env bash
# Transcript Miner installer: ./install.sh --help says what it does.
#
# Install mode (default), for the current user:
#   1. check ${PYTHON:-python3} (3.10 or newer, with venv)
#   2. create or reuse the virtual environment $MINER_HOME/venv
#      (MINER_HOME defaults to ${XDG_DATA_HOME:-~/.local/share}/miner), and write MINER_HOME into it
#      ($MINER_HOME/venv/miner-home): the hooks and commands it installs use that store without the variable
#   3. pip install a copy of this repository into it, with the web viewer's and team memory's extras, and with
#      --no-hooks (the plugin's install) the MCP server's (pip's output goes to $MINER_HOME/venv/install.log; the
#      checkout itself is left untouched)
#   4. link miner and miner-hook into ~/.local/bin (and say when that is not on PATH)
#   5. try the official spaCy English model; offline, carry on with the blank pipeline
#   6. register the user-scope hooks with `miner install` (unless --no-hooks)
#   6b. redact, in an existing store, secrets that an older version kept (`miner doctor --fix`)
#   7. backfill every transcript (`miner mine --all`), then print the recall block
#      of the most recent project (the cwd of the newest transcript)
#
# Test mode (--test [PYTEST ARGS...]): Debian's chromium for the viewer's browser tests and postgresql for
# the team tests when they are missing and can be installed (MINER_TEST_BROWSER=0, MINER_TEST_POSTGRES=0:
# not), a repo-local .venv with the dev extra
# (`pip install -e '.[dev]'`), then `.venv/bin/python -m pytest -q [PYTEST ARGS...]`;
# then the same on every other interpreter of MINER_TEST_PYTHONS (default
# "python3.10 python3.11", the versions CI covers), each in .venv-X.Y.
# A run that tests nothing (pytest exit 5, or no test passed) is a failure.
#
# Both modes are idempotent: a second run reuses the venv and reinstalls the package.
# Every failure ends with one line on stderr starting with "install.sh:".

set -euo pipefail

PROG=install.sh
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
PY=${PYTHON:-python3}
MODEL=en_core_web_sm
MODEL_TIMEOUT=60

usage() {
    cat <<'EOF'
Usage: ./install.sh [--no-hooks]
       ./install.sh --test [PYTEST ARGS...]
       ./install.sh --help

Without options: install Transcript Miner for the current user.
  - a virtual environment in $MINER_HOME/venv
    (MINER_HOME defaults to $XDG_DATA_HOME/miner, i.e. ~/.local/share/miner)
  - the commands miner and miner-hook linked into ~/.local/bin
  - the local web viewer (miner ui) with its extra: Flask, Flask-WTF, waitress
  - team memory (miner team) with its extra: psycopg, PostgreSQL's driver
  - the official spaCy English model if it can be downloaded, else the
    blank pipeline with a sentencizer (works offline)
  - the hooks registered in Claude Code's user settings (miner install)
  - every transcript under ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects)
    mined, and the recall block of the most recent project printed

Options:
  --no-hooks   do everything but register the hooks (run `miner install` later),
               for the Claude Code plugin, whose hooks run instead; with the
               MCP server's package (mcp), since the plugin declares the server
  --test       make a repo-local .venv with the dev dependencies and run the
               whole test suite: .venv/bin/python -m pytest -q [PYTEST ARGS...]
               (first installs Debian's chromium for the viewer's browser
               tests and postgresql for the team tests when they are
               missing and apt-get can run as root)
               (arguments after --test go to pytest, e.g. --test -k hooks);
               fails when pytest runs no test
  -h, --help   show this help

Environment:
  PYTHON       the interpreter to build the venv with (default: python3; 3.10+)
  MINER_TEST_PYTHONS
               --test also runs the suite on these interpreters, each in its
               own .venv-X.Y (default: "python3.10 python3.11"; "" for none)
  MINER_HOME   where the venv and the memory store live
  MINER_TEST_BROWSER
               0: --test does not install chromium (the browser tests skip)
  MINER_TEST_POSTGRES
               0: --test does not install postgresql (the team tests skip,
               unless MINER_TEST_PG_URL names a server they may use)

Running it again is safe: it reuses the venv and reinstalls the package.
pip's output goes to install.log inside the venv.
EOF
}

die() {
    printf '%s: %s\n' "$PROG" "$*" >&2
    exit 1
}

warn() {
    printf '%s: warning: %s\n' "$PROG" "$*" >&2
}

say() {
    printf '%s\n' "$*"
}

# A path from the environment: a leading ~ is the home folder, a relative path is made absolute.
abs_path() {
    local p=$1
    # shellcheck disable=SC2088 # a literal ~ from a quoted variable
    case $p in
        "~") p=$HOME ;;
        "~/"*) p=$HOME/${p#"~/"} ;;
    esac
    case $p in
        /*) ;;
        *) p=$PWD/$p ;;
    esac
    printf '%s\n' "${p%/}"
}

# Same path shown with ~ for the home folder (for messages only).
pretty() {
    # shellcheck disable=SC2088 # printed, not expanded
    case $1 in
        "$HOME"/*) printf '~/%s\n' "${1#"$HOME"/}" ;;
        *) printf '%s\n' "$1" ;;
    esac
}

# ------------------------------------------------------------------------- options

MODE=install
HOOKS=1
while [ $# -gt 0 ]; do
    case $1 in
        -h | --help)
            usage
            exit 0
            ;;
        --no-hooks)
            HOOKS=0
            shift
            ;;
        --test)
            MODE="test"
            shift
            break # everything after --test goes to pytest
            ;;
        *)
            printf '%s: unknown option %s (./install.sh --help lists the options)\n' "$PROG" "$1" >&2
            exit 2
            ;;
    esac
done

# ------------------------------------------------------------------------- python and venv

check_python() {
    local version major minor
    if ! command -v "$PY" >/dev/null 2>&1; then
        die "Python not found: '$PY' (set PYTHON to a Python 3.10+ interpreter)"
    fi
    if ! version=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) \
        || ! [[ $version =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
        die "'$PY' does not run as Python (set PYTHON to a Python 3.10+ interpreter)"
    fi
    major=${BASH_REMATCH[1]}
    minor=${BASH_REMATCH[2]}
    if [ "$major" -lt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -lt 10 ]; }; then
        die "Python 3.10 or newer is needed, '$PY' is $version (set PYTHON to a newer interpreter)"
    fi
    if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        die "'$PY' ($version) cannot make virtual environments (on Debian/Ubuntu: apt-get install python3-venv)"
    fi
    PY_VERSION=$version
}

# Create the venv $1 unless a working one (Python 3.10+ with pip) is there; set LOG to its install.log.
ensure_venv() {
    local venv=$1 tmp_log have
    # (A venv whose pyvenv.cfg is gone, a --clear stopped half way, runs as the interpreter it was made from: pip
    # would install into that one.)
    if "$venv/bin/python" -c 'import sys, pip; sys.exit(sys.version_info < (3, 10) or sys.prefix == sys.base_prefix)' \
            >/dev/null 2>&1; then
        LOG=$venv/install.log
        : >"$LOG" || die "cannot write $LOG; check the permissions of $venv"
        have=$("$venv/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true)
        say "- virtual environment: reusing $(pretty "$venv") (Python $have)"
        if [ "$have" != "$PY_VERSION" ]; then
            say "  (made with another Python than $PY, $PY_VERSION:" \
                "delete $(pretty "$venv") to rebuild it with that one)"
        fi
        return
    fi
    mkdir -p "$(dirname "$venv")" || die "cannot create $(dirname "$venv"); check the permissions"
    tmp_log=$(mktemp "${TMPDIR:-/tmp}/miner-install.XXXXXX") || die "cannot create a temporary file; check TMPDIR"
    # --clear: a venv folder that is there but broken (its Python was removed) is rebuilt.
    if ! "$PY" -m venv --clear "$venv" >"$tmp_log" 2>&1; then
        die "could not create the virtual environment $venv (see $tmp_log); check $PY and the free disk space"
    fi
    LOG=$venv/install.log
    cat "$tmp_log" >"$LOG" 2>/dev/null || die "cannot write $LOG; check the permissions of $venv"
    rm -f "$tmp_log"
    say "- virtual environment: created $(pretty "$venv") (Python $PY_VERSION)"
}

pip_install() { # pip_install WHAT-FOR-THE-MESSAGE PIP-ARGS...
    local what=$1
    shift
    printf '\n$ pip install %s\n' "$*" >>"$LOG"
    if ! "$VENV/bin/python" -m pip install "$@" </dev/null >>"$LOG" 2>&1; then
        if tail -n 3 "$LOG" | grep -q "Operation cancelled by user"; then
            die "interrupted while pip installed $what: nothing is lost; run ./install.sh again"
        fi
        die "pip could not install $what (see $LOG); check your network or Python"
    fi
}

# ------------------------------------------------------------------------- --test

# How many tests passed and how many failed, from the JUnit report $1 that pytest wrote ("PASSED FAILED"; nothing
# when there is none).
junit_counts() {
    [ -f "$1" ] || return 0
    "$VENV/bin/python" - "$1" 2>/dev/null <<'PY' || true
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
count = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
failed = count["failures"] + count["errors"]
print(count["tests"] - failed - count["skipped"], failed)
PY
}

# Run the suite in the venv $1 (created with $PY): pytest's closing line is the verdict (or, when arguments like
# -qq silence it, the JUnit report); a failure dies.
run_suite() {
    local venv=$1 out rc summary name junit passed failed
    shift
    name=${venv#"$REPO"/}
    VENV=$venv
    ensure_venv "$VENV"
    pip_install "the package with its dev dependencies" -e "${REPO}[dev]"
    say "- package: installed in editable mode with the dev dependencies (pip log: $(pretty "$LOG"))"
    say "- running: $name/bin/python -m pytest -q${*:+ $*}   (Python $PY_VERSION)"
    cd "$REPO"
    out=$VENV/pytest-output.log
    junit=$VENV/pytest-junit.xml
    rm -f "$junit"
    set +e
    "$VENV/bin/python" -m pytest -q --junitxml="$junit" "$@" </dev/null 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    # pytest's closing line, e.g. "12 passed, 1 skipped in 3.40s" (colour codes removed).
    summary=$(sed -e $'s/\x1b\\[[0-9;]*m//g' "$out" | grep -E ' in [0-9.]+s( \([0-9:.]+\))?( =+)?$' | tail -n 1 || true)
    summary=$(printf '%s' "$summary" | sed -e 's/^=* *//' -e 's/ *=*$//')
    if [ "$rc" -eq 5 ]; then
        die "pytest ran no tests on Python $PY_VERSION (exit code 5: none collected or all deselected); that is not a pass"
    fi
    if [ "$rc" -ne 0 ]; then
        die "the test suite failed on Python $PY_VERSION (pytest exit code $rc${summary:+: $summary})"
    fi
    if ! [[ $summary =~ (^|[^0-9])[1-9][0-9]*\ (passed|tests?\ collected) ]]; then
        read -r passed failed <<<"$(junit_counts "$junit")"
        if [[ ${failed:-0} != 0 ]]; then
            die "the test suite failed on Python $PY_VERSION ($failed failed, by pytest's JUnit report)"
        fi
        if ! [[ $passed =~ ^[1-9][0-9]*$ ]]; then
            die "pytest exited 0 on Python $PY_VERSION but no test ran (${summary:-no summary line}); that is not a pass"
        fi
        say "- $passed passed (pytest's JUnit report: its closing line was silenced)"
    fi
}

# The interpreter a name like python3.10 stands for: the command when it runs, else a pyenv-installed one
# (pyenv's shim answers "command not found" for versions that are installed but not selected).
resolve_python() {
    local name=$1 root found
    if command -v "$name" >/dev/null 2>&1 && "$name" -c 'import sys' >/dev/null 2>&1; then
        command -v "$name"
        return
    fi
    case $name in python3.*) ;; *) return 1 ;; esac
    root=${PYENV_ROOT:-$HOME/.pyenv}
    if command -v pyenv >/dev/null 2>&1; then
        root=$(pyenv root 2>/dev/null || printf '%s' "$root")
    fi
    found=$(find "$root/versions" -maxdepth 3 -path "*/versions/${name#python}.*/bin/$name" 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$found" ] && "$found" -c 'import sys' >/dev/null 2>&1; then
        printf '%s\n' "$found"
        return
    fi
    return 1
}

# Debian packages the tests drive when this machine can install them (apt-get, as root or with sudo that asks
# no password); otherwise the tests that need them skip and say why.
#   ensure_debian_package PACKAGE PRESENT_CHECK WHAT_FOR
ensure_debian_package() {
    local package=$1 check=$2 purpose=$3 sudo=() log
    if eval "$check"; then
        return
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        say "- $package: not installed, and no apt-get here: $purpose will be skipped"
        return
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
            sudo=(sudo -n)
        else
            say "- $package: not installed, and installing it needs root: $purpose will be skipped"
            return
        fi
    fi
    log=$(mktemp "${TMPDIR:-/tmp}/miner-$package.XXXXXX") || die "cannot create a temporary file; check TMPDIR"
    say "- $package: installing Debian's $package package for $purpose (log: $log)"
    if ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" </dev/null >"$log" 2>&1 \
        || { ${sudo[@]+"${sudo[@]}"} apt-get update -q </dev/null >>"$log" 2>&1 \
            && ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" </dev/null >>"$log" 2>&1; }; then
        rm -f "$log"
    else
        warn "could not install $package (see $log): $purpose will be skipped"
    fi
}

# The viewer's browser tests drive Debian's Chromium (/usr/bin/chromium); the team tests start a throwaway
# PostgreSQL server from Debian's binaries (the tests run it as the postgres user when they run as root).
ensure_test_packages() {
    if [ "${MINER_TEST_BROWSER:-1}" != 0 ]; then
        ensure_debian_package chromium '[ -x /usr/bin/chromium ]' "the viewer's browser tests"
    fi
    if [ "${MINER_TEST_POSTGRES:-1}" != 0 ]; then
        ensure_debian_package postgresql 'command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1' \
            "the team tests (a real PostgreSQL server)"
    fi
}

# The suite runs on $PY in .venv, then on each other interpreter of MINER_TEST_PYTHONS (default: the
# versions CI covers, 3.10 and 3.11) in .venv-X.Y; one that is not installed is named, not fatal.
run_tests() {
    local tested extra missing=()
    check_python
    ensure_test_packages
    run_suite "$REPO/.venv" "$@"
    tested=" ${PY_VERSION%.*} "
    for extra in ${MINER_TEST_PYTHONS-python3.10 python3.11}; do
        if ! PY=$(resolve_python "$extra"); then
            missing+=("$extra")
            continue
        fi
        check_python
        case $tested in *" ${PY_VERSION%.*} "*) continue ;; esac
        tested="$tested${PY_VERSION%.*} "
        run_suite "$REPO/.venv-${PY_VERSION%.*}" "$@"
    done
    if [ ${#missing[@]} -gt 0 ]; then
        warn "not found, so the suite did not run on: ${missing[*]} (set MINER_TEST_PYTHONS to choose)"
    fi
    # Success adds nothing after pytest's own closing lines: they are the verdict.
}

# ------------------------------------------------------------------------- install

# The cwd of the newest transcript under $1 (the most recent project), or nothing.
most_recent_cwd() {
    "$VENV/bin/python" - "$1" <<'PYEOF'
import json, os, sys

found = []
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".jsonl"):
            path = os.path.join(folder, name)
            try:
                found.append((os.stat(path).st_mtime, path))
            except OSError:
                pass
for _, path in sorted(found, reverse=True)[:20]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle):
                if number >= 500:
                    break
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                cwd = entry.get("cwd") if isinstance(entry, dict) else None
                if isinstance(cwd, str) and cwd.strip():
                    print(cwd)
                    sys.exit(0)
    except OSError:
        continue
PYEOF
}

link_commands() {
    local bin=$HOME/.local/bin cmd target link linked=()
    mkdir -p "$bin" || die "cannot create $bin; check the permissions of your home folder"
    for cmd in miner miner-hook; do
        target=$VENV/bin/$cmd
        link=$bin/$cmd
        if [ -e "$link" ] && [ ! -L "$link" ]; then
            warn "$link exists and is not a link: left alone (the command is $target)"
            continue
        fi
        if [ -L "$link" ]; then
            case $(readlink "$link") in
                "$target" | */venv/bin/"$cmd") ;; # ours, from this install or another one's MINER_HOME
                *)
                    warn "$link links to $(readlink "$link"), another tool's: left alone (the command is $target)"
                    continue
                    ;;
            esac
        fi
        ln -sfn "$target" "$link" || die "cannot link $link to $target"
        linked+=("$cmd")
    done
    if [ ${#linked[@]} -gt 0 ]; then
        local names=${linked[*]}
        say "- commands: linked ${names// / and } into $(pretty "$bin")"
    fi
    case ":$PATH:" in
        *":$bin:"* | *":$bin/:"*) ;;
        *)
            # shellcheck disable=SC2016 # the line to add, printed as is
            say "  $(pretty "$bin") is not on your PATH; add this line to ~/.bashrc or ~/.profile:"
            # shellcheck disable=SC2016
            say '    export PATH="$HOME/.local/bin:$PATH"'
            ;;
    esac
}

has_model() {
    "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$MODEL') is None)" >/dev/null 2>&1
}

get_model() {
    local limit=()
    if has_model; then
        say "- spaCy pipeline: $MODEL (trained, already installed)"
        return
    fi
    if command -v timeout >/dev/null 2>&1; then
        limit=(timeout "$MODEL_TIMEOUT")
    fi
    printf '\n$ python -m spacy download %s\n' "$MODEL" >>"$LOG"
    if ${limit[@]+"${limit[@]}"} "$VENV/bin/python" -m spacy download "$MODEL" </dev/null >>"$LOG" 2>&1 && has_model; then
        say "- spaCy pipeline: $MODEL (trained, downloaded)"
    else
        say "- spaCy English model not available (offline?): using the blank pipeline with a sentencizer"
    fi
}

register_hooks() {
    local out
    if [ "$HOOKS" -eq 0 ]; then
        # (the substring `miner install` recognises its own entries by: miner/install/settings.py)
        if grep -qs "from miner.hooks import main" "${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json"; then
            say "- hooks: left as they are (--no-hooks): an earlier install registered them in" \
                "$(pretty "${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json"); 'miner uninstall' removes them" \
                "(the plugin's hooks would run too)"
        else
            say "- hooks: not registered (--no-hooks): the plugin's hooks run instead," \
                "or run 'miner install' to register them"
        fi
        return
    fi
    if ! out=$("$VENV/bin/miner" install </dev/null 2>&1); then
        die "could not register the hooks: $(printf '%s\n' "$out" | tail -n 1)"
    fi
    say "- hooks (miner install):"
    printf '%s\n' "$out" | sed 's/^/    /'
}

# Secrets that an older version stored and the current redaction hides: redacted in place (miner doctor --fix).
repair_store() {
    local db out watcher fixed
    db=$MINER_HOME/memory.db
    if [ ! -f "$db" ]; then
        return
    fi
    if ! out=$("$VENV/bin/miner" doctor --fix </dev/null 2>&1); then
        # doctor exits non-zero for any failed check; the repair line is what matters here, and a watcher still
        # running the code from before this update (it mines and redacts with it until it starts again).
        :
    fi
    watcher=$(printf '%s\n' "$out" | grep -A1 'FAIL  the watcher (pid' || true)
    fixed=$(printf '%s\n' "$out" | grep '^fixed:' || true)
    if [ -z "$fixed" ]; then  # (doctor's last line says why: the store busy, say, held by another process)
        die "could not check the existing memory store for secrets: $(printf '%s\n' "$out" | tail -n 1)"
    fi
    say "- existing store (miner doctor --fix): ${fixed#fixed: }"
    if [ -n "$watcher" ]; then
        say "- warning: $(printf '%s\n' "$watcher" | sed -n 's/^FAIL  //p')" \
            "(fix: $(printf '%s\n' "$watcher" | sed -n 's/^ *fix: //p'))"
    fi
}

backfill_and_recall() {
    local claude projects project
    claude=$(abs_path "${CLAUDE_CONFIG_DIR:-$HOME/.claude}")
    projects=$claude/projects
    if [ -z "$(find "$projects" -type f -name '*.jsonl' -print -quit 2>/dev/null)" ]; then
        say "- Nothing to backfill: no Claude Code transcripts under $(pretty "$projects")."
        return
    fi
    say "- backfill (miner mine --all) of the transcripts under $(pretty "$projects"):"
    if ! "$VENV/bin/miner" mine --all </dev/null; then
        die "the backfill failed (miner mine --all, above); the install itself is done, run 'miner mine --all' again"
    fi
    project=$(most_recent_cwd "$projects") || project=""
    if [ -z "$project" ]; then
        say "- recall: no transcript names its project (no cwd), so there is no recall to show"
        return
    fi
    say "- recall for the most recent project (miner recall --project $project):"
    if ! "$VENV/bin/miner" recall --project "$project" </dev/null; then
        die "miner recall failed (above); the install itself is done"
    fi
}

# A copy of the sources to build from: pip builds in the source tree (build/, *.egg-info),
# so building from the checkout itself would leave files there that could end up in a later
# wheel, and two installs at once would trip over each other.
stage_source() {
    STAGE=$(mktemp -d "${TMPDIR:-/tmp}/miner-src.XXXXXX") || die "cannot create a temporary folder; check TMPDIR"
    trap 'rm -rf "$STAGE"' EXIT
    if ! (cd "$REPO" && tar --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./dist \
        --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache --exclude=.hypothesis \
        -cf - .) | tar -C "$STAGE" -xf -; then
        die "cannot copy the sources from $REPO to $STAGE; check the free space in ${TMPDIR:-/tmp}"
    fi
}

# The data folder of the install ~/.local/bin/miner runs (the MINER_HOME an earlier run was given); nothing if none.
earlier_home() {
    local link=$HOME/.local/bin/miner target home
    [ -L "$link" ] || return 0
    target=$(readlink "$link")
    case $target in
        */venv/bin/miner) ;;
        *) return 0 ;;
    esac
    home=$(cat "${target%/bin/miner}/miner-home" 2>/dev/null) || return 0
    if [ -n "$home" ] && [ -d "$home" ]; then  # (a folder since removed: no install to upgrade there)
        printf '%s\n' "$home"
    fi
}

run_install() {
    local version earlier
    check_python
    case ${CLAUDE_CONFIG_DIR:-/} in  # (said before minutes of pip, not after: `miner install` refuses it)
        /*) ;;
        *) die "CLAUDE_CONFIG_DIR is '$CLAUDE_CONFIG_DIR', a relative path; set it to an absolute one" ;;
    esac
    if [ -z "${MINER_HOME:-}" ]; then  # run again without the MINER_HOME of the first run: that install, upgraded
        earlier=$(earlier_home)
        if [ -n "$earlier" ]; then
            MINER_HOME=$earlier
            say "- upgrading the install in $(pretty "$earlier") (~/.local/bin/miner runs it; set MINER_HOME to" \
                "install elsewhere)"
        fi
    fi
    MINER_HOME=$(abs_path "${MINER_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/miner}")
    say "Installing Transcript Miner into $(pretty "$MINER_HOME") with $PY (Python $PY_VERSION)"
    mkdir -p "$MINER_HOME" || die "cannot create $MINER_HOME; check the permissions or set MINER_HOME"
    chmod 700 "$MINER_HOME" 2>/dev/null || true # memories are private data
    VENV=$MINER_HOME/venv
    ensure_venv "$VENV"
    # The store this install is for: its hooks and commands use it when they start without MINER_HOME.
    printf '%s\n' "$MINER_HOME" >"$VENV/miner-home" || die "cannot write $VENV/miner-home; check the permissions"
    stage_source
    say "- installing the package and what it needs (spaCy and the rest: minutes the first time, on a slow network)"
    # Without hooks of its own, the install is the plugin's, which also declares the MCP server: its SDK too.
    if [ "$HOOKS" -eq 0 ]; then
        pip_install "the package" "$STAGE[ui,team,mcp]"
    else
        pip_install "the package" "$STAGE[ui,team]"
    fi
    version=$("$VENV/bin/miner" --version </dev/null 2>/dev/null | awk '{print $NF}') || version=""
    if [ -z "$version" ]; then
        die "the installed miner does not run (see $LOG); check your Python"
    fi
    say "- package: transcript-miner $version installed (pip log: $(pretty "$LOG"))"
    link_commands
    get_model
    register_hooks
    repair_store
    backfill_and_recall
    say "Done. 'miner doctor' checks the install; './install.sh' again updates it."
}

if [ "$MODE" = test ]; then
    run_tests "$@"
else
    run_install
fi
