"""Running a function in a forked worker, so that an abort, a segfault or a hang of a target ends
the worker and not the run. What the worker reported before it died is kept.

A worker tells its parent three things while it runs, all of which survive its death:

- `report(value)`: a value sent at once through a pipe (a death test's observations);
- `beat(seconds, note)`: "I am alive; give me `seconds` more" — the parent's watchdog deadline
  moves, so a run can time out per example instead of per worker;
- `traced_call(name, fn)`: wraps a C function so that calling it first writes its name and
  arguments into a page of memory shared with the parent (no system call); when the worker
  crashes or hangs, `Forked.call` names the API call it was in.

A worker ignores SIGINT (the parent decides what an interrupt stops) and dies with its parent
(PR_SET_PDEATHSIG), so an interrupted or killed run leaves no worker behind. An exception,
KeyboardInterrupt included, that reaches the parent while it waits kills the worker first.
"""

from __future__ import annotations

import ctypes
import faulthandler
import functools
import gc
import mmap
import os
import pickle
import re
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import Unsendable, WorkersStopped

#: the size of the shared page that holds the call in progress
_SLOT_BYTES = 4096
#: the page: [state u8][pad 3][calls entered u32][text length u16][text]
_SEQ, _LEN, _TEXT = 4, 8, 10
_IDLE, _IN_CALL, _RETURNED = 0, 1, 2


@dataclass
class Forked:
    """How a forked call ended.

    status: "ok" (returned), "exception" (raised: `value` is the exception), "signal" (killed by
    `signum`), "exit" (called exit with `code`), "timeout" (no beat in time, or over its budget).
    `call`: the last API call the worker entered (name and arguments), `in_call`: whether it was
    still inside it; `beat`: the note of its last beat; `budget_spent`: the timeout was the
    overall budget, not a missing beat.
    """

    status: str
    value: Any = None
    signum: int = 0
    code: int = 0
    stderr: str = ""
    reports: list[Any] = field(default_factory=list)
    #: the Python traceback faulthandler wrote when the worker crashed (kept apart from `stderr`,
    #: which is what the target itself printed)
    traceback: str = ""
    call: str = ""
    in_call: bool = False
    beat: str = ""
    budget_spent: bool = False
    #: a timeout because one API call took `call_timeout` (else no beat in time, or the budget)
    call_stuck: bool = False

    def where(self) -> str:
        """`in CALL` / `after CALL returned`, or "" when the worker entered no API call."""
        if not self.call:
            return ""
        return f"in {self.call}" if self.in_call else f"after {self.call} returned"

    def describe(self) -> str:
        if self.status == "signal":
            try:
                name = signal.Signals(self.signum).name
            except ValueError:
                name = str(self.signum)
            text = f"killed by {name}"
        elif self.status == "exit":
            text = f"exited with code {self.code}"
        elif self.status == "exception":
            text = f"raised {self.value!r}"
        elif self.status == "timeout":
            text = "over its time budget" if self.budget_spent else "hung" if self.call_stuck else "timed out"
        else:
            text = self.status
        where = self.where() if self.status in ("signal", "exit", "timeout") else ""
        return f"{text} {where}" if where else text


@dataclass
class Worker:
    """This process as a forked worker (`WORKER`; every field unset in a process that is none):
    set by `run_forked` in the child right after the fork, so there is no module-level setting."""

    #: the pipe to the parent (reports, beats, the result)
    channel: int | None = None
    #: whether `report` sends anything (run_forked's `reports`)
    send_reports: bool = True
    #: the page shared with the parent, where the API call in progress is marked
    slot: mmap.mmap | None = None
    #: name each call's arguments in full (pointer addresses, bytes) in the page: set in workers
    #: forked for one example, where calls are few; elsewhere only the function's name is
    #: written, so that marking a call costs about what the C call itself does
    full_args: bool = False
    #: calls entered so far (the page carries it, so a watchdog sees a call that hangs)
    calls: int = 0


@dataclass
class Supervisor:
    """This process as a parent of workers (`SUPERVISOR`)."""

    #: the running workers (several when the runner runs checks in threads)
    live: set[int] = field(default_factory=set)
    #: stop_all was called: start no worker until `resume`
    stopping: bool = False


WORKER = Worker()
SUPERVISOR = Supervisor()


def stop_all() -> None:
    """Kill every worker this process is waiting on, and start no new one (until `resume`)."""
    SUPERVISOR.stopping = True
    for pid in list(SUPERVISOR.live):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def resume() -> None:
    SUPERVISOR.stopping = False


def report(value: Any) -> None:
    """From inside a forked worker: send `value` to the parent now (kept even if we crash)."""
    if WORKER.channel is None or not WORKER.send_reports:
        return
    _send(_REPORT, value)


def beat(seconds: float, note: str = "") -> None:
    """From inside a forked worker: the parent's watchdog waits `seconds` more from now."""
    if WORKER.channel is not None:
        _send(_BEAT, (seconds, note))


#: the kinds of frame on the pipe: a report, a beat, the final result
_REPORT, _BEAT, _FINAL = b"R", b"B", b"F"


def _send(kind: bytes, value: Any) -> None:
    assert WORKER.channel is not None
    blob = kind + pickle.dumps(value)
    os.write(WORKER.channel, struct.pack("<I", len(blob)) + blob)


def in_worker() -> bool:
    return WORKER.channel is not None


_CDATA = re.compile(r"<cdata '([^']*)' (0x[0-9a-f]+|NULL)>")


def _arg(value: Any) -> str:
    """An argument, short: `(struct ggml_tensor *)0x55d0...` for a cffi pointer."""
    text = _CDATA.sub(r"(\1)\2", repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


class _Entered:
    """A C function that marks the shared slot when it is entered and when it returns."""

    __slots__ = ("__wrapped__", "name", "_mark")

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name = name
        self.__wrapped__ = fn
        head = f"{name}(...)".encode()[: _SLOT_BYTES - _TEXT]
        mark = struct.Struct(f"<B3xIH{len(head)}s")  # state, calls entered, length, text: one write
        self._mark = (mark, head)

    def __call__(self, *args: Any) -> Any:
        worker = WORKER
        slot = worker.slot
        if slot is None:
            return self.__wrapped__(*args)
        worker.calls = seq = (worker.calls + 1) & 0xFFFFFFFF
        # a call made from inside another (a Python callback the C code calls back): the outer
        # one is in progress again once this one returns, and a hang after it is the outer's
        outer = bytes(slot[: _TEXT + struct.unpack_from("<H", slot, _LEN)[0]]) if slot[0] == _IN_CALL else None
        if worker.full_args:
            text = f"{self.name}({', '.join(map(_arg, args))})".encode(errors="replace")[: _SLOT_BYTES - _TEXT]
            struct.pack_into(f"<B3xIH{len(text)}s", slot, 0, _IN_CALL, seq, len(text), text)
        else:
            mark, head = self._mark
            mark.pack_into(slot, 0, _IN_CALL, seq, len(head), head)
        try:
            return self.__wrapped__(*args)
        finally:
            if outer is None:
                slot[0] = _RETURNED
            else:
                slot[: len(outer)] = outer


#: the wrapper made for each C function, by name (a target asks for a function at every call)
_entered: dict[str, _Entered] = {}


def traced_call(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, marking the shared slot around each call when in a worker (else `fn` itself)."""
    if WORKER.slot is None:
        return fn
    got = _entered.get(name)
    if got is None or got.__wrapped__ is not fn:
        got = _entered[name] = _Entered(name, fn)
    return got


def _read_slot(slot: mmap.mmap) -> tuple[str, bool]:
    state = slot[0]
    if state == _IDLE:
        return "", False
    (n,) = struct.unpack_from("<H", slot, _LEN)
    return slot[_TEXT : _TEXT + n].decode("utf-8", errors="replace"), state == _IN_CALL


def _call_in_progress(slot: mmap.mmap) -> int | None:
    """The number of the API call the worker is inside now, or None when it is in none."""
    return struct.unpack_from("<I", slot, _SEQ)[0] if slot[0] == _IN_CALL else None


#: the C library's prctl, looked up once (by the first process that forks), or None
_prctl: list[Any] = []


def _find_prctl() -> None:
    if not _prctl:
        try:
            _prctl.append(ctypes.CDLL(None, use_errno=True).prctl)
        except (OSError, AttributeError):
            _prctl.append(None)


def _die_with_parent(parent: int) -> None:
    """Linux: this worker gets SIGKILL when its parent dies (an interrupted run leaves none)."""
    prctl = _prctl[0] if _prctl else None
    if prctl is None:
        return
    prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _enter_worker(parent: int, rfd: int, err: Any, tb: Any, slot: mmap.mmap, wfd: int, reports: bool,
                  full_args: bool) -> None:
    """In a child right after the fork: become a worker that reports through `wfd`."""
    # what it inherited is never garbage it must collect: its collections skip those objects
    # (else each one walks, and so copies, every page of the parent's heap)
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    os.close(rfd)
    os.dup2(err.fileno(), 2)
    # fresh stream objects: a thread of the parent may have held the old ones' locks at the fork
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    try:
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    except OSError:  # no fd 1
        pass
    SUPERVISOR.live.clear()
    if tb is not None:
        faulthandler.enable(file=tb)  # a crash's Python traceback, apart from the target's stderr
    else:  # (not the parent's, inherited: that would write into the parent's file)
        faulthandler.disable()
    WORKER.channel, WORKER.send_reports, WORKER.slot = wfd, reports, slot
    WORKER.full_args = full_args or WORKER.full_args


def _call_and_send(fn: Callable[[], Any], wfd: int) -> bool:
    """In a worker: call `fn` and send how it ended as the final frame; False if the pipe is gone."""
    try:
        result: tuple[str, Any] = ("ok", fn())
    except BaseException as exc:  # noqa: BLE001 - every ending is reported to the parent
        result = ("exception", exc)
    try:
        blob = _FINAL + pickle.dumps(result)
    except Exception as exc:  # noqa: BLE001
        blob = _FINAL + pickle.dumps(("exception", RuntimeError(f"unpicklable result: {exc!r}: {result!r}")))
    try:
        os.write(wfd, struct.pack("<I", len(blob)) + blob)
    except OSError:
        return False
    return True


def run_forked(fn: Callable[[], Any], timeout: float = 600.0, budget: float | None = None,
               reports: bool = True, call_timeout: float | None = None, full_args: bool = False,
               python_traceback: bool = True) -> Forked:
    """Call `fn()` in a forked child; return how it ended, its result and its stderr.

    The child is killed (status "timeout") when `timeout` seconds pass without a `beat` (the
    first period starts at the fork; each beat sets the next), when it has been inside one
    traced API call for `call_timeout` seconds, or after `budget` seconds in all.
    `reports=False`: the worker's `report` calls send nothing (they are for death tests).
    `full_args`: the call in progress is named with all its arguments (else numbers only).
    `python_traceback=False`: no Python traceback is written when the worker dies (faulthandler
    off, `Forked.traceback` empty). A worker forked for one death test dies by design, and
    faulthandler's dump (every frame, every thread, then every extension module's name) was a
    tenth of such workers' samples in `perf` (bench/RESULTS.md, "What a forked worker costs").
    """
    if SUPERVISOR.stopping:
        raise WorkersStopped()
    sys.stdout.flush()
    sys.stderr.flush()
    slot = WORKER.slot if WORKER.slot is not None else mmap.mmap(-1, _SLOT_BYTES)  # nested workers share the page
    slot[0] = _IDLE
    struct.pack_into("<I", slot, _SEQ, 0)
    rfd, wfd = os.pipe()
    err = tempfile.TemporaryFile()
    tb = tempfile.TemporaryFile() if python_traceback else None
    parent = os.getpid()
    _find_prctl()
    pid = os.fork()
    if pid == 0:  # the worker
        _enter_worker(parent, rfd, err, tb, slot, wfd, reports, full_args)
        code = 0 if _call_and_send(fn, wfd) else 3
        sys.stderr.flush()
        os._exit(code)

    os.close(wfd)
    SUPERVISOR.live.add(pid)
    try:
        chunks, why, last_beat = _watch(rfd, timeout, budget, slot, call_timeout)
    except BaseException:  # an interrupt or an error in this process: the worker goes first
        _kill(pid)
        os.close(rfd)
        err.close()
        if tb is not None:
            tb.close()
        raise
    finally:
        SUPERVISOR.live.discard(pid)
    os.close(rfd)
    timed_out = why != ""
    if timed_out:
        _kill(pid)
        status = 0
    else:
        _, status = os.waitpid(pid, 0)
    if SUPERVISOR.stopping:  # stop_all killed it: that is no verdict
        err.close()
        if tb is not None:
            tb.close()
        raise WorkersStopped()
    err.seek(0)
    stderr = err.read().decode("utf-8", errors="replace")
    err.close()
    traceback = ""
    if tb is not None:
        tb.seek(0)
        traceback = tb.read().decode("utf-8", errors="replace")
        tb.close()
    return _ending(_frames(b"".join(chunks)), why, last_beat, status, stderr, traceback, slot)


def _ending(frames: list[tuple[bytes, Any]], why: str, last_beat: str, status: int, stderr: str, traceback: str,
            slot: mmap.mmap) -> Forked:
    """How a worker's call ended, from its frames, the watchdog's verdict (`why`: "" or a
    deadline) and, where it exited, its wait status (0 where it still runs or was killed)."""
    call, in_call = _read_slot(slot)
    if in_call:  # the worker died in it: for a watchdog further up, that call is over
        slot[0] = _RETURNED
    got: list[Any] = []
    final: tuple[str, Any] | None = None
    for kind, value in frames:
        if kind == _REPORT:
            got.append(value)
        elif kind == _FINAL:
            final = value
    out = Forked("exit", stderr=stderr, reports=got, traceback=traceback, call=call, in_call=in_call, beat=last_beat)
    if why:
        out.status, out.budget_spent, out.call_stuck = "timeout", why == "budget", why == "call"
    elif os.WIFSIGNALED(status):
        out.status, out.signum = "signal", os.WTERMSIG(status)
    elif final is None or os.WEXITSTATUS(status) != 0:
        out.code = os.WEXITSTATUS(status)
    else:
        out.status, out.value = final
    return out


class LastingWorker:
    """A forked worker that makes one call after another, each watched as `run_forked` watches
    its one: for the examples of one check that share what the worker started and that cannot
    cross a fork (the WebGPU device, conformance/adapters/webgpu_device.py), so the device is
    started once per check instead of once per example.

    `call(value)` runs `fn(value)` in the worker (`value` is pickled to it) and returns how it
    ended as a `Forked`: its result, its reports, the stderr it wrote during this call. A call
    that ends the worker (a signal, an exit, a timeout: the worker is killed) leaves none, and
    the next call forks a new one. `close()` ends the worker; a worker also dies with the process
    that forked it. The worker runs nothing else than `fn`, and no Python traceback is kept."""

    def __init__(self, fn: Callable[[Any], Any], full_args: bool = False) -> None:
        self.fn, self.full_args = fn, full_args
        self.pid = 0
        self._to = self._from = -1
        self._err: Any = None
        self._slot: mmap.mmap | None = None

    def _start(self) -> None:
        if SUPERVISOR.stopping:
            raise WorkersStopped()
        sys.stdout.flush()
        sys.stderr.flush()
        self._slot = WORKER.slot if WORKER.slot is not None else mmap.mmap(-1, _SLOT_BYTES)
        req_r, req_w = os.pipe()
        rfd, wfd = os.pipe()
        self._err = tempfile.TemporaryFile()
        parent = os.getpid()
        _find_prctl()
        pid = os.fork()
        if pid == 0:  # the worker: one request after another, until the parent closes the pipe
            os.close(req_w)
            _enter_worker(parent, rfd, self._err, None, self._slot, wfd, True, self.full_args)
            fn = self.fn
            while True:
                request = _read_frame(req_r)
                if request is None:
                    os._exit(0)
                value = pickle.loads(request)
                if not _call_and_send(functools.partial(fn, value), wfd):
                    os._exit(3)
                sys.stderr.flush()
        os.close(req_r)
        os.close(wfd)
        self.pid, self._to, self._from = pid, req_w, rfd

    def call(self, value: Any, timeout: float = 600.0, call_timeout: float | None = None) -> Forked:
        """`fn(value)` in the worker; `Unsendable` where `value` cannot be pickled."""
        try:
            blob = pickle.dumps(value)
        except Exception as exc:  # noqa: BLE001 - whatever pickle raises, the caller runs it elsewhere
            raise Unsendable(f"{type(exc).__name__}: {exc}") from None
        if self.pid and os.waitpid(self.pid, os.WNOHANG)[0] == self.pid:  # it died between calls
            self.pid = 0
            self.close()
        if self.pid == 0:
            self._start()
        assert self._slot is not None and self._err is not None
        slot = self._slot
        slot[0] = _IDLE
        struct.pack_into("<I", slot, _SEQ, 0)
        start = self._err.seek(0, os.SEEK_END)
        SUPERVISOR.live.add(self.pid)
        try:
            os.write(self._to, struct.pack("<I", len(blob)) + blob)
            chunks, why, last_beat = _watch(self._from, timeout, None, slot, call_timeout, until_final=True)
        except BaseException:  # an interrupt or an error in this process: the worker goes first
            _kill(self.pid)  # (it may be inside the call: closing its pipe would not end it)
            self.pid = 0
            self.close()
            raise
        finally:
            SUPERVISOR.live.discard(self.pid)
        if SUPERVISOR.stopping:
            self.close()
            raise WorkersStopped()
        frames = _frames(b"".join(chunks))
        ended = why != "" or not any(kind == _FINAL for kind, _ in frames)
        status = 0
        if ended:  # dead, or killed now: its wait status says how
            if why:
                _kill(self.pid)
            else:
                _, status = os.waitpid(self.pid, 0)
        self._err.seek(start)
        stderr = self._err.read().decode("utf-8", errors="replace")
        out = _ending(frames, why, last_beat, status, stderr, "", slot)
        if ended:
            self.pid = 0
            self.close()
        return out

    def close(self) -> None:
        """End the worker, which is between calls (it leaves its loop when its request pipe
        closes)."""
        for fd in (self._to, self._from):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._to = self._from = -1
        if self.pid:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        if self._err is not None:
            self._err.close()
            self._err = None


def _read_frame(fd: int) -> bytes | None:
    """One length-prefixed frame from `fd`, or None at the end of the pipe."""
    head = _read_exactly(fd, 4)
    if head is None:
        return None
    (n,) = struct.unpack("<I", head)
    return _read_exactly(fd, n)


def _read_exactly(fd: int, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _watch(rfd: int, timeout: float, budget: float | None, slot: mmap.mmap,
           call_timeout: float | None, until_final: bool = False) -> tuple[list[bytes], str, str]:
    """Read the worker's frames until it closes the pipe (""), or sends its final frame where
    `until_final` (a LastingWorker's call, ""), or a deadline passes ("beat", "call" or "budget");
    also the note of the last beat."""
    chunks: list[bytes] = []
    start = time.monotonic()
    deadline = start + timeout
    hard = start + budget if budget is not None else float("inf")
    pending = b""
    last_beat = ""
    call: int | None = None  # the call the worker was in at the last look, and since when
    call_since = start
    while True:
        now = time.monotonic()
        if call_timeout is not None:
            seen = _call_in_progress(slot)
            if seen != call:
                call, call_since = seen, now
            elif call is not None and now - call_since >= call_timeout:
                return chunks, "call", last_beat
        if now >= min(deadline, hard):
            return chunks, "budget" if now >= hard else "beat", last_beat
        wait = min(deadline, hard) - now
        if call_timeout is not None:  # look at the call in progress a few times a period
            wait = min(wait, max(call_timeout / 4, 0.05))
        ready, _, _ = select.select([rfd], [], [], wait)
        if not ready:
            continue
        chunk = os.read(rfd, 1 << 16)
        if not chunk:
            return chunks, "", last_beat
        chunks.append(chunk)
        pending += chunk
        while len(pending) >= 4:  # look at complete frames for beats as they come
            (n,) = struct.unpack("<I", pending[:4])
            if len(pending) < 4 + n:
                break
            frame, pending = pending[4 : 4 + n], pending[4 + n :]
            if until_final and frame[:1] == _FINAL:
                return chunks, "", last_beat
            if frame[:1] == _BEAT:
                beat = _unpickle(_BEAT, frame[1:])
                if beat is not _UNREADABLE:
                    seconds, last_beat = beat
                    deadline = time.monotonic() + seconds


#: what `_unpickle` gives for a report or a beat it cannot rebuild
_UNREADABLE = object()


def _unpickle(kind: bytes, blob: bytes) -> Any:
    """A frame's value. One this process cannot rebuild (an exception class whose __init__
    wants other arguments than it pickled, a worker whose heap was corrupt when it wrote) is
    not an error of the run: a final result becomes the worker's exception, saying why, and a
    report or a beat is dropped (`_UNREADABLE`)."""
    try:
        return pickle.loads(blob)
    except Exception as exc:  # noqa: BLE001 - whatever the worker sent, the run goes on
        if kind != _FINAL:
            return _UNREADABLE
        return ("exception", RuntimeError(f"the worker's result could not be read back ({type(exc).__name__}: {exc})"))


def _frames(data: bytes) -> list[tuple[bytes, Any]]:
    out: list[tuple[bytes, Any]] = []
    pos = 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack("<I", data[pos : pos + 4])
        if pos + 4 + n > len(data):
            break
        frame = data[pos + 4 : pos + 4 + n]
        value = _unpickle(frame[:1], frame[1:])
        if value is not _UNREADABLE:
            out.append((frame[:1], value))
        pos += 4 + n
    return out
