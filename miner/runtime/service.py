"""The service that runs `miner watch` at login: a systemd user unit (Linux) or a launchd agent (macOS), printed by
`miner watch --print-service` with the install commands in its header comment."""

from __future__ import annotations

import os
import sys
from xml.sax.saxutils import escape

from .. import paths
from .watch import WatchError

SERVICE_NAME = "transcript-miner-watch"
LAUNCHD_LABEL = "dev.transcript-miner.watch"


def _environment() -> dict[str, str]:
    """The variables that decide where data and transcripts live, as set now."""
    return {name: os.environ[name] for name in ("MINER_HOME", "CLAUDE_CONFIG_DIR", "XDG_DATA_HOME",
                                                "XDG_CONFIG_HOME") if os.environ.get(name)}


def service_definition(platform: str | None = None, python: str | None = None) -> str:
    """A systemd user unit (Linux) or a launchd agent plist (macOS) that runs `miner watch`."""
    platform = platform or sys.platform
    python = python or sys.executable
    command = [python, "-I", "-m", "miner.cli", "watch"]
    env = _environment()
    if platform == "darwin":
        env_xml = "".join(f"\n      <key>{escape(k)}</key><string>{escape(v)}</string>" for k, v in env.items())
        log = escape(str(paths.logs_dir() / "watch.log"))
        args = "".join(f"\n    <string>{escape(a)}</string>" for a in command)
        return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Save as ~/Library/LaunchAgents/{LAUNCHD_LABEL}.plist, then:
     mkdir -p {log.rsplit('/', 1)[0]} && launchctl load -w ~/Library/LaunchAgents/{LAUNCHD_LABEL}.plist -->
<plist version="1.0">
<dict>
  <key>Label</key><string>{LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>{args}
  </array>
  <key>EnvironmentVariables</key>
  <dict>{env_xml}
  </dict>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>StandardErrorPath</key><string>{log}</string>
  <key>StandardOutPath</key><string>{log}</string>
</dict>
</plist>
"""
    exec_start = " ".join(_systemd_quote(a).replace("$", "$$") for a in command)  # ($ expands a variable there)
    env_lines = "".join(f"Environment={_systemd_quote(f'{k}={v}')}\n" for k, v in env.items())
    units = os.path.join(os.path.dirname(paths.config_root()), "systemd", "user")  # ($XDG_CONFIG_HOME's, if set)
    return f"""# Save as {units}/{SERVICE_NAME}.service, then:
#   systemctl --user daemon-reload && systemctl --user enable --now {SERVICE_NAME}
# Logs: journalctl --user -u {SERVICE_NAME}
[Unit]
Description=Transcript Miner watcher: mines Claude Code transcripts as they are written

[Service]
Type=simple
ExecStart={exec_start}
{env_lines}Restart=on-failure
RestartSec=5
KillSignal=SIGTERM
TimeoutStopSec=30

[Install]
WantedBy=default.target
"""


def _systemd_quote(value: str) -> str:
    """`value` as one word of a unit file: a line break would start a directive of its own (`ExecStartPre=…`), and
    `%` starts a specifier (`%h`: the home folder), so the first is refused and the second doubled."""
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise WatchError(f"{value!r} holds a line break or another control character, which a service file cannot "
                         "carry; set it to a plain path")
    value = value.replace("%", "%%")
    if value and all(c.isalnum() or c in "/._-=:+@%" for c in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
