"""Views placed in a buffer other than their root's (issue 30, class 3).

A graph allocator places a view of a weight in its own buffer: rc.8's gallocr (and the legacy
allocr) gives every view node the allocator's buffer, whatever buffer holds its root. Data
calls through such a view must still reach the root's bytes through the root's buffer (TDATA-4,
TDATA-8; the async calls and their fallback, TDATA-13; the copies, COPY-6, COPY-12). The
virtual device's entry log, compared by the harness after every example, shows which buffer
each entry receives; the root's and the view's buffers' bytes are recorded.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.strategies import DEVICE_NAMES
from ..target import Handle, Target, VDevParams
from ._setup import fill

I8, F32 = int(GGMLType.I8), int(GGMLType.F32)


def _view_elsewhere(t: Target, how: str, root: Handle, other: Handle, backend: Handle, offset: int) -> Handle:
    """A 1-D view of `root` (24 floats from float `offset`) given buffer `other` by `how`: view_init
    into it, or a graph allocator over it (gallocr through a tensor allocator, the legacy allocr)
    placing a graph that reads the view."""
    view = t.op("view", [root], (24, 4 * offset))
    t.set_name(view, "view")
    if how == "view_init":
        t.view_init(other, view)
        return view
    g = t.new_graph(8)
    t.build_forward_expand(g, t.op("scale", [view], (2.0,)))
    if how == "gallocr":
        talloc = t.tallocr_new_from_buffer(other)
        t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)
    else:
        t.allocr_alloc_graph(t.allocr_new_from_buffer(other), g)
    return view


@example(how="view_init", async_entries=True, offset=3, seed=0)
@example(how="gallocr", async_entries=False, offset=5, seed=1)
@example(how="allocr", async_entries=True, offset=1, seed=2)
@check("TDATA-4", "TDATA-8", "TDATA-13", "COPY-6", "COPY-12", how=st.sampled_from(["view_init", "gallocr", "allocr"]),
       async_entries=st.booleans(), offset=st.integers(0, 40), seed=st.integers(0, 2**32 - 1))
def data_through_a_view_placed_elsewhere(t: Target, rec: Recorder, how: str, async_entries: bool, offset: int,
                                         seed: int) -> None:
    """A root of 64 floats in buffer A of a virtual device, a view of it placed in buffer B of the
    same device (view_init, gallocr or the legacy allocr): set, get, set_async / get_async (the
    entries, or their synchronous fallback without them) and tensor_copy both ways through the
    view reach the root's bytes in A; B keeps its own (deterministic)."""
    params = VDevParams(name=DEVICE_NAMES[0], async_entries=async_entries)
    backend = t.vdev_init(params)
    a, b = t.backend_alloc_buffer(backend, 512), t.backend_alloc_buffer(backend, 512)
    t.buffer_clear(a, 0x11)
    t.buffer_clear(b, 0x22)
    root = t.new_tensor(F32, (64,), "root")
    t.tensor_alloc(a, root, 0)
    view = _view_elsewhere(t, how, root, b, backend, offset)
    rec("the view's buffer is B", t.tensor_buffer(view) == b)
    data = fill(96, seed)
    t.tensor_set(view, data[:40], 4, 40)
    rec("get through the view", t.tensor_get(view, 2, 50))
    mem = t.host_alloc(96)
    t.host_write(mem, 0, data)
    t.tensor_set_async(backend, view, mem, 10, 48, 30)
    t.tensor_get_async(backend, view, mem, 50, 44, 40)
    t.backend_synchronize(backend)
    rec("host after get_async through the view", t.host_read(mem, 0, 96))
    other = t.new_tensor(F32, (24,), "other")
    t.tensor_alloc(b, other, 384)
    t.tensor_copy(view, other)
    t.tensor_set(other, data[:96], 0, 96)
    t.tensor_copy(other, view)
    rec("A", t.buffer_bytes(a))
    rec("B", t.buffer_bytes(b))
