"""Hypothesis strategies for the backend API: types, shapes, views, buffers of both kinds.

Every strategy draws plain, reprable values (dataclasses of ints and strings), so a failing
example prints as a reproducer. Exported for users who test their own backends.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ggspec.reference.types import MODELLED_TYPES, GGMLType, Op, blck_size, type_size
from ggspec.reference.vdev import ALL_OPS, OPTIONAL_ENTRIES, consistent
from hypothesis import strategies as st

from ..target import VDevParams
from .graph_strategies import GRAPH_OPS, graph_specs
from .graphspec import GraphSpec, Leaf, Node

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


#: optional entries a virtual device lacks, each on its own (VDevParams.absent)
optional_entries_absent = st.frozensets(st.sampled_from(OPTIONAL_ENTRIES))

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
    # each optional entry on its own (issue 30, class 4): set_async without get_async and the
    # reverse, no synchronize (an eager device), no reset, no init_tensor; shrinks to all present
    absent=optional_entries_absent,
).map(consistent)

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
    return vdev_params.map(lambda p: consistent(replace(p, **fixed)))  # type: ignore[arg-type]


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


# --- small graphs (the allocators, graph copy and graph computation) --------------------------


@dataclass
class _SmallValue:
    """A tensor a drawn graph can feed to later nodes: its name, extents, whether it is
    contiguous (views from transpose are not) and how many ops read it."""

    name: str
    ne: tuple[int, ...]
    contiguous: bool = True


_WEIGHT_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0)


@st.composite
def small_graphs(draw: st.DrawFn, max_nodes: int = 10, quantized: bool = True, weights: bool = True,
                 max_rows: int = 3) -> GraphSpec:
    """A small valid graph over F32 activations (conformance/inputs/graphspec.py), for the checks of
    the allocators, graph copy and graph computation.

    Inputs (leafs with place -1) are left for the graph allocator or the scenario to place;
    MUL_MAT weights (F32, F16 and, with `quantized`, Q4_0 / Q8_0 when their rows allow) are
    placed in a buffer of backend 0 with WEIGHTS usage when `weights`, else are inputs too.
    Element-wise ops (which ggml-alloc may compute in place, ALLOC-12), view ops (reshape,
    transpose, view), cpy into an input, get_rows and mul_mat are mixed; a non-contiguous
    tensor is read only by cont and transpose. The outputs are the nodes no other node reads,
    plus sometimes one that is read. Inputs have up to `max_rows` rows (more rows spread a
    node over more threads).
    """
    leafs: list[Leaf] = []
    nodes: list[Node] = []
    values: list[_SmallValue] = []
    read: set[str] = set()
    seed = draw(st.integers(0, 2**16), label="data seed")

    def new_leaf(prefix: str, type_: GGMLType, ne: tuple[int, ...], place: int = -1, int_range: int = 1) -> str:
        name = f"{prefix}{len(leafs)}"
        leafs.append(Leaf(name, int(type_), ne, place, place >= 0, seed + len(leafs), int_range))
        return name

    def add(op: str, srcs: tuple[str | None, ...], ne: tuple[int, ...], params: tuple[float, ...] = (),
            contiguous: bool = True) -> None:
        name = f"n{len(nodes)}"
        nodes.append(Node(name, op, srcs, params))
        read.update(s for s in srcs if s is not None)
        values.append(_SmallValue(name, ne, contiguous))

    ne0s = st.sampled_from([4, 8, 32])
    for _ in range(draw(st.integers(1, 2), label="inputs")):
        ne = (draw(ne0s, label="ne0"), draw(st.integers(1, max_rows), label="ne1"))
        values.append(_SmallValue(new_leaf("in", GGMLType.F32, ne), ne))
    n_nodes = draw(st.integers(1, max_nodes), label="nodes")
    for _ in range(n_nodes):
        dense = [v for v in values if v.contiguous]
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "mul_mat", "view", "cpy", "get_rows"])
                    if dense else st.just("cont"), label="op kind")
        if kind == "cont":
            a = draw(st.sampled_from(values), label="a")
            add(draw(st.sampled_from(["cont", "dup", "transpose"]), label="op"), (a.name,), a.ne)
            if nodes[-1].op == "transpose":
                values[-1] = _SmallValue(values[-1].name, (a.ne[1], a.ne[0]) if len(a.ne) == 2 else a.ne,
                                    contiguous=not a.contiguous and len(a.ne) == 2)
            continue
        a = draw(st.sampled_from(dense), label="a")
        if kind == "unary":
            op = draw(st.sampled_from(["gelu", "silu", "scale", "norm", "soft_max_ext", "dup", "cont"]), label="op")
            params: tuple[float, ...] = ()
            srcs: tuple[str | None, ...] = (a.name,)
            if op == "scale":
                params = (draw(st.sampled_from([0.5, -2.0, 0.125]), label="s"),)
            elif op == "norm":
                params = (1e-5,)
            elif op == "soft_max_ext":
                params, srcs = (draw(st.sampled_from([1.0, 0.25]), label="scale"),), (a.name, None)
            add(op, srcs, a.ne, params)
        elif kind == "binary":
            op = draw(st.sampled_from(["add", "mul"]), label="op")
            same = [v for v in dense if v.ne == a.ne]
            how = draw(st.sampled_from(["value", "input", "row"]), label="b")
            if how == "value":
                b = draw(st.sampled_from(same), label="b value").name
            else:
                shape = a.ne if how == "input" or len(a.ne) == 1 else (a.ne[0], 1)
                b = new_leaf("in", GGMLType.F32, shape)
            add(op, (a.name, b), a.ne)
        elif kind == "mul_mat":
            k = a.ne[0]
            m = draw(st.sampled_from([1, 3, 8, 4 * max_rows]), label="rows of the weight")
            allowed = [t for t in _WEIGHT_TYPES if quantized or t in (GGMLType.F32, GGMLType.F16)]
            allowed = [t for t in allowed if k % blck_size(t) == 0]
            wt = draw(st.sampled_from(allowed), label="weight type")
            w = new_leaf("w", wt, (k, m), place=0 if weights else -1)
            n = a.ne[1] if len(a.ne) > 1 else 1
            add("mul_mat", (w, a.name), (m, n) if len(a.ne) > 1 else (m,))
        elif kind == "view":
            n = 1
            for x in a.ne:
                n *= x
            how = draw(st.sampled_from(["reshape", "transpose", "view1d", "rows"] if len(a.ne) == 2
                                       else ["reshape", "view1d"]), label="view op")
            if how == "reshape":
                shape = (n,) if len(a.ne) == 2 else ((a.ne[0] // 2, 2) if a.ne[0] % 2 == 0 else (a.ne[0], 1))
                add("reshape", (a.name,), shape, tuple(float(x) for x in shape))
            elif how == "transpose":
                add("transpose", (a.name,), (a.ne[1], a.ne[0]), contiguous=False)
            elif how == "view1d":
                size = draw(st.integers(1, n), label="elements")
                first = draw(st.integers(0, n - size), label="first element")
                add("view", (a.name,), (size,), (float(size), float(4 * first)))
            else:
                rows = draw(st.integers(1, a.ne[1]), label="rows")
                first = draw(st.integers(0, a.ne[1] - rows), label="first row")
                add("view", (a.name,), (a.ne[0], rows), (float(a.ne[0]), float(rows), float(4 * a.ne[0]),
                                                         float(4 * a.ne[0] * first)))
        elif kind == "cpy":
            dst = new_leaf("in", GGMLType.F32, a.ne)
            add("cpy", (a.name, dst), a.ne)
        else:  # get_rows
            rows_of = a if len(a.ne) == 2 else None
            if rows_of is None:
                add("cont", (a.name,), a.ne)
                continue
            k = draw(st.integers(1, 4), label="indices")
            idx = new_leaf("idx", GGMLType.I32, (k,), int_range=a.ne[1])
            add("get_rows", (a.name, idx), (a.ne[0], k))
    sinks = [n.name for n in nodes if n.name not in read]
    extra = draw(st.sampled_from([None, *[n.name for n in nodes if n.name in read]]), label="extra output")
    outputs = tuple(sinks + ([extra] if extra is not None else []))
    used = tuple(leaf for leaf in leafs if leaf.name in read)  # an input no node reads is not in the graph
    return GraphSpec(used, tuple(nodes), outputs, 256)


__all__ = [
    "DATA_TYPES",
    "GRAPH_OPS",
    "graph_specs",
    "GraphSpec",
    "Leaf",
    "Node",
    "ROUTES",
    "BufferSource",
    "CopyRoute",
    "Op",
    "Placement",
    "PIN_MODES",
    "SCHED_STEPS",
    "SchedCase",
    "SchedGraph",
    "SchedSetup",
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
    "sched_cases",
    "sched_devices",
    "sched_graphs",
    "sched_setups",
    "small_graphs",
    "tensor_specs",
    "types",
    "vdev_params",
    "vdev_params_with",
    "view_specs",
]


# --- the scheduler: backend set-ups and graphs ------------------------------------------------

#: names of the virtual devices of a scheduler set-up, in priority order (the CPU comes last)
DEVICE_NAMES = ("GPU0", "Metal", "CUDA1", "VK2", "SYCL3", "D5", "D6", "D7", "D8", "D9", "D10", "D11", "D12", "D13",
                "D14")


@dataclass(frozen=True)
class SchedSetup:
    """A scheduler's backends: virtual devices in priority order, then the CPU (the fallback)."""

    devices: tuple[VDevParams, ...]

    @property
    def n_backends(self) -> int:
        return len(self.devices) + 1

    @property
    def cpu(self) -> int:
        """The CPU backend's index: the last."""
        return len(self.devices)


#: the computing ops of the scheduler's graphs; a device may refuse some (SCHED-33)
SCHED_COMPUTE_OPS = (Op.MUL_MAT, Op.ADD, Op.MUL, Op.SCALE, Op.SOFT_MAX, Op.GET_ROWS, Op.CONT, Op.CPY)

#: a scheduler device's supports_op mask: every op, or every op but one to three of the graphs'
sched_op_masks = st.one_of(
    st.just(ALL_OPS),
    st.frozensets(st.sampled_from(SCHED_COMPUTE_OPS), min_size=1, max_size=3).map(lambda refused: ALL_OPS - refused),
)


def sched_devices(name: str, refuse: bool = True) -> st.SearchStrategy[VDevParams]:
    """A virtual device for a scheduler: its own name, alignment and alloc padding, with or
    without async entries, eager or lazy; it claims every op or refuses a few of the graphs'
    (rc.8's scheduler never asks supports_op; profile `fixed` routes refused nodes elsewhere,
    erratum SCHED-33). Every device has the buffer `cpy_tensor` entry: without it a copy between
    two devices is rc.8's erratum COPY-6 (a call through NULL), which the COPY checks cover.
    Shrinks toward an eager device with every entry, every op and no padding. `refuse` False:
    the device claims every op (for checks of asserts that need nodes to stay on a device). Its
    other optional entries are all there (`absent` is drawn by `vdev_params`, for the checks of
    transfers and buffers, and by optional_entries.each_fallback_alone): drawing it here changes
    every scheduler check's examples under a given seed, which the pinned defect tests rely on."""
    return st.builds(
        VDevParams,
        name=st.just(name),
        alignment=st.sampled_from([32, 16, 64, 256]),
        lazy=st.booleans(),
        async_entries=st.booleans().map(lambda b: not b),
        buffer_cpy_tensor=st.just(True),
        cpy_tensor_async=st.booleans().map(lambda b: not b),
        alloc_pad=st.sampled_from([0, 64, 512]),
        ops=sched_op_masks if refuse else st.just(ALL_OPS),
    )


@st.composite
def sched_setups(draw: st.DrawFn, min_backends: int = 1, max_backends: int = 4, refuse: bool = True) -> SchedSetup:
    """`min_backends` to `max_backends` (at most 16) backends: `n - 1` virtual devices with
    different names (each may refuse some ops unless `refuse` is False), then the CPU."""
    n = draw(st.integers(min_backends, max_backends), label="backends")
    return SchedSetup(tuple(draw(sched_devices(DEVICE_NAMES[i], refuse), label=f"device {i}") for i in range(n - 1)))


@dataclass(frozen=True)
class SchedGraph:
    """A graph for the scheduler (`spec`), the user assignments made before each split
    (`assign`: node name → backend index, in order) and the placed leafs whose bytes the graph
    writes through a view (`caches`, KV-cache-like)."""

    spec: GraphSpec
    assign: tuple[tuple[str, int], ...] = ()
    caches: tuple[str, ...] = ()

    @property
    def n_nodes(self) -> int:
        return len(self.spec.nodes)


#: op kinds the scheduler treats as views (skipped by passes 2 and 4)
VIEW_KINDS = frozenset({"view", "reshape", "permute", "transpose"})

_F32, _F16, _I32 = int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.I32)


@dataclass
class _SchedValue:
    """A tensor the graph generator can use as a source (contiguous, 1-d or 2-d)."""

    name: str
    type: int
    ne: tuple[int, ...]
    weights: bool = False  # a leaf in a WEIGHTS buffer


class _GraphBuilder:
    """Collects leafs, nodes and sources for `sched_graphs`."""

    def __init__(self) -> None:
        self.leafs: list[Leaf] = []
        self.nodes: list[Node] = []
        self.pool: list[_SchedValue] = []
        self.pinnable: list[str] = []
        self.follows: dict[str, str] = {}  # node -> the node whose user assignment it shares
        self.caches: list[str] = []
        self.writes: list[str] = []
        self.seed = 1

    def leaf(self, prefix: str, type_: int, ne: tuple[int, ...], place: int, weights: bool = False,
             int_range: int = 1, pool: bool = True) -> _SchedValue:
        name = f"{prefix}{len(self.leafs)}"
        self.leafs.append(Leaf(name, type_, ne, place, weights, seed=self.seed, int_range=int_range))
        self.seed += 1
        v = _SchedValue(name, type_, ne, weights)
        if pool:
            self.pool.append(v)
        return v

    def node(self, op: str, srcs: tuple[str | None, ...], params: tuple[float, ...], type_: int, ne: tuple[int, ...],
             pool: bool = True, pinnable: bool = True) -> _SchedValue:
        name = f"{op}{len(self.nodes)}"
        self.nodes.append(Node(name, op, srcs, params))
        if pinnable and op not in VIEW_KINDS:
            self.pinnable.append(name)
        v = _SchedValue(name, type_, ne)
        if pool:
            self.pool.append(v)
        return v


def _ts(type_: int) -> int:
    return type_size(GGMLType(type_))


def _pick(draw: st.DrawFn, cands: list[_SchedValue], label: str) -> _SchedValue | None:
    return draw(st.sampled_from(cands), label=label) if cands else None


#: the steps `sched_graphs` draws from, simplest first (hypothesis shrinks toward the front)
SCHED_STEPS = ("scale", "add", "mul_mat", "mul", "unary", "soft_max", "get_rows", "transpose", "permute", "view",
               "convert", "kv", "fan")
#: the pin modes of `sched_graphs`
PIN_MODES = ("none", "some", "all")


@st.composite
def sched_graphs(draw: st.DrawFn, n_backends: int, max_steps: int = 8, pin: str = "some",
                 steps: tuple[str, ...] = SCHED_STEPS, max_fan: int = 4) -> SchedGraph:
    """A graph every target computes (the op subset of spec/core.md: F32 and F16 ADD, MUL, SCALE,
    MUL_MAT, CPY, CONT, VIEW, RESHAPE, PERMUTE, TRANSPOSE, GET_ROWS, NORM, SOFT_MAX, GELU,
    SILU) over `n_backends` backends (the CPU last):

    - weights in device or CPU buffers marked WEIGHTS, inputs (F32, I32 row indexes, soft_max
      masks) in CPU buffers of their own (build with `weights_apart=True`);
    - KV-cache-like writes (`kv`): a leaf on any backend, a view of it, and a CPY into the view;
      later steps may read the cache through another view;
    - pre-allocated destinations of their own (`convert`: a CPY into a leaf the scheduler
      allocates);
    - views (and reshapes, permutes, transposes) of tensors on any backend, read by nodes that
      may run elsewhere; the same input read by several nodes, in one split or in later ones
      (`fan`: up to `max_fan` nodes in a row read one tensor and, when pinned, share one
      backend, so a split can read one input many times);
    - user assignments (`pin`): "none"; "some" (each node maybe); "all" (every non-view node
      except the cache writes, which pass 1 pins to the cache's backend: then passes 2 decide
      nothing).

    The first node reads a weights leaf, so pass 1 always assigns one node (SCHED-14 cannot
    fire). Shrinks toward one MUL_MAT on the first backend.
    """
    cpu = n_backends - 1
    g = _GraphBuilder()
    d = draw(st.sampled_from([4, 8]), label="row length D")
    n = draw(st.integers(1, 3), label="rows N")
    places = st.integers(0, cpu)
    w0 = g.leaf("w", draw(st.sampled_from([_F32, _F16]), label="w0 type"), (d, d), draw(places, label="w0 backend"),
                weights=True)
    x = g.leaf("in", _F32, (d, n), cpu)
    for i in range(draw(st.integers(0, 2), label="more weights")):
        if draw(st.booleans(), label=f"weight {i} is a bias"):
            g.leaf("b", _F32, (d,), draw(places, label=f"weight {i} backend"), weights=True)
        else:
            g.leaf("w", draw(st.sampled_from([_F32, _F16]), label=f"weight {i} type"), (d, d),
                   draw(places, label=f"weight {i} backend"), weights=True)
    g.node("mul_mat", (w0.name, x.name), (), _F32, (d, n))
    for k in range(draw(st.integers(0, max_steps - 1), label="steps")):
        _step(draw, g, draw(st.sampled_from(steps), label=f"step {k}"), k, n_backends, max_fan)
    # outputs: every node nothing reads (views too: so every node is in the graph, the first
    # one included), plus every cache write
    used = {s for node in g.nodes for s in node.srcs if s is not None}
    outputs = [node.name for node in g.nodes if node.name not in used]
    outputs += [w for w in g.writes if w not in outputs]
    assign: list[tuple[str, int]] = []
    chosen: dict[str, int] = {}
    for name in g.pinnable:
        leader = g.follows.get(name)
        if leader is not None:
            if leader in chosen:
                assign.append((name, chosen[leader]))
            continue
        if pin == "all" or (pin == "some" and draw(st.booleans(), label=f"assign {name}")):
            chosen[name] = draw(places, label=f"{name} backend")
            assign.append((name, chosen[name]))
    return SchedGraph(GraphSpec(tuple(g.leafs), tuple(g.nodes), tuple(outputs)), tuple(assign), tuple(g.caches))


def _adjacent_f32(g: _GraphBuilder) -> list[_SchedValue]:
    return [v for v in g.pool if v.type == _F32 and len(v.ne) == 2]


def _step(draw: st.DrawFn, g: _GraphBuilder, kind: str, k: int, n_backends: int, max_fan: int) -> None:
    cpu = n_backends - 1
    f32 = _adjacent_f32(g)
    mats = [v for v in g.pool if v.type in (_F32, _F16) and len(v.ne) == 2]
    if kind == "mul_mat":
        w = _pick(draw, mats, f"step {k}: weights")
        assert w is not None
        xs = [v for v in f32 if v.ne[0] == w.ne[0]]
        if not xs:  # a new input of the right width
            xs = [g.leaf("in", _F32, (w.ne[0], draw(st.integers(1, 3), label=f"step {k}: rows")), cpu)]
        x = _pick(draw, xs, f"step {k}: operand")
        assert x is not None
        g.node("mul_mat", (w.name, x.name), (), _F32, (w.ne[1], x.ne[1]))
    elif kind in ("add", "mul"):
        halves = [v for v in mats if v.type == _F16] if kind == "add" else []
        f16: bool = draw(st.booleans(), label=f"step {k}: an F16 ADD") if halves else False
        if f16:  # same shapes (CORE-55)
            a = _pick(draw, halves, f"step {k}: a")
            assert a is not None
            b = _pick(draw, [v for v in mats if v.ne == a.ne], f"step {k}: b")
            assert b is not None
            g.node("add", (a.name, b.name), (), _F16, a.ne)
            return
        a = _pick(draw, f32, f"step {k}: a")
        assert a is not None
        bs = [v for v in g.pool if v.type == _F32 and (v.ne == a.ne or v.ne == (a.ne[0],) or v.ne == (a.ne[0], 1))]
        b = _pick(draw, bs, f"step {k}: b")
        assert b is not None
        g.node(kind, (a.name, b.name), (), _F32, a.ne)
    elif kind == "scale":
        a = _pick(draw, f32, f"step {k}: a")
        assert a is not None
        g.node("scale", (a.name,), (draw(st.sampled_from([0.5, -2.0, 0.125]), label=f"step {k}: s"),), _F32, a.ne)
    elif kind == "unary":
        a = _pick(draw, f32, f"step {k}: a")
        assert a is not None
        op = draw(st.sampled_from(["gelu", "silu", "norm"]), label=f"step {k}: op")
        g.node(op, (a.name,), (1e-5,) if op == "norm" else (), _F32, a.ne)
    elif kind == "soft_max":
        a = _pick(draw, f32, f"step {k}: a")
        assert a is not None
        mask: str | None = None
        if draw(st.booleans(), label=f"step {k}: masked"):
            masks = [v for v in g.pool if v.name.startswith("mask") and v.ne == a.ne]
            m = masks[0] if masks else g.leaf("mask", _F32, a.ne, cpu, pool=False)
            if not masks:
                g.pool.append(m)
            mask = m.name
        g.node("soft_max_ext", (a.name, mask), (draw(st.sampled_from([1.0, 0.25]), label=f"step {k}: scale"),),
               _F32, a.ne)
    elif kind == "get_rows":
        table = _pick(draw, mats, f"step {k}: table")
        assert table is not None
        rows = draw(st.integers(1, 3), label=f"step {k}: rows")
        idx = g.leaf("idx", _I32, (rows,), cpu, int_range=table.ne[1], pool=False)
        g.node("get_rows", (table.name, idx.name), (), _F32, (table.ne[0], rows))
    elif kind == "transpose":
        a = _pick(draw, mats, f"step {k}: a")
        assert a is not None
        tr = g.node("transpose", (a.name,), (), a.type, (a.ne[1], a.ne[0]), pool=False)
        g.node("cont", (tr.name,), (), a.type, (a.ne[1], a.ne[0]))
    elif kind == "permute":
        even = [v for v in mats if v.ne[0] % 2 == 0]
        a = _pick(draw, even, f"step {k}: a")
        if a is None:
            return
        r = g.node("reshape", (a.name,), (a.ne[0] // 2, 2, a.ne[1]), a.type, (), pool=False)
        p = g.node("permute", (r.name,), (0, 2, 1, 3), a.type, (), pool=False)
        c = g.node("cont", (p.name,), (), a.type, (), pool=False)
        g.node("reshape", (c.name,), a.ne, a.type, a.ne)
    elif kind == "view":
        a = _pick(draw, mats, f"step {k}: a")
        assert a is not None
        first = draw(st.integers(0, a.ne[1] - 1), label=f"step {k}: first row")
        rows = draw(st.integers(1, a.ne[1] - first), label=f"step {k}: rows")
        row = a.ne[0] * _ts(a.type)
        g.node("view", (a.name,), (a.ne[0], rows, row, first * row), a.type, (a.ne[0], rows))
    elif kind == "convert":
        a = _pick(draw, mats, f"step {k}: a")
        assert a is not None
        other = _F16 if a.type == _F32 else _F32
        dst = g.leaf("cvt", other, a.ne, -1, pool=False)
        g.node("cpy", (a.name, dst.name), (), other, a.ne)
    elif kind == "kv":
        xs = [v for v in f32 if v.name not in g.writes]
        a = _pick(draw, xs, f"step {k}: written")
        assert a is not None
        extra = draw(st.integers(0, 2), label=f"step {k}: spare slots")
        slot = draw(st.integers(0, extra), label=f"step {k}: slot")
        type_ = draw(st.sampled_from([_F16, _F32]), label=f"step {k}: cache type")
        place = draw(st.integers(0, cpu), label=f"step {k}: cache backend")
        width, cols = a.ne[0], a.ne[1] + extra
        cache = g.leaf("kv", type_, (width * cols,), place, pool=False)
        g.caches.append(cache.name)
        row = width * _ts(type_)
        slot_view = g.node("view", (cache.name,), (width, a.ne[1], row, slot * row), type_, a.ne, pool=False)
        write = g.node("cpy", (a.name, slot_view.name), (), type_, a.ne, pool=False, pinnable=False)
        g.writes.append(write.name)
        g.node("view", (cache.name,), (width, cols, row, 0), type_, (width, cols))  # the whole cache, to read
    elif kind == "fan":
        src = _pick(draw, f32, f"step {k}: read by many")
        assert src is not None
        acc = _pick(draw, [v for v in f32 if v.ne == src.ne], f"step {k}: first addend")
        assert acc is not None
        leader = None
        for i in range(draw(st.integers(1, max_fan), label=f"step {k}: readers")):
            acc = g.node("add", (acc.name, src.name), (), _F32, src.ne, pool=i == 0)
            if leader is None:
                leader = acc.name
            else:
                g.follows[acc.name] = leader
        g.pool.append(acc)
    else:
        raise ValueError(f"unknown step kind {kind!r}")


@dataclass(frozen=True)
class SchedCase:
    """One scheduler scenario: the backends, the graph, and the eval callback's answers: `want`
    (the nodes it asks to see: `ask = true` answers true) and `stop` (the nodes whose `ask =
    false` call answers false, SCHED-25)."""

    setup: SchedSetup
    graph: SchedGraph
    want: frozenset[str] = frozenset()
    stop: frozenset[str] = frozenset()


@st.composite
def sched_cases(draw: st.DrawFn, min_backends: int = 1, max_backends: int = 4, max_steps: int = 8,
                pin: str | None = "some", steps: tuple[str, ...] = SCHED_STEPS, callback: bool = False,
                stops: bool = False, max_fan: int = 4, refuse: bool = True) -> SchedCase:
    """A set-up (`sched_setups`) and a graph for it (`sched_graphs`; `pin` None: any pin mode);
    with `callback`, the nodes the eval callback wants (and with `stops`, where it says stop)."""
    setup = draw(sched_setups(min_backends, max_backends, refuse), label="set-up")
    mode = pin if pin is not None else draw(st.sampled_from(PIN_MODES), label="pin mode")
    graph = draw(sched_graphs(setup.n_backends, max_steps, mode, steps, max_fan), label="graph")
    want: frozenset[str] = frozenset()
    stop: frozenset[str] = frozenset()
    if callback:
        names = [n.name for n in graph.spec.nodes]
        want = frozenset(draw(st.lists(st.sampled_from(names), max_size=4), label="nodes the callback wants"))
        if stops and want:
            stop = frozenset(draw(st.lists(st.sampled_from(sorted(want)), min_size=1, max_size=2),
                                  label="nodes after which it stops"))
    return SchedCase(setup, graph, want, stop)
