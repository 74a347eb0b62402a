"""The leak measurement of conformance/checks/_leaks.py on cycles whose behaviour is known: C heap
blocks malloc'ed and freed each cycle (no leak), one small block lost each cycle (a leak), a block
kept once and never again (noise that does not grow), and the reference target (no C heap)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cffi import FFI
from ggspec.conformance.adapters import make_target
from ggspec.conformance.checks import _leaks

ffi = FFI()
ffi.cdef("void * malloc(size_t); void free(void *);")
libc = ffi.dlopen(None)

pytestmark = pytest.mark.skipif(_leaks.heap_in_use() is None, reason="glibc's mallinfo2/mallinfo are missing")


def test_a_cycle_that_frees_what_it_allocates_does_not_leak() -> None:
    def cycle() -> None:
        blocks = [libc.malloc(n) for n in (24, 200, 4096, 300_000)]
        for b in blocks:
            libc.free(b)

    for _ in range(5):
        growth = _leaks.heap_growth(cycle)
        assert growth is not None and not growth.leaks, growth


@pytest.mark.parametrize("size", [16, 1000, 300_000])
def test_a_cycle_that_loses_one_block_leaks(size: int) -> None:
    lost: list[Any] = []

    def cycle() -> None:
        lost.append(int(ffi.cast("uintptr_t", libc.malloc(size))))  # the address only: the block stays lost

    try:
        growth = _leaks.heap_growth(cycle)
        assert growth is not None and growth.leaks, growth
        assert all(g >= size for g in growth.per_cycle), growth
    finally:
        for addr in lost:
            libc.free(ffi.cast("void *", addr))


def test_memory_kept_once_is_not_a_leak() -> None:
    kept: list[Any] = []

    def cycle() -> None:
        if len(kept) < 30:  # the first 30 cycles keep a block each (within the warm-up and first run)
            kept.append(libc.malloc(64))

    try:
        growth = _leaks.heap_growth(cycle)
        assert growth is not None and not growth.leaks, growth
    finally:
        for b in kept:
            libc.free(b)


def test_the_reference_has_no_c_heap() -> None:
    calls: list[int] = []

    def make(c: Callable[[str], Any]) -> Callable[[], None]:
        calls.append(1)
        return lambda: None

    assert not _leaks.has_c_heap(make_target("reference"))
    assert _leaks.leaks(make_target("reference"), make) is False
    assert calls == []
