"""BUF: buffers — init, name, free, base, size, init_tensor, alignment and alloc size, clear,
is_host, usage, type and reset."""

from __future__ import annotations

from hypothesis import strategies as st

from ..engine.registry import Recorder, check, mock_reading
from ..inputs.strategies import (
    BufferSource,
    Placement,
    TensorSpec,
    buffer_sources,
    byte_values,
    tensor_specs,
    vdev_params,
)
from ..target import Target
from ._setup import alloc_size, fill_buffer, make_buffer

sizes = st.integers(1, 2048)

#: the checks keep their names `buf.*` (printed reproducers, --select) in this module
CHECK_AREA = "buf"


@check("BUF-1", size=st.integers(0, 1 << 20))
def init_without_get_base(t: Target, rec: Recorder, size: int) -> None:
    """buffer_init with an interface whose get_base entry is NULL aborts."""
    t.buffer_init_without_get_base(size)


@check("BUF-2", source=buffer_sources, size=sizes)
def init_records_type_size_usage(t: Target, rec: Recorder, source: BufferSource, size: int) -> None:
    """A new buffer has the type it was made with and usage ANY; a device's buffer and a
    buffer from a pointer have exactly the size asked for (the CPU type pads: CPU-4)."""
    made = make_buffer(t, source, size)
    expected_type = t.cpu_buffer_type() if made.backend is None else t.backend_get_default_buffer_type(made.backend)
    rec("type", t.buffer_get_type(made.buf) == expected_type)
    rec("usage", t.buffer_usage(made.buf))
    if source.kind != "cpu":
        rec("size", t.buffer_get_size(made.buf))


@check("BUF-3", source=buffer_sources, size=sizes)
def buffer_name(t: Target, rec: Recorder, source: BufferSource, size: int) -> None:
    rec("name", t.buffer_name(make_buffer(t, source, size).buf))


@st.composite
def _buffers_and_order(draw: st.DrawFn) -> tuple[list[tuple[BufferSource, int, int]], list[int]]:
    """One to four buffers to make (source, size, fill seed) and the order to free them in."""
    made = draw(st.lists(st.tuples(buffer_sources, sizes, st.integers(0, 2**32)), min_size=1, max_size=4),
                label="buffers")
    return made, draw(st.permutations(range(len(made))), label="free order")


@check("BUF-4", size=st.sampled_from([0, 1, 64, 4096]), others=st.integers(0, 2))
def free_calls_the_free_entry_once(t: Target, rec: Recorder, size: int, others: int) -> None:
    """buffer_free releases through the buffer's own free_buffer entry exactly once (a CPU
    buffer whose entry counts its calls, beside `others` plain buffers freed first); free(NULL)
    calls nothing."""
    buf = t.buffer_counting_frees(size)
    t.buffer_free(None)
    for _ in range(others):
        t.buffer_free(t.buft_alloc_buffer(t.cpu_buffer_type(), 16))
    rec("free_buffer calls before buffer_free", t.buffer_free_calls(buf))
    t.buffer_free(buf)
    rec("free_buffer calls after buffer_free", t.buffer_free_calls(buf))


@check("BUF-4", plan=_buffers_and_order())
def free_releases_one_buffer(t: Target, rec: Recorder, plan: tuple[list[tuple[BufferSource, int, int]], list[int]]) -> None:
    """free(NULL) does nothing; freeing a buffer leaves every other buffer's bytes alone, and
    the memory under a from_ptr buffer stays its owner's (readable, unchanged)."""
    sources, order = plan
    t.buffer_free(None)
    made = []
    for source, size, seed in sources:
        m = make_buffer(t, source, size)
        fill_buffer(t, m.buf, source, size, seed)
        made.append(m)
    alive = set(order)
    for i in order:
        t.buffer_free(made[i].buf)
        alive.discard(i)
        t.buffer_free(None)
        rec(f"after freeing {i}", {j: t.buffer_bytes(made[j].buf) for j in sorted(alive)})
        mem = made[i].mem
        if mem is not None:
            rec(f"memory under {i}", t.host_read(mem, 0, sources[i][1]))


@check("BUF-5", size=st.integers(0, 1 << 20))
def base_is_never_null(t: Target, rec: Recorder, size: int) -> None:
    """A CPU buffer over a NULL pointer: its get_base answers NULL, and buffer_get_base aborts."""
    buf = t.cpu_buffer_from_ptr(None, size)
    t.buffer_get_base(buf)


@check("BUF-6", source=st.one_of(st.just(BufferSource("from_ptr")), vdev_params.map(lambda p: BufferSource("vdev", p))),
       size=st.integers(0, 1 << 16))
def size_as_recorded(t: Target, rec: Recorder, source: BufferSource, size: int) -> None:
    """get_size answers the size given at init (CPU-4 covers the CPU type's padding)."""
    made = make_buffer(t, source, size)
    rec("size", t.buffer_get_size(made.buf))


@check("BUF-7", source=buffer_sources, spec=tensor_specs(), calls=st.integers(0, 4))
def init_tensor_is_optional(t: Target, rec: Recorder, source: BufferSource, spec: TensorSpec, calls: int) -> None:
    """buffer_init_tensor calls a device buffer's init_tensor entry each time; a CPU buffer has
    none, and nothing changes."""
    made = make_buffer(t, source, alloc_size(spec, Placement("vdev" if source.kind == "vdev" else "cpu", source.vdev)))
    tensor = t.new_tensor(spec.type, spec.ne, "t")
    t.tensor_alloc(made.buf, tensor, 0)
    before = t.buffer_bytes(made.buf)
    for _ in range(calls):
        t.buffer_init_tensor(made.buf, tensor)
    if source.kind == "vdev":
        rec("init_tensor calls", mock_reading(lambda: t.vdev_counters(made.buf)[0]))
    rec("bytes unchanged", t.buffer_bytes(made.buf) == before)
    rec("tensor", t.tensor_info(tensor))


@check("BUF-8", source=buffer_sources, size=sizes, specs=st.lists(tensor_specs(), min_size=1, max_size=3))
def alignment_and_alloc_size_from_the_type(t: Target, rec: Recorder, source: BufferSource, size: int,
                                           specs: list[TensorSpec]) -> None:
    made = make_buffer(t, source, size)
    buft = t.buffer_get_type(made.buf)
    rec("alignment", t.buffer_get_alignment(made.buf))
    rec("alignment is the type's", t.buffer_get_alignment(made.buf) == t.buft_get_alignment(buft))
    for i, spec in enumerate(specs):
        tensor = t.new_tensor(spec.type, spec.ne, f"t{i}")
        rec(f"alloc size {i}", t.buffer_get_alloc_size(made.buf, tensor))
        rec(f"alloc size {i} is the type's", t.buffer_get_alloc_size(made.buf, tensor) == t.buft_get_alloc_size(buft, tensor))


@check("BUF-9", source=buffer_sources, size=sizes, values=st.lists(byte_values, min_size=1, max_size=3),
       seed=st.integers(0, 2**32))
def clear_sets_every_byte(t: Target, rec: Recorder, source: BufferSource, size: int, values: list[int],
                          seed: int) -> None:
    """After clear(value) every byte of the buffer reads value."""
    made = make_buffer(t, source, size)
    fill_buffer(t, made.buf, source, size, seed)
    for value in values:
        t.buffer_clear(made.buf, value)
        rec(f"after clear({value})", t.buffer_bytes(made.buf))


@check("BUF-10", source=buffer_sources, size=sizes)
def is_host_from_the_type(t: Target, rec: Recorder, source: BufferSource, size: int) -> None:
    made = make_buffer(t, source, size)
    rec("is_host", t.buffer_is_host(made.buf))
    rec("is_host is the type's", t.buffer_is_host(made.buf) == t.buft_is_host(t.buffer_get_type(made.buf)))


_usages = st.one_of(st.sampled_from([0, 1, 7]), st.integers(0, 2**32 - 1))


@check("BUF-11", usage=st.just(7))
def set_usage_stores_an_unnamed_value(t: Target, rec: Recorder, usage: int) -> None:
    """set_usage(7) stores 7: the field takes any value of the enum's C type (deterministic)."""
    buf = t.buft_alloc_buffer(t.cpu_buffer_type(), 64)
    t.buffer_set_usage(buf, usage)
    rec("usage", t.buffer_usage(buf))
    t.buffer_free(buf)


@check("BUF-11", source=buffer_sources, size=sizes, usages=st.lists(_usages, min_size=1, max_size=5),
       seed=st.integers(0, 2**32))
def set_usage_stores_the_usage(t: Target, rec: Recorder, source: BufferSource, size: int, usages: list[int],
                               seed: int) -> None:
    """set_usage changes the usage field and nothing else (bytes, size, type)."""
    made = make_buffer(t, source, size)
    fill_buffer(t, made.buf, source, size, seed)
    before, buft, n = t.buffer_bytes(made.buf), t.buffer_get_type(made.buf), t.buffer_get_size(made.buf)
    for usage in usages:
        t.buffer_set_usage(made.buf, usage)
        rec("usage", t.buffer_usage(made.buf))
    rec("bytes unchanged", t.buffer_bytes(made.buf) == before)
    rec("size unchanged", t.buffer_get_size(made.buf) == n)
    rec("type unchanged", t.buffer_get_type(made.buf) == buft)


@check("BUF-12", source=buffer_sources, size=sizes, via_backend=st.booleans())
def get_type_as_recorded(t: Target, rec: Recorder, source: BufferSource, size: int, via_backend: bool) -> None:
    """get_type is the type the buffer was made from (through the type or the backend)."""
    if source.kind == "vdev" and via_backend:
        assert source.vdev is not None
        backend = t.vdev_init(source.vdev)
        buf = t.backend_alloc_buffer(backend, size)
        rec("type is the backend's", t.buffer_get_type(buf) == t.backend_get_default_buffer_type(backend))
        return
    if source.kind == "vdev":
        assert source.vdev is not None
        buft = t.backend_get_default_buffer_type(t.vdev_init(source.vdev))
        rec("type is buft", t.buffer_get_type(t.buft_alloc_buffer(buft, size)) == buft)
        return
    made = make_buffer(t, source, size)
    rec("type is the CPU type", t.buffer_get_type(made.buf) == t.cpu_buffer_type())


@check("BUF-13", source=buffer_sources, size=sizes, resets=st.integers(1, 3), seed=st.integers(0, 2**32))
def reset_is_optional(t: Target, rec: Recorder, source: BufferSource, size: int, resets: int, seed: int) -> None:
    """reset calls a device buffer's reset entry each time; a CPU buffer has none. The bytes
    stay as they were."""
    made = make_buffer(t, source, size)
    fill_buffer(t, made.buf, source, size, seed)
    before = t.buffer_bytes(made.buf)
    for _ in range(resets):
        t.buffer_reset(made.buf)
    if source.kind == "vdev":
        rec("reset calls", mock_reading(lambda: t.vdev_counters(made.buf)[1]))
    rec("bytes unchanged", t.buffer_bytes(made.buf) == before)

