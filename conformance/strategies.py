"""Hypothesis strategies for the backend API: types, shapes, views, buffers of both kinds.

Every strategy draws plain, reprable values (dataclasses of ints and strings), so a failing
example prints as a reproducer. Exported for users who test their own backends.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

from reference.types import MODELLED_TYPES, GGMLType, Op, blck_size, type_size
from reference.vdev import ALL_OPS

from .target import VDevParams

#: the element types a scenario's tensors use
DATA_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.I8, GGMLType.I32)
PLAIN_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.I8, GGMLType.I32)


@dataclass(frozen=True)
class TensorSpec:
    """A contiguous tensor to create: type and 1 to 4 extents."""

    type: int
    ne: tuple[int, ...]

    def nbytes(self) -> int:
        n = type_size(GGMLType(self.type)) * self.ne[0] // blck_size(GGMLType(self.type))
        for x in self.ne[1:]:
            n *= x
        return n


@dataclass(frozen=True)
class ViewSpec:
    """A view of a root tensor: extents, strides of dims 1.. and a byte offset."""

    ne: tuple[int, ...]
    nb: tuple[int, ...]
    offset: int

    def nbytes(self, type_: int) -> int:
        t = GGMLType(type_)
        bs, ts = blck_size(t), type_size(t)
        full = list(self.ne) + [1] * (4 - len(self.ne))
        strides = [ts, ts * full[0] // bs] + [0, 0]
        for i, s in enumerate(self.nb, start=1):
            strides[i] = s
        for i in range(max(len(self.ne), 2), 4):
            strides[i] = strides[i - 1] * full[i - 1]
        if bs == 1:
            return ts + sum((full[i] - 1) * strides[i] for i in range(4))
        return full[0] * strides[0] // bs + sum((full[i] - 1) * strides[i] for i in range(1, 4))


@dataclass(frozen=True)
class Placement:
    """Where a buffer comes from: the CPU type, or a virtual device with these parameters."""

    kind: str  # "cpu" | "vdev"
    vdev: VDevParams | None = None


types = st.sampled_from(DATA_TYPES).map(int)
plain_types = st.sampled_from(PLAIN_TYPES).map(int)


@st.composite
def tensor_specs(draw: st.DrawFn, type_: st.SearchStrategy[int] = types, max_dims: int = 4, max_ne: int = 6) -> TensorSpec:
    """A contiguous tensor: ne[0] a whole number of blocks, every extent at least 1."""
    t = draw(type_, label="type")
    dims = draw(st.integers(1, max_dims), label="dims")
    bs = blck_size(GGMLType(t))
    ne0 = bs * draw(st.integers(1, 3 if bs > 1 else max_ne), label="ne0 blocks")
    rest = tuple(draw(st.lists(st.integers(1, max_ne), min_size=dims - 1, max_size=dims - 1), label="ne[1:]"))
    return TensorSpec(t, (ne0, *rest))


@st.composite
def view_specs(draw: st.DrawFn, root: TensorSpec) -> ViewSpec:
    """A view that lies inside `root` (its nbytes span and its contiguous size both fit).

    Quantized roots get 1-d views of whole blocks; plain roots get 1-d to 3-d strided views.
    """
    t = GGMLType(root.type)
    bs, ts = blck_size(t), type_size(t)
    total = root.nbytes()
    if bs > 1:
        blocks = total // ts
        n = draw(st.integers(1, blocks), label="view blocks")
        first = draw(st.integers(0, blocks - n), label="first block")
        return ViewSpec((n * bs,), (), first * ts)
    elems = total // ts
    dims = draw(st.integers(1, 3), label="view dims")
    ne0 = draw(st.integers(1, max(1, min(elems, 8))), label="view ne0")
    ne = [ne0]
    nb: list[int] = []
    span = ne0  # elements spanned so far
    for _ in range(1, dims):
        stride = draw(st.integers(span, span + 3), label="stride (elements)")
        if stride * 1 + span > elems:
            break
        k = draw(st.integers(1, max(1, (elems - span) // stride + 1)), label="extent")
        ne.append(k)
        nb.append(stride * ts)
        span = (k - 1) * stride + span
        if span > elems:
            ne.pop()
            nb.pop()
            span = span - (k - 1) * stride
            break
    contiguous = 1
    for x in ne:
        contiguous *= x
    room = elems - max(span, contiguous)
    off = draw(st.integers(0, max(0, room)), label="view offset (elements)")
    return ViewSpec(tuple(ne), tuple(nb), off * ts)


vdev_params = st.builds(
    VDevParams,
    name=st.sampled_from(["VDEV", "Metal", "GPU0"]),
    alignment=st.sampled_from([1, 16, 32, 256]),
    lazy=st.booleans(),
    async_entries=st.booleans(),
    buffer_cpy_tensor=st.booleans(),
    cpy_tensor_async=st.booleans(),
    alloc_pad=st.sampled_from([0, 0, 64, 512]),
    ops=st.just(ALL_OPS),
)

placements = st.one_of(
    st.just(Placement("cpu")),
    vdev_params.map(lambda p: Placement("vdev", p)),
)

byte_values = st.integers(0, 255)


def payload(n: int) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=n, max_size=n)


@dataclass(frozen=True)
class BufferSource:
    """How a buffer is made: "cpu" (the CPU type's alloc_buffer), "from_ptr" (a CPU buffer over
    host memory the scenario owns) or "vdev" (a virtual device with these parameters)."""

    kind: str
    vdev: VDevParams | None = None


buffer_sources = st.one_of(
    st.just(BufferSource("cpu")),
    st.just(BufferSource("from_ptr")),
    vdev_params.map(lambda p: BufferSource("vdev", p)),
)

#: every type the model gives traits to (CORE-1), for scenarios about types themselves
all_types = st.sampled_from(MODELLED_TYPES).map(int)

#: printable ASCII without NUL: what a C string can carry unchanged
ascii_text = st.characters(min_codepoint=32, max_codepoint=126)


def ascii_names(min_size: int = 0, max_size: int = 40, exclude: str = "") -> st.SearchStrategy[str]:
    """Names a C API takes as `const char *`: printable ASCII (minus `exclude`)."""
    alphabet = st.characters(min_codepoint=32, max_codepoint=126, exclude_characters=exclude) if exclude else ascii_text
    return st.text(alphabet=alphabet, min_size=min_size, max_size=max_size)


def vdev_params_with(**fixed: object) -> st.SearchStrategy[VDevParams]:
    """`vdev_params` with some knobs fixed (e.g. `buffer_cpy_tensor=True`)."""
    return vdev_params.map(lambda p: replace(p, **fixed))  # type: ignore[arg-type]


#: a virtual device that answers supports_op for a random set of ops (BACK-7)
op_sets = st.frozensets(st.sampled_from(list(Op)[: Op.COUNT]), max_size=12)


@st.composite
def offset_view_specs(draw: st.DrawFn, root: TensorSpec) -> ViewSpec:
    """A view inside `root` that starts at least one element (block) past the root's start.

    `root` must hold at least two elements (blocks). Built from `view_specs` of the part of the
    root after a drawn first element, so the same shapes occur, only shifted.
    """
    t = GGMLType(root.type)
    bs, ts = blck_size(t), type_size(t)
    units = root.nbytes() // ts  # elements, or blocks for quantized types
    if units < 2:
        raise ValueError(f"offset_view_specs needs a root of two or more elements, got {root}")
    first = draw(st.integers(1, units - 1), label="first element (block) of the view")
    rest = draw(view_specs(TensorSpec(root.type, ((units - first) * bs,))), label="view of the rest")
    return ViewSpec(rest.ne, rest.nb, rest.offset + first * ts)


def roots_with_room(type_: st.SearchStrategy[int] = types) -> st.SearchStrategy[TensorSpec]:
    """Contiguous tensors of two or more elements (blocks), so a view can start past 0."""
    return tensor_specs(type_).filter(lambda r: r.nbytes() >= 2 * type_size(GGMLType(r.type)))


@dataclass(frozen=True)
class CopyRoute:
    """Where the source and the destination of a copy live.

    `src` / `dst` are "cpu" or "vdev". `same_device`: both on one backend (one CPU backend, or
    one virtual device whose parameters are `src_dev`); `same_buffer`: both tensors in one
    buffer of it. Otherwise each side has its own backend (`src_dev`, `dst_dev` for devices).
    """

    src: str
    dst: str
    same_device: bool
    same_buffer: bool
    src_dev: VDevParams | None
    dst_dev: VDevParams | None

    @property
    def label(self) -> str:
        where = "one buffer" if self.same_buffer else "one device" if self.same_device else "two devices"
        return f"{self.src}>{self.dst} ({where})"


#: the routes a copy can take; `same_device` needs src == dst
ROUTES = ("cpu>cpu", "cpu>vdev", "vdev>cpu", "vdev>vdev same", "vdev>vdev other")


@st.composite
def copy_routes(
    draw: st.DrawFn,
    routes: tuple[str, ...] = ROUTES,
    src_dev: st.SearchStrategy[VDevParams] = vdev_params,
    dst_dev: st.SearchStrategy[VDevParams] | None = None,
) -> CopyRoute:
    """A copy route from `routes`; devices are drawn from `src_dev` / `dst_dev` (default the same)."""
    route = draw(st.sampled_from(routes), label="route")
    kinds, _, how = route.partition(" ")
    src, dst = kinds.split(">")
    same_device = how == "same" or (src == dst == "cpu" and draw(st.booleans(), label="one CPU backend"))
    same_buffer = same_device and draw(st.booleans(), label="one buffer")
    sdev = draw(src_dev, label="source device") if src == "vdev" else None
    if dst == "vdev":
        ddev = sdev if same_device else draw(dst_dev if dst_dev is not None else src_dev, label="destination device")
    else:
        ddev = None
    return CopyRoute(src, dst, same_device, same_buffer, sdev, ddev)


__all__ = [
    "DATA_TYPES",
    "ROUTES",
    "BufferSource",
    "CopyRoute",
    "Op",
    "Placement",
    "TensorSpec",
    "ViewSpec",
    "all_types",
    "ascii_names",
    "ascii_text",
    "buffer_sources",
    "byte_values",
    "copy_routes",
    "offset_view_specs",
    "op_sets",
    "payload",
    "placements",
    "plain_types",
    "roots_with_room",
    "tensor_specs",
    "types",
    "vdev_params",
    "vdev_params_with",
    "view_specs",
]
