"""rc.8's 64 context slots (WSP_GGML_MAX_CONTEXTS, one table for the whole process) and the C
adapter (conformance/adapters/capi.py).

Each C target holds two contexts. Before, a target dropped without close() kept its two slots
for the life of the process: after 32 such targets in one pytest worker, rc.8's init returned
NULL and the next new_tensor wrote through it (a segfault that took the xdist worker down).
Now a dropped target gives its slots back when it is collected (on a NULL, init runs the cycle
collector once and tries again: a dropped target often sits in a reference cycle), and a NULL
that stays is the typed error `ContextsExhausted`, never a write through NULL.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from ggspec.conformance.errors import ContextsExhausted

#: rc.8's ggml.h: #define WSP_GGML_MAX_CONTEXTS 64
MAX_CONTEXTS = 64


def _free_slots(t: Any) -> int:
    """How many more contexts rc.8's init gives now (each taken, then all freed again)."""
    taken = []
    params = t.ffi.new(f"struct {t.p}init_params *")
    params.mem_size, params.mem_buffer, params.no_alloc = 1024, t.ffi.NULL, True
    while len(taken) <= MAX_CONTEXTS:
        ctx = t.lib.wsp_ggml_init(params[0])
        if ctx == t.ffi.NULL:
            break
        taken.append(ctx)
    for ctx in taken:
        t.lib.wsp_ggml_free(ctx)
    return len(taken)


def test_dropped_targets_give_their_contexts_back(rc8_or_skip: Any) -> None:
    probe = rc8_or_skip.target()
    gc.collect()
    before = _free_slots(probe)
    for _ in range(MAX_CONTEXTS):  # twice the slots there are, had each kept its two
        t = rc8_or_skip.target()
        t.new_tensor(0, [4], "x")
        del t
    gc.collect()
    assert _free_slots(probe) == before
    probe.close()


def test_no_free_slot_is_a_typed_error_not_a_segfault(rc8_or_skip: Any) -> None:
    held = [rc8_or_skip.target()]
    with pytest.raises(ContextsExhausted, match=r"wsp_ggml_init returned NULL: no free context slot"):
        for _ in range(MAX_CONTEXTS):
            held.append(rc8_or_skip.target())
    assert len(held) < MAX_CONTEXTS // 2 + 1  # the error came once the slots ran out
    for t in held:
        t.close()
    gc.collect()
    assert _free_slots(held[0]) >= 2  # closing gave them back: a new target can be made
    rc8_or_skip.target().close()
