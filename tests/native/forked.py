"""Death tests for tests/native: run a C call in a forked child and read how it ended."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

from ggspec.conformance.engine.isolate import run_forked as _run_forked


def run_forked(fn: Callable[[], None]) -> tuple[int, str]:
    """Run `fn` in a forked child; returns (a wait status, the child's stderr)."""
    res = _run_forked(fn, timeout=120)
    if res.status == "signal":
        return res.signum, res.stderr
    if res.status == "exception":
        return 1 << 8, f"{res.stderr}\n{res.value!r}"
    return (res.code if res.status == "exit" else 0) << 8, res.stderr


def assert_aborts(fn: Callable[[], None], message: str) -> None:
    """`fn` must abort (SIGABRT) printing `GGML_ASSERT: file:line: message`, and no sanitizer report."""
    status, err = run_forked(fn)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT, f"expected SIGABRT, got status {status}\n{err}"
    assert "GGML_ASSERT: " in err and message in err, err
    assert "Sanitizer" not in err and "runtime error:" not in err, err
