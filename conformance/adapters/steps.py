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
