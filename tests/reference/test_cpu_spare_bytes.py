"""ALLOC-7, "Where malloc put the buffer", and CPU-4: a CPU buffer's 64 spare bytes are room for
aligning the first tensor, not promised space. A request that fits only if less than 48 of them
went to alignment fits or aborts depending on malloc's address (rc.8 and native/ aborted with
"needed 64, largest block available 16", 32 or 48 from run to run): undefined under both profiles."""

from __future__ import annotations

import pytest
from ggspec.conformance.adapters.reference import ReferenceTarget
from ggspec.conformance.engine.registry import CHECKS, Recorder
from ggspec.conformance.engine.runner import load_checks
from ggspec.reference import alloc as A
from ggspec.reference.buffer import buft_alloc_buffer
from ggspec.reference.clauses import Profile, SpecViolation, UndefinedBehaviour
from ggspec.reference.cpu import cpu_buffer_from_ptr, cpu_buffer_type
from ggspec.reference.tensor import Context
from ggspec.reference.types import GGMLType as T
from ggspec.reference.world import World


@pytest.mark.parametrize("profile", list(Profile))
def test_the_spare_bytes_hold_what_any_malloc_address_leaves(profile: Profile) -> None:
    """A CPU buffer of size 64 has 128 bytes; at worst 80 of them follow the first aligned address
    (allocations round up to 64 bytes)."""
    w = World(profile)
    ctx = Context(w)
    talloc = A.tallocr_new_from_buffer(buft_alloc_buffer(cpu_buffer_type(w), 64))
    first = ctx.new_tensor(T.F32, [4])  # 16 bytes, 64 with the alignment: fits at any 16-aligned base
    A.tallocr_alloc(talloc, first)
    assert first.data is not None
    with pytest.raises(UndefinedBehaviour, match=r"\[ALLOC-7\].*only if malloc returned a 64-byte aligned address"):
        A.tallocr_alloc(talloc, ctx.new_tensor(T.F32, [4]))  # the next 64 fit only in the spare bytes
    with pytest.raises(SpecViolation, match=r"\[ALLOC-7\]"):  # 192 bytes: too big whatever the address
        A.tallocr_alloc(A.tallocr_new_from_buffer(buft_alloc_buffer(cpu_buffer_type(w), 64)), ctx.new_tensor(T.F32, [33]))


def test_caller_memory_and_measuring_runs_are_not_affected() -> None:
    """Memory from the caller has a known address, and a measuring allocator has no end."""
    w = World(Profile.RC8)
    ctx = Context(w)
    region = w.host_alloc(64)
    t = ctx.new_tensor(T.F32, [16])
    A.tallocr_alloc(A.tallocr_new_from_buffer(cpu_buffer_from_ptr(w, region.base, 64)), t)
    assert t.data == region.base
    m = A.tallocr_new_measure_from_buft(cpu_buffer_type(w))
    A.tallocr_alloc(m, ctx.new_tensor(T.F32, [16]))
    assert A.tallocr_max_size(m) == 64


@pytest.mark.parametrize("profile", list(Profile))
def test_scheduler_buffers_measured_for_another_graph(profile: Profile) -> None:
    """The finding: measured with `a` pinned to the device, the CPU buffer holds 64 spare bytes only;
    the unpinned graph needs 64 of them for `a`. Measured unpinned, the same graph fits."""
    load_checks()
    chk = CHECKS["alloc.cpu_spare_bytes_after_a_compute"]
    rec = Recorder()
    with pytest.raises(UndefinedBehaviour, match=r"\[ALLOC-7\]"):
        chk.scenario(ReferenceTarget(profile), rec, pinned_at_measure=True)
    assert rec.items == [("CPU buffer size", 64), ("nodes pinned", (("a", 0), ("b", 0)))]
    rec = Recorder()
    chk.scenario(ReferenceTarget(profile), rec, pinned_at_measure=False)
    assert ("nodes", (("a", 1), ("b", 1))) in rec.items
