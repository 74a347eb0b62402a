"""Whether a check's examples asked for a device that `--device` replaces.

`ggspec check --device webgpu` changes one thing for an example: the first *plain* virtual
device it asks for (adapters/webgpu_device.py, `is_plain`) is the WebGPU device. An example that
never asks for one runs the same code on both devices, call for call. So a check none of whose
examples asked for a plain device, run under one seed on the mock, draws the same examples and
gives the same verdict under that seed on WebGPU (and the other way round): its verdict does not
depend on the device. The verdict cache (run/cache.py) and `--reuse-from` (run/reuse.py)
reuse such a verdict across devices, and only such a verdict.

`watching()` opens the record for one check, in the check's worker; `mark()` (called by the
target's `vdev_init`, adapters/webgpu_device.py `watch_reach`) records a plain device. The record
is one byte of memory shared with every process forked while it is open, so an example that runs
in a worker of its own (an example expected to die, the check's device worker) is counted too,
even when that worker then crashes.
"""

from __future__ import annotations

import mmap
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Record(threading.local):
    """The open records of this thread (`RECORD`): the shared byte of each `watching()` still
    open, outermost first; none outside a check. `run_check` opens one in the parent before the
    check's worker forks, and the worker opens its own inside it: a mark goes to every open record,
    so the parent still learns it when the check's worker crashes or hangs and returns nothing.
    Per thread, since the runner runs several checks at once in threads of one process; a forked
    worker keeps the records of the thread that forked it."""

    pages: tuple[mmap.mmap, ...] = ()


RECORD = Record()


def mark() -> None:
    """An example asked for a plain virtual device (a no-op outside a check)."""
    for page in RECORD.pages:
        page[0] = 1


@contextmanager
def watching() -> Iterator[Callable[[], bool]]:
    """The record of one check: yields a function that says whether an example asked for a plain
    virtual device so far."""
    saved, page = RECORD.pages, mmap.mmap(-1, 1)  # anonymous and shared: forked workers write into it
    RECORD.pages = (*saved, page)
    try:
        yield lambda: page[0] == 1
    finally:
        RECORD.pages = saved
