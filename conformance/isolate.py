"""Running a function in a forked worker, so that an abort or a segfault of a target ends the
worker and not the run. What the worker reported before it died is kept."""

from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Forked:
    """How a forked call ended.

    status: "ok" (returned), "exception" (raised: `value` is the exception), "signal" (killed by
    `signum`), "exit" (called exit with `code`), "timeout".
    """

    status: str
    value: Any = None
    signum: int = 0
    code: int = 0
    stderr: str = ""
    reports: list[Any] = field(default_factory=list)

    def describe(self) -> str:
        if self.status == "signal":
            try:
                name = signal.Signals(self.signum).name
            except ValueError:
                name = str(self.signum)
            return f"killed by {name}"
        if self.status == "exit":
            return f"exited with code {self.code}"
        if self.status == "exception":
            return f"raised {self.value!r}"
        return self.status


_channel: int | None = None


def report(value: Any) -> None:
    """From inside a forked worker: send `value` to the parent now (kept even if we crash)."""
    if _channel is None:
        return
    blob = pickle.dumps(("report", value))
    os.write(_channel, struct.pack("<I", len(blob)) + blob)


def in_worker() -> bool:
    return _channel is not None


def run_forked(fn: Callable[[], Any], timeout: float = 600.0) -> Forked:
    """Call `fn()` in a forked child; return how it ended, its result and its stderr."""
    global _channel
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    err = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(rfd)
        os.dup2(err.fileno(), 2)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        if faulthandler.is_enabled():  # tracebacks of a crash go to the worker's stderr too
            faulthandler.enable(file=sys.stderr)
        _channel = wfd
        code = 0
        try:
            result: tuple[str, Any] = ("ok", fn())
        except BaseException as exc:  # noqa: BLE001 - every ending is reported to the parent
            result = ("exception", exc)
        try:
            blob = pickle.dumps(result)
        except Exception as exc:  # noqa: BLE001
            blob = pickle.dumps(("exception", RuntimeError(f"unpicklable result: {exc!r}: {result!r}")))
        try:
            os.write(wfd, struct.pack("<I", len(blob)) + blob)
        except OSError:
            code = 3
        sys.stderr.flush()
        os._exit(code)

    os.close(wfd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([rfd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    err.seek(0)
    stderr = err.read().decode("utf-8", errors="replace")
    err.close()

    reports: list[Any] = []
    final: tuple[str, Any] | None = None
    data = b"".join(chunks)
    pos = 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack("<I", data[pos : pos + 4])
        if pos + 4 + n > len(data):
            break
        item = pickle.loads(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
        if item[0] == "report":
            reports.append(item[1])
        else:
            final = item
    if timed_out:
        return Forked("timeout", stderr=stderr, reports=reports)
    if os.WIFSIGNALED(status):
        return Forked("signal", signum=os.WTERMSIG(status), stderr=stderr, reports=reports)
    if final is None or os.WEXITSTATUS(status) != 0:
        return Forked("exit", code=os.WEXITSTATUS(status), stderr=stderr, reports=reports)
    return Forked(final[0], value=final[1], stderr=stderr, reports=reports)
