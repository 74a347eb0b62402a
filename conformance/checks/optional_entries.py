"""Every combination of a backend's optional entries (issue 30, class 4).

A port may have set_tensor_async without get_tensor_async, no synchronize on a device that
completes its work at once, no reset, no init_tensor: the virtual device lacks each optional
entry on its own (`VDevParams.absent`, reference/vdev.py OPTIONAL_ENTRIES; the older switches
`async_entries`, `cpy_tensor_async`, `buffer_cpy_tensor` and `alloc_pad` stay), every check
that draws a device draws these too, and the check below walks each fallback rule once per
entry, on a device lacking that entry alone (its deterministic examples), and on any drawn
combination. The devices' entry logs are compared as in every check, so a fallback taken where
the entry is there (or an entry called where it is absent) is a difference even when the bytes
agree.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType
from ggspec.reference.vdev import OPTIONAL_ENTRIES
from hypothesis import strategies as st

from ..engine.registry import Recorder, Scenario, check, example, mock_reading
from ..inputs.strategies import DEVICE_NAMES, Placement, TensorSpec, vdev_params
from ..target import Target, VDevParams
from ._setup import async_scene, fill, new_tensor

#: the tensor every example moves: 48 bytes, so that no alignment or padding hides an entry
SPEC = TensorSpec(int(GGMLType.I8), (48,))


def _lacking(*entries: str, lazy: bool = True) -> VDevParams:
    """A device lacking exactly `entries` (lazy where it may be, so that a fallback taken
    instead of a queued entry shows in the order data moves)."""
    return VDevParams(name=DEVICE_NAMES[0], lazy=lazy and "synchronize" not in entries, absent=frozenset(entries))


#: one device per optional entry, lacking it alone; then all present, all absent
ONE_BY_ONE = (*(_lacking(e) for e in OPTIONAL_ENTRIES), _lacking(), _lacking(*OPTIONAL_ENTRIES))


def _with_examples(fn: Scenario) -> Scenario:
    """`@example` once per device of ONE_BY_ONE, in order."""
    for k, device in reversed(list(enumerate(ONE_BY_ONE))):
        fn = example(device=device, seed=k)(fn)
    return fn


@_with_examples
@check("TDATA-13", "BACK-6", "BUF-7", "BUF-13", "COPY-10", device=vdev_params, seed=st.integers(0, 2**32 - 1))
def each_fallback_alone(t: Target, rec: Recorder, device: VDevParams, seed: int) -> None:
    """On a device lacking any combination of its optional entries (each alone among the
    examples): tensor_alloc calls init_tensor or nothing (BUF-7); set_async and get_async call
    their own entry or are exactly tensor_set / tensor_get (TDATA-13: the set entry decides
    nothing about the get, nor the reverse); synchronize calls the entry or does nothing
    (BACK-6); copy_async from a host tensor goes through set_async, with its fallback
    (COPY-10); buffer_reset calls reset or nothing (BUF-13). Recorded: what is pending after
    each call, the host block of the get, the tensor after the copy, the buffer after reset
    (deterministic: one example per entry)."""
    backend, buf, tensor, n, src, dst = async_scene(t, Placement("vdev", device), SPEC, 0x11, lambda n: fill(n, seed))
    t.tensor_set_async(backend, tensor, src, 0, 0, n)
    rec("pending after set_async", mock_reading(lambda: t.vdev_pending(backend)))
    t.tensor_get_async(backend, tensor, dst, 0, 8, n - 8)
    rec("pending after get_async", mock_reading(lambda: t.vdev_pending(backend)))
    t.backend_synchronize(backend)
    rec("pending after synchronize", mock_reading(lambda: t.vdev_pending(backend)))
    rec("host block of the get", t.host_read(dst, 0, n - 8))
    cpu = t.cpu_init()
    host = new_tensor(t, SPEC, "host")
    t.tensor_alloc(t.backend_alloc_buffer(cpu, n), host, 0)
    t.tensor_set(host, fill(n, seed + 1), 0, n)
    t.tensor_copy_async(backend, host, tensor)
    t.backend_synchronize(backend)
    rec("tensor after copy_async", t.tensor_get(tensor, 0, n))
    t.buffer_reset(buf)
    rec("buffer after reset", t.buffer_bytes(buf))
