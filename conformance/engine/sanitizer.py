"""Targets built with AddressSanitizer and UndefinedBehaviorSanitizer (`rc8-asan`, or any build
given with `--sanitize address`): the runtime they need, and their reports read as verdicts.

A library built with `-fsanitize=address` loads only into a process whose first library is
libasan (ASan's interceptors must come before libc's). `runtime_loaded()` says whether this
process has it; `reexec_environment()` is what the `ggspec` command sets before it runs itself
again (LD_PRELOAD and the options below); an in-process caller without the runtime gets one line
from `require_runtime` instead of a worker that dies as it loads the target.

A report ends the worker that made it (ASAN_OPTIONS abort_on_error=0: exit status 1; UBSan is
built without recovery, so it halts too) and is written on the worker's stderr, which the
engine keeps (isolate.py). `find(stderr)` reads it: the tool, the kind of error, the access,
and the first frame of the stack that is not the sanitizer's own (an interceptor such as memcpy
is skipped: the frame below it is the target's code that called it). The verdict's detail
(runner.py, differential.py) names the check's clauses, that frame, and shows the report's head
instead of the last lines of stderr, which for ASan are its shadow-byte legend.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import TargetUnavailable

#: the sanitizers `--sanitize` takes
KINDS = ("address",)
#: set by the ggspec command when it runs itself again with the runtime preloaded (no loop)
REEXEC_ENV = "GGSPEC_SANITIZER_REEXEC"
#: ASan's options for a run (before the user's own ASAN_OPTIONS, which win): no leak check at
#: exit (Python's own allocations), a report ends the worker with exit 1 (not SIGABRT, which a
#: death test reads as an abort), a failed huge allocation returns NULL as malloc does (the
#: capacity checks ask for such), and a quarantine of 32 MB rather than 256: each worker fork
#: copies the page tables of the quarantined memory (bench/RESULTS.md, the .ci/run asan step)
ASAN_DEFAULTS = "detect_leaks=0:abort_on_error=0:allocator_may_return_null=1:quarantine_size_mb=32"
UBSAN_DEFAULTS = "halt_on_error=1:print_stacktrace=1"

_ERROR = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer|MemorySanitizer): ([\w-]+)([^\n]*)")
_UBSAN = re.compile(r"^(?P<loc>\S+:\d+(?::\d+)?): runtime error: (?P<what>[^\n]*)", re.MULTILINE)
_ACCESS = re.compile(r"^(READ|WRITE) of size \d+", re.MULTILINE)
_FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ in (\S+)\s*(.*)$")
_SUMMARY = re.compile(r"^SUMMARY: \w+Sanitizer: [^\n]*", re.MULTILINE)
#: functions and places of the sanitizer runtime itself
_RUNTIME_FUNCS = ("__interceptor_", "___interceptor_", "__asan", "__ubsan", "__sanitizer", "__lsan", "__interception")
_RUNTIME_PLACES = ("libsanitizer", "libasan.so", "libubsan.so", "compiler-rt")


@dataclass(frozen=True)
class Report:
    """A sanitizer report found in a worker's stderr."""

    #: AddressSanitizer, UndefinedBehaviorSanitizer, ...
    tool: str
    #: heap-buffer-overflow, SEGV, "index 5 out of bounds for type 'int [4]'", ...
    kind: str
    #: "WRITE of size 4" (ASan), else ""
    access: str
    #: the first frame that is not the sanitizer's: "wsp_ggml_hash_insert at ggml.c:1234"
    frame: str
    #: the report's head: its error line, access, the first stack, its summary
    excerpt: list[str] = field(default_factory=list)

    def line(self) -> str:
        access = f", {self.access}" if self.access else ""
        return f"{self.tool}: {self.kind}{access}; first frame: {self.frame}"


def _place(location: str) -> str:
    """`/long/path/ggml.c:1234` (or `:1234:5`) as `ggml.c:1234`; a module in parentheses as it is."""
    location = location.strip()
    if location.startswith("("):
        return location
    m = re.match(r"(.*?):(\d+)(?::\d+)?$", location)
    return f"{Path(m.group(1)).name}:{m.group(2)}" if m else Path(location).name if location else "?"


def _is_runtime(func: str, location: str) -> bool:
    return func.startswith(_RUNTIME_FUNCS) or any(p in location for p in _RUNTIME_PLACES)


def _first_stack(lines: list[str]) -> list[tuple[str, str]]:
    """The frames (function, location) of the first stack in `lines`."""
    frames: list[tuple[str, str]] = []
    for ln in lines:
        m = _FRAME.match(ln)
        if m:
            if m.group(1) == "0" and frames:  # a second stack (where the memory was allocated)
                break
            frames.append((m.group(2), m.group(3)))
        elif frames:
            break
    return frames


def find(stderr: str) -> Report | None:
    """The first sanitizer report in `stderr`, or None."""
    asan = _ERROR.search(stderr)
    ubsan = _UBSAN.search(stderr)
    if asan is None and ubsan is None:
        return None
    if asan is not None and (ubsan is None or asan.start() < ubsan.start()):
        start = stderr.rfind("\n", 0, asan.start()) + 1
        tool, kind = asan.group(1), asan.group(2)
        if kind == "SEGV" or kind.endswith("signal"):
            kind = f"{kind}{asan.group(3).split(' (pc')[0]}"
        access_m = _ACCESS.search(stderr, asan.end())
        access = access_m.group(0) if access_m and access_m.start() - asan.end() < 400 else ""
        ubsan_loc = ""
    else:
        assert ubsan is not None
        start = ubsan.start()
        tool, kind, access, ubsan_loc = "UndefinedBehaviorSanitizer", ubsan.group("what").strip(), "", ubsan.group("loc")
    lines = stderr[start:].splitlines()
    frames = _first_stack(lines[1:40])
    own = [(f, loc) for f, loc in frames if not _is_runtime(f, loc)]
    if own:
        func, loc = own[0]
        frame = f"{func} at {_place(loc)}"
    elif ubsan_loc:  # UBSan without a stack: its line names the place
        frame = _place(ubsan_loc)
    else:
        frame = "(no frame outside the sanitizer)"
    excerpt = [lines[0]]
    if access:
        excerpt.append(access)
    excerpt += [ln.strip() for ln in lines[1:40] if _FRAME.match(ln)][: len(frames)][:10]
    summary = _SUMMARY.search(stderr, start)
    if summary:
        excerpt.append(summary.group(0))
    return Report(tool, kind, access, frame, excerpt)


def tail(stderr: str, lines: int = 8) -> str:
    """A worker's stderr for a verdict: the report's head where it holds a sanitizer report,
    else its last `lines` lines."""
    report = find(stderr)
    if report is not None:
        return "sanitizer report (stderr):\n  " + "\n  ".join(report.excerpt)
    got = stderr.strip().splitlines()[-lines:]
    return "stderr:\n  " + "\n  ".join(got) if got else "stderr: (empty)"


def ending(stderr: str, how: str) -> str:
    """A dead worker's ending (`how`: "exited with code 1 in CALL") named by its report, if any."""
    report = find(stderr)
    return how if report is None else f"made a sanitizer report, {report.line()} ({how})"


# --- the runtime -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def runtime_library() -> str | None:
    """libasan's path, as gcc names it, or None where there is no gcc or no libasan."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    try:
        out = subprocess.run([gcc, "-print-file-name=libasan.so"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = out.stdout.strip()
    return path if out.returncode == 0 and os.path.isabs(path) and os.path.exists(path) else None


def runtime_loaded() -> bool:
    """Whether this process has the ASan runtime (libasan mapped, as LD_PRELOAD puts it)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return False
    return "libasan.so" in maps


def reexec_environment(env: dict[str, str]) -> dict[str, str]:
    """`env` with libasan first in LD_PRELOAD and the sanitizers' options (the user's own
    ASAN_OPTIONS and UBSAN_OPTIONS come after ours, so they win)."""
    lib = runtime_library()
    if lib is None:
        raise TargetUnavailable("a target built with AddressSanitizer needs libasan (gcc -print-file-name=libasan.so "
                                "names none here): install gcc's libasan")
    out = dict(env)
    preload = [p for p in out.get("LD_PRELOAD", "").split() if p and "libasan" not in p]
    out["LD_PRELOAD"] = " ".join([lib, *preload])
    for name, ours in (("ASAN_OPTIONS", ASAN_DEFAULTS), ("UBSAN_OPTIONS", UBSAN_DEFAULTS)):
        theirs = out.get(name, "")
        out[name] = f"{ours}:{theirs}" if theirs else ours
    out[REEXEC_ENV] = "1"
    return out


#: what a C file linked against a sanitized library is compiled with (a C reproducer)
LINK_FLAGS = ("-fsanitize=address,undefined",)


def require_runtime(target: str) -> None:
    """Raise TargetUnavailable, in one line, where `target`'s sanitized library cannot load
    into this process (the ggspec command runs itself again first; a caller in Python must)."""
    if runtime_loaded():
        return
    lib = runtime_library() or "$(gcc -print-file-name=libasan.so)"
    raise TargetUnavailable(
        f"target {target} is built with AddressSanitizer, whose runtime must be loaded first: run this process "
        f"with LD_PRELOAD={lib} (the ggspec command does that itself)")
