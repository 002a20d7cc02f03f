"""Measure fresh processes: wall time and peak RSS of each, as the benchmarks report them.

Peak RSS comes from wait4(). Linux carries the pre-exec memory of a forked child into its peak,
so children are started by a small launcher process, not by the benchmark (which may hold a
100k-memory store build in memory): otherwise every figure would read as the benchmark's own size.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

LAUNCHER = r"""
import json, os, select, sys, time
for line in sys.stdin:
    job = json.loads(line)
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    started = time.perf_counter()
    pid = os.posix_spawn(job["argv"][0], job["argv"], job["env"], file_actions=[
        (os.POSIX_SPAWN_DUP2, r_in, 0), (os.POSIX_SPAWN_DUP2, w_out, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    os.close(r_in)
    os.close(w_out)
    # The payload is streamed from a file in pieces, never held whole: this process stays small, and
    # a child spawned later does not count a big payload of an earlier one in its peak.
    source = open(job["stdin_path"], "rb")
    data = source.read(65536)
    # Written in pieces while stdout is drained: a child that stops reading must not block us.
    os.set_blocking(w_in, False)
    chunks = []
    while True:
        if time.perf_counter() - started > job["timeout"]:
            os.kill(pid, 9)  # hung: reported with its exit status
        readable, writable, _ = select.select([r_out], [w_in] if data else [], [], 0.05)
        if writable:
            try:
                data = data[os.write(w_in, data):] or source.read(65536)
            except BrokenPipeError:
                data = b""
            except BlockingIOError:
                pass
            if not data and not job["leave_open"] and w_in is not None:
                os.close(w_in)
                w_in = None
        if readable:
            chunk = os.read(r_out, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(r_out)
    source.close()
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - started
    if w_in is not None:
        os.close(w_in)
    print(json.dumps({"seconds": elapsed, "maxrss_kb": usage.ru_maxrss, "status": os.waitstatus_to_exitcode(status),
                      "stdout": b"".join(chunks).decode("utf-8", "replace")}), flush=True)
"""


class Launcher:
    """A small process that spawns each measured child and reports its wall time and peak RSS."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def run(self, argv: list[str], env: dict[str, str], stdin: bytes = b"", leave_open: bool = False) -> dict:
        with tempfile.NamedTemporaryFile(prefix="miner-bench-stdin-") as payload:
            payload.write(stdin)
            payload.flush()
            job = {"argv": argv, "env": env, "stdin_path": payload.name, "leave_open": leave_open, "timeout": 300}
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
            return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
