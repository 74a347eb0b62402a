"""BACK: backends — name, free, default buffer type, alloc_buffer, alignment, synchronize,
supports_op, and the ordering a device backend must keep."""

from __future__ import annotations

import math
import random
import struct
from dataclasses import replace

from ggspec.reference.types import GGMLType, Op
from hypothesis import strategies as st

from ..engine.registry import NotObservable, Recorder, check, example, mock_reading
from ..inputs.strategies import (
    DEVICE_NAMES,
    Placement,
    TensorSpec,
    ascii_names,
    op_sets,
    placements,
    tensor_specs,
    vdev_params,
    vdev_params_with,
)
from ..target import Target, VDevParams
from ._device_cases import CASES, device_tensor, truth_of, two_plain_device_buffers
from ._graphs import Oracle
from ._setup import async_scene, backend_for, fill, placed, run_profile

named_placements = st.one_of(
    st.just(Placement("cpu")),
    st.builds(lambda p, name: Placement("vdev", replace(p, name=name)), vdev_params, ascii_names(min_size=1, max_size=40)),
)


@check("BACK-1", placement=named_placements)
def backend_name(t: Target, rec: Recorder, placement: Placement) -> None:
    """"NULL" for no backend; otherwise the get_name entry."""
    rec("name of NULL", t.backend_name(None))
    rec("name", t.backend_name(backend_for(t, placement)))


@check("BACK-2", backends=st.lists(placements, min_size=0, max_size=4), keep_buffers=st.booleans())
def backend_free(t: Target, rec: Recorder, backends: list[Placement], keep_buffers: bool) -> None:
    """free(NULL) does nothing; freeing backends (in the order made) leaves the rest working,
    and CPU buffers allocated from them (the CPU type is static) stay usable."""
    t.backend_free(None)
    made = [backend_for(t, p) for p in backends]
    bufs = []
    if keep_buffers:
        for i, (b, p) in enumerate(zip(made, backends, strict=True)):
            if p.kind == "cpu":
                buf = t.backend_alloc_buffer(b, 16)
                t.buffer_clear(buf, i + 1)
                bufs.append(buf)
    for i, b in enumerate(made):
        t.backend_free(b)
        t.backend_free(None)
        rec(f"after freeing {i}", [t.backend_name(x) for x in made[i + 1 :]])
    rec("buffers", [t.buffer_bytes(buf) for buf in bufs])


@check("BACK-3", placement=placements)
def default_buffer_type(t: Target, rec: Recorder, placement: Placement) -> None:
    """The get_default_buffer_type entry: the CPU type for a CPU backend, the device's own
    type (its name, not host memory) for a device; the same type on every call."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    rec("is the CPU type", buft == t.cpu_buffer_type())
    rec("stable", t.backend_get_default_buffer_type(backend) == buft)
    rec("name", t.buft_name(buft))
    rec("is_host", t.buft_is_host(buft))


@check("BACK-4", placement=placements, size=st.integers(0, 4096))
def alloc_buffer_uses_the_default_type(t: Target, rec: Recorder, placement: Placement, size: int) -> None:
    """backend_alloc_buffer is buft_alloc_buffer of the default type: same type, size, name
    and usage as a buffer allocated from that type directly."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    a, b = t.backend_alloc_buffer(backend, size), t.buft_alloc_buffer(buft, size)
    rec("type is the default", t.buffer_get_type(a) == buft)
    rec("same size", t.buffer_get_size(a) == t.buffer_get_size(b))
    rec("same name", t.buffer_name(a) == t.buffer_name(b))
    rec("usage", t.buffer_usage(a))


@check("BACK-5", placement=placements)
def alignment_of_the_default_type(t: Target, rec: Recorder, placement: Placement) -> None:
    backend = backend_for(t, placement)
    rec("alignment", t.backend_get_alignment(backend))
    rec("is the type's", t.backend_get_alignment(backend) == t.buft_get_alignment(t.backend_get_default_buffer_type(backend)))


@check("BACK-6", placement=st.one_of(st.just(Placement("cpu")), placements), spec=tensor_specs(), seed=st.integers(0, 2**32),
       times=st.integers(1, 3))
def synchronize_is_optional(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, seed: int,
                            times: int) -> None:
    """synchronize on a backend without the entry (CPU) does nothing; with one (a device) it
    runs the entry, which completes what was queued. Calling it again changes nothing."""
    backend, buf, tensor = placed(t, placement, spec)
    t.buffer_clear(buf, 0)
    n = t.nbytes(tensor)
    mem = t.host_alloc(n)
    t.host_write(mem, 0, fill(n, seed))
    t.tensor_set_async(backend, tensor, mem, 0, 0, n)
    for i in range(times):
        t.backend_synchronize(backend)
        if placement.kind == "vdev":
            rec(f"pending after synchronize {i}", mock_reading(lambda: t.vdev_pending(backend)))
        rec(f"buffer after synchronize {i}", t.buffer_bytes(buf))


@check("BACK-7", ops=op_sets, asked=st.lists(st.sampled_from(list(Op)[: Op.COUNT]), min_size=1, max_size=8))
def supports_op_is_the_entry(t: Target, rec: Recorder, ops: frozenset[Op], asked: list[Op]) -> None:
    """A device's supports_op entry answers for its configured set of ops (CPU-11 covers the
    CPU backend's answers)."""
    backend = t.vdev_init(VDevParams(ops=ops))
    for op in asked:
        node = t.new_tensor(0, (4,), "node")
        t.set_op(node, int(op), [])
        rec(f"supports {op.name}", t.backend_supports_op(backend, node))


@st.composite
def _async_program(draw: st.DrawFn) -> list[tuple[str, int, int, int]]:
    """A sequence of ("set" | "get", offset, size, seed) on one tensor (offsets and sizes as
    fractions of its nbytes, resolved in the scenario)."""
    steps = draw(st.lists(st.tuples(st.sampled_from(["set", "get"]), st.integers(0, 1 << 16), st.integers(0, 1 << 16),
                                    st.integers(0, 2**32)), min_size=1, max_size=6), label="program")
    return steps


@check("BACK-8", "BACK-9", device=vdev_params_with(async_entries=True), spec=tensor_specs(), program=_async_program())
def device_keeps_submission_order(t: Target, rec: Recorder, device: VDevParams, spec: TensorSpec,
                                  program: list[tuple[str, int, int, int]]) -> None:
    """Overlapping set_async / get_async on one tensor, without synchronizing in between: each
    get reads what the sets before it wrote; after synchronize every host block of a get is
    written and nothing is pending."""
    backend, buf, tensor = placed(t, Placement("vdev", device), spec)
    t.buffer_clear(buf, 0)
    n = t.nbytes(tensor)
    reads = []
    for kind, a, b, seed in program:
        offset = a % (n + 1)
        size = b % (n - offset + 1)
        mem = t.host_alloc(max(size, 1))
        if kind == "set":
            t.host_write(mem, 0, fill(size, seed))
            t.tensor_set_async(backend, tensor, mem, 0, offset, size)
        else:
            t.host_write(mem, 0, b"\xee" * size)
            t.tensor_get_async(backend, tensor, mem, 0, offset, size)
            reads.append((mem, size))
    t.backend_synchronize(backend)
    rec("pending", mock_reading(lambda: t.vdev_pending(backend)))
    rec("reads", [t.host_read(mem, 0, size) for mem, size in reads])
    rec("buffer", t.buffer_bytes(buf))


@check("BACK-9", device=vdev_params_with(async_entries=True), spec=tensor_specs(), seed=st.integers(0, 2**32))
def synchronize_completes_pending_work(t: Target, rec: Recorder, device: VDevParams, spec: TensorSpec, seed: int) -> None:
    """After synchronize the bytes of a set_async are in the buffer, the host block of a
    get_async is written, and the queue is empty; before it a lazy device has touched neither.
    What happened before synchronize is the mock's to define (its `lazy` knob); of a real device
    (WebGPU under `--device webgpu`, which reads back at synchronize) the API promises only what
    holds after it, so there the host block before synchronize is not observable, on both sides."""
    backend, buf, tensor, n, src, dst = async_scene(t, Placement("vdev", device), spec, 0x22, lambda n: fill(n, seed))
    t.tensor_get_async(backend, tensor, dst, 0, 0, n)
    t.tensor_set_async(backend, tensor, src, 0, 0, n)
    pending = mock_reading(lambda: t.vdev_pending(backend))
    rec("pending before", pending)
    on_the_mock = not isinstance(pending, NotObservable)
    rec("host block of the get before", t.host_read(dst, 0, n) if on_the_mock
        else NotObservable("a get_async's host block before synchronize, on a device other than the mock"))
    t.backend_synchronize(backend)
    rec("pending after", mock_reading(lambda: t.vdev_pending(backend)))
    rec("host block of the get after", t.host_read(dst, 0, n))
    rec("buffer after", t.buffer_bytes(buf))


@check("BACK-8", "BACK-9", "TDATA-4", seed=st.integers(0, 2**32))
def sync_set_runs_the_queue_first(t: Target, rec: Recorder, seed: int) -> None:
    """On a lazy virtual device, a set_async of 16 bytes then a synchronous tensor_set of other
    bytes to the same range: the device's synchronous buffer calls run the queue first
    (spec/backend.md, the virtual device), so the queue is empty after tensor_set and the buffer
    ends with tensor_set's bytes, also after synchronize (vdev.c:220, the drain deleted,
    survived a mutation run) (deterministic)."""
    spec = TensorSpec(int(GGMLType.I8), (16,))
    backend, buf, tensor = placed(t, Placement("vdev", VDevParams(lazy=True, async_entries=True)), spec)
    t.buffer_clear(buf, 0x22)
    queued = fill(16, seed)
    written = bytes(b ^ 0xFF for b in queued)
    src = t.host_alloc(16)
    t.host_write(src, 0, queued)
    t.tensor_set_async(backend, tensor, src, 0, 0, 16)
    rec("pending before tensor_set", mock_reading(lambda: t.vdev_pending(backend)))
    t.tensor_set(tensor, written, 0, 16)
    rec("pending after tensor_set", mock_reading(lambda: t.vdev_pending(backend)))
    t.backend_synchronize(backend)
    rec("buffer after synchronize", t.buffer_bytes(buf)[:16])
    rec("tensor_set's bytes", t.tensor_get(tensor, 0, 16) == written)


# --- BACK-15: supports_op tells the truth (on whatever device the run selects) -----------------------


@example(seed=0)
@check("BACK-15", "BACK-7", seed=st.sampled_from([0, 1, 2]))
def supports_op_tells_the_truth(t: Target, rec: Recorder, seed: int) -> None:
    """Every operation and type pair the suite builds (checks/_device_cases.py), one node each on
    a plain device (the mock; WebGPU under `--device webgpu`): where supports_op is true,
    graph_compute computes it, within the operation's own bound of the reference model's
    computation from the same source bytes (checks/_graphs.py, Oracle); where it is false, graph_compute
    refuses it and writes nothing. The record is the same on every truthful device, whatever it
    claims: no copy of any device's predicate decides (deterministic). Every example puts every
    case; three seeds of values are enough to vary them."""
    backend = t.vdev_init(VDevParams(name=DEVICE_NAMES[0]))
    oracle = Oracle(run_profile(t))
    for case in CASES:
        rec(f"{case.label}: supports_op and graph_compute", truth_of(t, backend, case, seed, oracle))


# --- the plain device's paths, drawn on purpose (issue 30, class 7) ---------------------------------


@example(shift=1, seed=0)
@example(shift=3, seed=1)
@check("BACK-8", "BACK-9", shift=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def device_paths_on_the_plain_device(t: Target, rec: Recorder, shift: int, seed: int) -> None:
    """The plain device (eager, every entry, no pad, the device's own alignment; WebGPU under
    `--device webgpu`) through the paths random draws reach rarely: a set and a get at offsets and
    sizes that are not whole words, an unaligned set_async read back by get_async, and two
    get_async whose host blocks overlap (the later lands last, BACK-8) (deterministic; the copies
    between its buffers: copy.copies_on_the_plain_device)."""
    i8 = int(GGMLType.I8)
    backend, align, bufs = two_plain_device_buffers(t, DEVICE_NAMES[0])
    data = fill(160, seed)
    x = device_tensor(t, bufs[0], i8, (96,), align, "x")
    y = device_tensor(t, bufs[1], i8, (96,), 2 * align, "y")
    t.tensor_set(x, data[:37], shift, 37)
    rec("an unaligned get", t.tensor_get(x, shift + 1, 29))
    mem, out = t.host_alloc(96), t.host_alloc(96)
    t.host_write(mem, 0, data[60:156])
    t.host_write(out, 0, bytes(96))
    t.tensor_set_async(backend, y, mem, 0, shift, 50)
    t.tensor_get_async(backend, y, out, 0, shift + 2, 41)
    t.tensor_get_async(backend, x, out, 8, 3, 30)  # overlaps the first's host block: lands after it
    t.backend_synchronize(backend)
    rec("host memory after two get_async", t.host_read(out, 0, 96))
    for i, buf in enumerate(bufs):
        rec(f"buffer {i}", t.buffer_bytes(buf))


@example(seed=0)
@check("BACK-15", seed=st.integers(0, 2**32 - 1))
def three_buffers_on_the_plain_device(t: Target, rec: Recorder, seed: int) -> None:
    """Nodes whose three tensors live in three distinct buffers of the plain device (WebGPU under
    `--device webgpu`): ADD with a broadcast `b`, MUL_MAT broadcasting over dim 2, each judged from
    its own inputs (checks/_graphs.py, Oracle) where supports_op claims it (deterministic)."""
    f32 = int(GGMLType.F32)
    backend = t.vdev_init(VDevParams(name=DEVICE_NAMES[0]))
    align = t.buft_get_alignment(t.backend_get_default_buffer_type(backend))
    oracle = Oracle(run_profile(t))
    rng = random.Random(seed)

    def floats(n: int) -> bytes:
        return struct.pack(f"<{n}f", *(rng.uniform(-2.0, 2.0) for _ in range(n)))

    for label, kind, a_ne, b_ne in (("add, b broadcast", "add", (8, 3, 2), (8, 1, 2)),
                                    ("mul_mat broadcast over dim 2", "mul_mat", (16, 3, 2), (16, 2, 4))):
        three = [t.backend_alloc_buffer(backend, 4 * 16 * 3 * 3 + align) for _ in range(3)]
        a = device_tensor(t, three[0], f32, a_ne, 0, f"{label}.a", floats(math.prod(a_ne)))
        b = device_tensor(t, three[1], f32, b_ne, 0, f"{label}.b", floats(math.prod(b_ne)))
        node = t.op(kind, [a, b], [])
        t.set_name(node, label)
        t.tensor_alloc(three[2], node, 0)
        g = t.new_graph(4)
        t.build_forward_expand(g, node)
        line = None
        if t.backend_supports_op(backend, node):  # one it refuses is supports_op_tells_the_truth's to judge
            before = oracle.sources(t, node)
            t.backend_graph_compute(backend, g)
            t.backend_synchronize(backend)
            line = oracle.judge(t, node, before)
        rec(f"{label}: three buffers", "as the model computes it from the same inputs"
            if line is None or line.startswith(("within", "bytes as")) else line)
        for buf in three:
            t.buffer_free(buf)
