"""Progress lines while a cold target is fetched and built (npm pack, gcc, the cffi module):
what is being done, a line every few seconds while it lasts, and how long it took, on stderr.

    with step("building rc.8 with gcc (one time, about 20 s)"):
        subprocess.run(...)

prints `ggspec: building rc.8 with gcc ...`, then `ggspec:   ... still building (5 s)` every
`every` seconds, then `ggspec: building rc.8 with gcc: done in 21.3 s` (or `failed after`).
The lines go to a duplicate of file descriptor 2 taken when the step starts, so they stay
visible while a build redirects the process's own stderr into a log.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import TextIO

#: seconds between "still ..." lines
EVERY = 5.0


def _open_stderr() -> TextIO | None:
    try:
        return os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
    except OSError:
        return None


@contextlib.contextmanager
def step(what: str, every: float = EVERY) -> Iterator[None]:
    out = _open_stderr()

    def say(line: str) -> None:
        if out is not None:
            with contextlib.suppress(OSError, ValueError):
                out.write(f"ggspec: {line}\n")
                out.flush()

    say(f"{what} ...")
    start = time.monotonic()
    done = threading.Event()
    verb = what.split(" ", 1)[0]

    def tick() -> None:
        while not done.wait(every):
            say(f"  ... still {verb} ({time.monotonic() - start:.0f} s)")

    ticker = threading.Thread(target=tick, name="ggspec-step", daemon=True)
    ticker.start()
    ok = False
    try:
        yield
        ok = True
    finally:
        done.set()
        ticker.join()
        short = what.split(" (", 1)[0]
        say(f"{short}: {'done in' if ok else 'failed after'} {time.monotonic() - start:.1f} s")
        if out is not None:
            with contextlib.suppress(OSError):
                out.close()


#: words in a fetching tool's output that mean the network, not the tool or the package, failed
NETWORK_SIGNS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH",
                 "Temporary failure in name resolution", "Name or service not known", "NewConnectionError",
                 "Network is unreachable", "Connection refused", "ConnectTimeoutError", "ReadTimeoutError",
                 "No route to host", "getaddrinfo")
#: lines of npm's output that say nothing of the failure
_NOISE = ("A complete log of this run can be found in", "npm notice")


def tool_said(stderr: str, stdout: str = "", lines: int = 3) -> str:
    """What a failed tool (npm, pip) printed, in its own words, on one line: its last `lines`
    non-empty lines of stderr (else of stdout), without npm's `npm error` prefixes and log-file
    pointer, joined by ' / '."""
    out = []
    for line in (stderr if stderr.strip() else stdout).splitlines():
        text = line.strip()
        for prefix in ("npm error", "npm ERR!"):
            text = text.removeprefix(prefix).strip()
        if text and not any(n in text for n in _NOISE):
            out.append(text)
    return " / ".join(out[-lines:]) if out else "nothing"


def fetch_failed(command: str, code: int, stderr: str, stdout: str, source: str) -> str:
    """The one-line message of a failed fetch: the command, its exit code and what it said; the
    network is blamed only when the tool's output says so (NETWORK_SIGNS)."""
    text = f"{command} failed (exit {code}): {tool_said(stderr, stdout)}"
    if any(sign in stderr + stdout for sign in NETWORK_SIGNS):
        text += f" ({source} cannot be reached from here)"
    return text
