"""The virtual device's entry log (native/src/vdev.c, reference/vdev.py): the same words on both
sides, in call order, and never a pointer."""

from __future__ import annotations

import re

import pytest
from ggspec.native import backend as nb
from ggspec.native import buffer as nbuf
from ggspec.native import vdev as nv
from ggspec.reference import backend as rb
from ggspec.reference import buffer as rbuf
from ggspec.reference import vdev as rv
from ggspec.reference.clauses import Profile, UsageError
from ggspec.reference.world import World

PARAMS = rv.VDevParams(name="Dev", alignment=64)


def _scenario(m_buffer: object, m_backend: object, backend: object) -> None:
    """Entries reached through public functions that call exactly one entry each."""
    buft = m_backend.backend_get_default_buffer_type(backend)  # type: ignore[attr-defined]
    assert m_buffer.buft_get_alignment(buft) == 64  # type: ignore[attr-defined]
    buf = m_buffer.buft_alloc_buffer(buft, 100)  # type: ignore[attr-defined]
    assert m_buffer.buffer_name(buf) == "Dev"  # type: ignore[attr-defined]
    m_buffer.buffer_clear(buf, 3)  # type: ignore[attr-defined]
    m_buffer.buffer_reset(buf)  # type: ignore[attr-defined]
    second = m_buffer.buft_alloc_buffer(buft, 8)  # type: ignore[attr-defined]
    m_buffer.buffer_free(buf)  # type: ignore[attr-defined]
    m_backend.backend_synchronize(backend)  # type: ignore[attr-defined]
    assert m_backend.backend_name(backend) == "Dev"  # type: ignore[attr-defined]
    m_buffer.buffer_free(second)  # type: ignore[attr-defined]
    m_backend.backend_free(backend)  # type: ignore[attr-defined]


EXPECTED = [
    "get_default_buffer_type backend", "get_alignment buft", "alloc_buffer buft 100", "get_name buffer#0",
    "clear buffer#0 3", "reset buffer#0", "alloc_buffer buft 8", "free_buffer buffer#0", "synchronize backend",
    "get_name backend", "free_buffer buffer#1", "free backend",
]


def test_native_and_reference_log_the_same_entries() -> None:
    nbackend = nv.vdev_init(PARAMS)
    nbuft = nv.vdev_buffer_type(nbackend)
    _scenario(nbuf, nb, nbackend)
    native = nv.vdev_log(nbuft)

    world = World(Profile.RC8)
    rbackend = rv.vdev_init(world, PARAMS)
    rbuft = rv.vdev_buffer_type(rbackend)
    _scenario(rbuf, rb, rbackend)
    reference = rv.vdev_log(rbuft)

    assert [e for _, e in native] == EXPECTED
    assert [e for _, e in reference] == EXPECTED
    for log in (native, reference):  # serials increase in call order
        serials = [s for s, _ in log]
        assert serials == sorted(serials) and len(set(serials)) == len(serials)
    nv.vdev_log_clear(nbuft)
    assert nv.vdev_log(nbuft) == []


def test_the_log_outlives_the_backend_and_holds_no_pointer() -> None:
    b = nv.vdev_init(PARAMS)
    buft = nv.vdev_buffer_type(b)
    buf = nbuf.buft_alloc_buffer(buft, 16)
    nbuf.buffer_get_base(buf)
    nbuf.buffer_free(buf)
    nb.backend_free(b)
    log = [e for _, e in nv.vdev_log(buft)]
    assert log[0] == "alloc_buffer buft 16" and log[-1] == "free backend"
    assert not any(re.search(r"0x[0-9a-f]{4,}", e) for e in log), log


def test_the_log_hooks_refuse_a_cpu_buffer_type() -> None:
    from ggspec.native import cpu

    with pytest.raises(UsageError):
        nv.vdev_log(cpu.cpu_buffer_type())


def test_a_long_log_keeps_every_entry() -> None:
    """The log grows past its first pages (it lives in mappings of its own, off the C heap)."""
    b = nv.vdev_init(PARAMS)
    buft = nv.vdev_buffer_type(b)
    buf = nbuf.buft_alloc_buffer(buft, 4)
    for i in range(3000):
        nbuf.buffer_clear(buf, i % 256)
    log = [e for _, e in nv.vdev_log(buft)]
    assert len(log) == 3001 and log[1] == "clear buffer#0 0" and log[-1] == f"clear buffer#0 {2999 % 256}"
    nbuf.buffer_free(buf)
    nv.vdev_log_clear(buft)


def test_base_offset_misaligns_every_base_by_the_same_amount() -> None:
    """VDevParams.base_offset: a buffer's base lies that many bytes past a page boundary, on both sides."""
    p = rv.VDevParams(name="Odd", alignment=64, base_offset=16)
    nbuffer = nbuf.buft_alloc_buffer(nv.vdev_buffer_type(nv.vdev_init(p)), 100)
    world = World(Profile.RC8)
    rbuffer = rbuf.buft_alloc_buffer(rv.vdev_buffer_type(rv.vdev_init(world, p)), 100)
    assert nbuf.buffer_get_base(nbuffer) % 4096 == 16 == rbuf.buffer_get_base(rbuffer) % 4096
    nbuf.buffer_clear(nbuffer, 5)
    rbuf.buffer_clear(rbuffer, 5)
    assert nv.vdev_read(nbuffer, 0, 100) == bytes([5]) * 100 == rv.vdev_read(rbuffer, 0, 100)
    nbuf.buffer_free(nbuffer)
