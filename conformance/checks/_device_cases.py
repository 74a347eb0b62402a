"""One node of every operation and type pair the suite builds, for the checks that put each on a
device (BACK-15: supports_op tells the truth; the device paths of issue 30, class 7).

A `Case` is an operation (`Target.op`'s kind and params) and its sources: each a type, a shape,
how its payload is made (random values of the type, row indices, or the F16 conversion's hard
values: ties, subnormals, overflow), and a layout (`permuted`: the source is a
`permute(0, 2, 1, 3)` view of a 3-D leaf, rows apart, elements adjacent). Every case is one the
CPU code defines (the reference computes it under both profiles), so what a device claims of it
has one right answer. Quantized same-type copies are left to CORE-53's check (checks/ops.py,
`quantized_copies_copy_blocks`, whose deterministic examples put them on the plain device): in
the builds of that erratum the CPU code's copy loop overflows the destination, a failure of
CORE-53 that a guard tensor catches there, and that here would corrupt the heap.

`truth_of` puts one case on a device and says, in one line that is the same on every truthful
device, whether supports_op and graph_compute agree (BACK-15).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ggspec.reference.quants import fp32_to_fp16, quantize_q4_0, quantize_q8_0
from ggspec.reference.types import GGMLType

from ..errors import DeviceRefused
from ..target import Handle, Target, VDevParams
from ._graphs import Oracle, Scene, place_nodes, raw

F32, F16, I32, Q4_0, Q8_0 = (int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.I32), int(GGMLType.Q4_0),
                             int(GGMLType.Q8_0))


@dataclass(frozen=True)
class Src:
    type: int
    ne: tuple[int, ...]
    #: "values" (random, of the type), "rows:N" (I32 indices below N), "f16 hard" (F32 values at
    #: F16's ties, subnormals and overflow), "none" (a destination: its bytes are not read)
    payload: str = "values"
    permuted: bool = False


@dataclass(frozen=True)
class Case:
    label: str
    kind: str
    srcs: tuple[Src | None, ...]
    params: tuple[float, ...] = ()


def _f16_hard(n: int) -> np.ndarray:
    """F32 values whose F16 conversion is hardest: exact ties (to even, both ways), subnormal
    results (with ties), the smallest subnormal and half of it, overflow, and their negatives."""
    base = [1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 2048.0 + 1.0, 2.0**-24, 2.0**-25, 3 * 2.0**-25, 2.0**-20,
            5 * 2.0**-26, 2.0**-15 + 2.0**-25, 65504.0, 65520.0, 65519.0, 1e-8, 6.1e-5, 0.1, 1.0 / 3]
    vals = np.array(base + [-v for v in base], dtype=np.float32)
    return np.resize(vals, n)


def payload(src: Src, rng: np.random.Generator) -> bytes:
    """The source's bytes (contiguous, logical order)."""
    n = int(np.prod(src.ne))
    if src.payload == "none":
        return bytes(n * 4)  # any bytes: overwritten (a destination) or sized by the type below
    if src.payload.startswith("rows:"):
        return rng.integers(0, int(src.payload[5:]), n, dtype=np.int32).astype("<i4").tobytes()
    x = _f16_hard(n) if src.payload == "f16 hard" else rng.uniform(-2.0, 2.0, n).astype(np.float32)
    if src.type == F32:
        return x.astype("<f4").tobytes()
    if src.type == F16:
        return fp32_to_fp16(x).astype("<u2").tobytes()
    if src.type == I32:
        return rng.integers(-1000, 1000, n, dtype=np.int32).astype("<i4").tobytes()
    if src.type == Q4_0:
        return bytes(quantize_q4_0(x))
    if src.type == Q8_0:
        return bytes(quantize_q8_0(x))
    raise ValueError(f"no payload for type {src.type}")


def _leaf_shape(src: Src) -> tuple[int, ...]:
    """The leaf a permuted source is a view of: dims 1 and 2 swapped."""
    ne = (*src.ne, 1, 1)[:3]
    return (ne[0], ne[2], ne[1]) if src.permuted else src.ne


def build(t: Target, backend: Handle, case: Case, seed: int) -> tuple[Scene, Handle]:
    """The case's leafs in one buffer of `backend` (Scene) and its node (not yet placed)."""
    rng = np.random.default_rng(seed)
    srcs = [s for s in case.srcs if s is not None]
    scene = Scene(t, backend, [(s.type, _leaf_shape(s), payload(s, rng)) for s in srcs],
                  [f"{case.label}.src{i}" for i in range(len(srcs))])
    leafs = iter(scene.leafs)
    handles: list[Handle] = []
    for s in case.srcs:
        if s is None:
            handles.append(None)
            continue
        h = next(leafs)
        handles.append(t.op("permute", [h], (0, 2, 1, 3)) if s.permuted else h)
    node = t.op(case.kind, handles, case.params)
    t.set_name(node, case.label)
    return scene, node


def _s(type_: int, *ne: int, payload: str = "values", permuted: bool = False) -> Src:
    return Src(type_, ne, payload, permuted)


#: every operation and type pair (and the layouts and broadcasts) a device is asked about
CASES: tuple[Case, ...] = (
    *(Case(f"dup {GGMLType(ty).name}", "dup", (_s(ty, 64, 3),)) for ty in (F32, F16, I32)),
    Case("cont F32 permuted", "cont", (_s(F32, 8, 3, 2, permuted=True),)),
    Case("cont F16 permuted", "cont", (_s(F16, 8, 3, 2, permuted=True),)),
    *(Case(f"cpy {GGMLType(a).name} -> {GGMLType(b).name}", "cpy", (_s(a, 64, 2), _s(b, 64, 2, payload="none")))
      for a, b in ((F32, F32), (F32, F16), (F16, F32), (F16, F16), (I32, I32), (F32, Q4_0), (F32, Q8_0))),
    Case("cpy F32 -> F16 at ties and subnormals", "cpy", (_s(F32, 32, 2, payload="f16 hard"),
                                                          _s(F16, 32, 2, payload="none"))),
    Case("cpy F32 -> Q4_0 from F16 hard values", "cpy", (_s(F32, 32, 2, payload="f16 hard"),
                                                         _s(Q4_0, 32, 2, payload="none"))),
    Case("add F32", "add", (_s(F32, 8, 3, 2), _s(F32, 8, 3, 2))),
    Case("add F32, b broadcast over rows", "add", (_s(F32, 8, 3, 2), _s(F32, 8, 1, 1))),
    Case("add F32, a permuted", "add", (_s(F32, 8, 3, 2, permuted=True), _s(F32, 8, 3, 2))),
    Case("add F16 + F16", "add", (_s(F16, 8, 3), _s(F16, 8, 3))),
    Case("add F16 + F32", "add", (_s(F16, 8, 3), _s(F32, 8, 3))),
    Case("mul F32", "mul", (_s(F32, 8, 3, 2), _s(F32, 8, 3, 2))),
    Case("mul F32, b broadcast over rows", "mul", (_s(F32, 8, 3, 2), _s(F32, 8, 1, 2))),
    Case("scale F32", "scale", (_s(F32, 8, 3),), (0.75,)),
    *(Case(f"mul_mat {GGMLType(ty).name} x F32", "mul_mat", (_s(ty, 64, 3, 2), _s(F32, 64, 4, 2)))
      for ty in (F32, F16, Q4_0, Q8_0)),
    Case("mul_mat F32 broadcast over dim 2", "mul_mat", (_s(F32, 16, 3, 2), _s(F32, 16, 2, 4))),
    Case("mul_mat F16 broadcast over dim 2", "mul_mat", (_s(F16, 32, 3, 1), _s(F32, 32, 2, 3))),
    Case("mul_mat Q8_0 broadcast over dim 2", "mul_mat", (_s(Q8_0, 32, 2, 2), _s(F32, 32, 2, 4))),
    Case("mul_mat F32, b permuted", "mul_mat", (_s(F32, 16, 3, 2), _s(F32, 16, 2, 2, permuted=True))),
    *(Case(f"get_rows {GGMLType(ty).name}", "get_rows", (_s(ty, 64, 5), _s(I32, 4, payload="rows:5")))
      for ty in (F32, F16, I32, Q4_0, Q8_0)),
    Case("norm F32", "norm", (_s(F32, 16, 3, 2),), (1e-5,)),
    Case("norm F32 permuted", "norm", (_s(F32, 16, 3, 2, permuted=True),), (1e-5,)),
    Case("soft_max F32", "soft_max", (_s(F32, 16, 3, 2),)),
    Case("soft_max_ext F32 with a mask", "soft_max_ext", (_s(F32, 16, 4, 2), _s(F32, 16, 4)), (0.25,)),
    Case("gelu F32", "gelu", (_s(F32, 16, 3),)),
    Case("silu F32", "silu", (_s(F32, 16, 3),)),
)

def two_plain_device_buffers(t: Target, name: str) -> tuple[Handle, int, list[Handle]]:
    """The plain device named `name` (WebGPU under `--device webgpu`), its alignment and two of
    its buffers of 4 alignments + 192 bytes, cleared to 0x11 and 0x22."""
    backend = t.vdev_init(VDevParams(name=name))
    align = t.buft_get_alignment(t.backend_get_default_buffer_type(backend))
    bufs = [t.backend_alloc_buffer(backend, 4 * align + 192) for _ in range(2)]
    for i, buf in enumerate(bufs):
        t.buffer_clear(buf, 0x11 * (i + 1))
    return backend, align, bufs


def device_tensor(t: Target, buf: Handle, type_: int, ne: tuple[int, ...], offset: int, name: str,
                  payload: bytes = b"") -> Handle:
    """A new tensor allocated in `buf` at `offset` (any: not only the alignment), holding `payload`."""
    x = t.new_tensor(type_, ne, name)
    t.tensor_alloc(buf, x, offset)
    if payload:
        t.tensor_set(x, payload, 0, len(payload))
    return x


def truth_of(t: Target, backend: Handle, case: Case, seed: int, oracle: Oracle) -> str:
    """`case` on `backend`: "truthful" where supports_op is true and graph_compute computes the
    node within its operation's bound of the model's computation from the same source bytes
    (checks/_graphs.py, Oracle), or supports_op is false and graph_compute refuses it and writes nothing;
    else what went wrong, in one line. The buffers it made are freed."""
    scene, node = build(t, backend, case, seed)
    claimed = bool(t.backend_supports_op(backend, node))
    g = t.new_graph(8)
    t.build_forward_expand(g, node)
    buf = place_nodes(t, g, backend)
    before = oracle.sources(t, node)
    untouched = raw(t, node)
    try:
        computed = bool(t.backend_graph_compute(backend, g))
    except DeviceRefused:
        computed = False
    t.backend_synchronize(backend)
    if claimed and computed:
        line = oracle.judge(t, node, before)
        verdict = "truthful" if line.startswith(("within", "bytes as")) else f"claimed, computed wrong: {line}"
    elif claimed:
        verdict = "claimed, then refused by graph_compute"
    elif computed:
        verdict = "not claimed, yet graph_compute computed it"
    else:
        verdict = "truthful" if raw(t, node) == untouched else "refused, yet graph_compute wrote the node"
    t.buffer_free(buf)
    t.buffer_free(scene.buf)
    return verdict
