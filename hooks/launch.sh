#!/bin/sh
# Transcript Miner plugin hook launcher (POSIX sh).
#
# Claude Code runs this from the plugin's hooks/hooks.json with one argument
# (session-start, user-prompt-submit, stop, pre-compact, session-end) and the event JSON on stdin.
# It finds the interpreter installed by ./install.sh and hands over to it with
# exec, so stdin, stdout and the exit code are the hook's own:
#   1. $MINER_HOME/venv/bin/python                              (if MINER_HOME is set; a leading ~ is $HOME)
#   2. ${XDG_DATA_HOME:-$HOME/.local/share}/miner/venv/bin/python
# A relative MINER_HOME or XDG_DATA_HOME is ignored: it would name a folder of the project Claude Code runs this in
# (and a repository's .claude/settings.json can set the hooks' environment), whose code would run as ours.
# Not installed: one line on stderr, nothing on stdout, exit 0 (fail open:
# Claude Code must never break because of us).

python=""
home=${MINER_HOME:-}
case $home in  # a settings.json "env" block hands the value over as written: ~ is the home folder, as for the miner
    "~") home=${HOME:-} ;;
    "~/"*) home=${HOME:-}/${home#"~/"} ;;
esac
data=${XDG_DATA_HOME:-}
case $data in
    /*) ;;
    *) data=${HOME:-}/.local/share ;;
esac
case $home in
    /*) ;;
    *) home="" ;;
esac
if [ -n "$home" ] && [ -x "$home/venv/bin/python" ]; then
    python="$home/venv/bin/python"
else
    candidate="$data/miner/venv/bin/python"
    case $candidate in /*) ;; *) candidate="" ;; esac  # no home folder either: nothing relative is run
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        python="$candidate"
    fi
fi

if [ -z "$python" ]; then
    echo "transcript-miner is not installed: run ./install.sh --no-hooks from its repository" \
        "(the plugin runs the hooks)" >&2
    # Drain the event JSON so Claude Code never writes into a closed pipe.
    if [ ! -t 0 ]; then
        cat >/dev/null 2>&1 || :
    fi
    exit 0
fi

# -I (isolated): the project folder Claude Code runs this in never reaches sys.path. The entry is -c code,
# not -m miner.hooks, which would import runpy first (a fifth of a Stop hook's time).
exec "$python" -I -c 'import sys; from miner.hooks import main; sys.exit(main())' "$@"
