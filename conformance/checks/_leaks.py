"""Leak measurement shared by the checks: does a create/use/free cycle of a target's C API leave
heap memory behind? (ALLOC-25, GCOPY-8 and every other "freeing releases everything" clause.)

How it measures, in the process that runs the target (a forked worker or the runner itself):
glibc's `mallinfo2()`, read through cffi from the running process (`ffi.dlopen(None)`), gives the
bytes the C heap has handed out (`uordblks`, plus `hblkhd` for blocks mmap'ed on their own). The
cycle is run `WARMUP` times first (so that caches, free lists and glibc's per-thread cache reach
their steady size), then `n` times, then `2n` more times, reading the heap (after a full garbage
collection of Python's objects) before and after each run. A cycle that leaks L bytes grows the
heap by about `n·L`, then `2n·L`; a cycle that leaks nothing leaves it where it was, up to a
bounded noise that does not grow with the number of cycles (a free list filled once). The
verdict is "leaks" only when both runs grew by at least `MIN_BYTES_PER_CYCLE` bytes a cycle and
a third run of `2n` cycles confirms it: glibc's smallest block is 32 bytes, so a cycle that
loses even one block is found, and noise that happens once is not taken for a leak.

The cycle must call the target's C functions directly — functions taken once with `t.fn(name)`
before the measurement, never the adapter's methods inside the loop (some keep what they are
given alive until the target is closed, which grows like a leak) — and must not keep Python
objects from one cycle to the next. A target without a C heap of its own (the reference model,
whose objects Python's collector reclaims) is never said to leak: `leaks()` returns False for it
without running anything, so a check records the same verdict for the reference and a correct
target. Where `mallinfo2` (or `mallinfo`) is missing — another C library, or a sanitizer build
whose allocator glibc does not see — nothing can be measured and `leaks()` returns False too.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cffi import FFI

from ..target import Target

#: cycles run before measuring, and in the first measured run (the second and third run twice as many)
WARMUP = 16
CYCLES = 48
#: the least growth a cycle that counts as leaking adds to the heap, in both runs
MIN_BYTES_PER_CYCLE = 8

_ffi = FFI()
_ffi.cdef("""
struct mallinfo2 { size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost; };
struct mallinfo  { int    arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost; };
struct mallinfo2 mallinfo2(void);
struct mallinfo  mallinfo(void);
""")
_libc: list[Any] = []


def _reader() -> Callable[[], int] | None:
    """A function returning the C heap's bytes in use now, or None where glibc's counters are missing."""
    if not _libc:
        _libc.append(_ffi.dlopen(None))
    libc = _libc[0]
    for name in ("mallinfo2", "mallinfo"):
        try:
            fn = getattr(libc, name)
        except AttributeError:
            continue

        def in_use(fn: Any = fn) -> int:
            info = fn()
            return int(info.uordblks) + int(info.hblkhd)

        return in_use
    return None


def heap_in_use() -> int | None:
    """The bytes the C heap has handed out now (after a full collection of Python's objects), or None."""
    read = _reader()
    if read is None:
        return None
    gc.collect()
    return read()


@dataclass(frozen=True)
class Growth:
    """How much the heap grew, in bytes a cycle, in each measured run of the cycle."""

    per_cycle: tuple[float, ...]

    @property
    def leaks(self) -> bool:
        return all(g >= MIN_BYTES_PER_CYCLE for g in self.per_cycle)


def heap_growth(cycle: Callable[[], None], cycles: int = CYCLES, warmup: int = WARMUP) -> Growth | None:
    """Run `cycle` `warmup` times, then `cycles`, `2·cycles` and (only when both grew) `2·cycles`
    more times; the heap's growth a cycle in each measured run. None where it cannot be read."""
    if _reader() is None:
        return None
    for _ in range(warmup):
        cycle()
    growth: list[float] = []
    for k, n in enumerate((cycles, 2 * cycles, 2 * cycles)):
        before = heap_in_use()
        for _ in range(n):
            cycle()
        after = heap_in_use()
        assert before is not None and after is not None
        growth.append((after - before) / n)
        if k == 1 and not Growth(tuple(growth)).leaks:
            break  # no steady growth in the first two runs: no leak, the third is not needed
    return Growth(tuple(growth))


#: a function that, given the target's C functions by name (`c("gallocr_new")`), returns the cycle
CycleMaker = Callable[[Callable[[str], Any]], Callable[[], None]]


def has_c_heap(t: Target) -> bool:
    """Whether `t` runs C code whose heap can be measured (not the reference model)."""
    return callable(getattr(t, "fn", None)) and hasattr(t, "lib")


def leaks(t: Target, make_cycle: CycleMaker, cycles: int = CYCLES) -> bool:
    """Whether the cycle `make_cycle` builds from `t`'s C functions leaks (see the module's
    docstring); False for a target without a C heap, or where the heap cannot be read. The C
    functions are looked up once, before the measurement."""
    if not has_c_heap(t):
        return False
    ct: Any = t  # a C target (CApiTarget and its subclasses): `fn` gives its C functions
    found: dict[str, Any] = {}

    def c(name: str) -> Any:
        if name not in found:
            found[name] = ct.fn(name)  # a missing symbol raises MissingSymbol: the check is unsupported
        return found[name]

    cycle = make_cycle(c)
    # the reference runs no cycles: the cycles' entry calls stay out of the devices' logs
    suspend = getattr(ct.lib, "ggspec_vdev_log_suspend", None)
    if suspend is not None:
        suspend(True)
    try:
        growth = heap_growth(cycle, cycles)
    finally:
        if suspend is not None:
            suspend(False)
    return growth is not None and growth.leaks
