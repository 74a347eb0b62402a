"""`graph_specs()`: random computation graphs (as `GraphSpec`s) that rc.8 accepts and computes.

A graph is drawn node by node. Before each node the strategy knows every tensor made so far
(its type, extents and strides, as the constructors make them, CORE-16 to CORE-47) and draws an
op, then operands among the tensors that op accepts, or a new leaf of a fitting shape; so every
prefix of the node list is itself a valid graph, and so is the list with any node's draws
deleted (later draws are read against what exists then). Each node is one span of choices and
the list ends where an "another node?" draw is 0, so hypothesis shrinks a failing graph as it
shrinks a list: cutting it short, deleting nodes from the middle, and simplifying draws (ops
towards ADD, operands towards the first fitting tensor, shapes towards small ones,
permutations towards the identity). A failure that needs one op shrinks to that op on new
leafs (tests/checks/test_checks_graph.py checks this).

What the graphs avoid, and why (each is covered by the per-op checks of checks/ops.py instead):

- every build-time assert (CORE-18 to CORE-46) and compute-time assert (CORE-49 to CORE-72):
  a behaviour check must only draw calls the reference accepts;
- rc.8's undefined behaviour: quantized same-type copies (CORE-53), same-type copies whose
  rows would land by their source coordinates in a differently shaped destination (CORE-52),
  out-of-range GET_ROWS indices (CORE-65), quantizing rows that are not whole blocks;
- F16 ADD of an operand whose elements are not adjacent (rc.8 asserts `nb00 ==
  sizeof(ggml_fp16_t)`, which spec/core.md leaves undefined);
- quantized tensors whose dimension 0 is moved (TRANSPOSE, or a PERMUTE moving axis 0): their
  rows are no longer whole blocks and their nbytes is meaningless;
- memory that two nodes write: each CPY writes into a destination leaf of its own, which no
  other node reads except through that CPY (and views of its result), so every node reads
  its sources after they were written, and the bytes read back after the graph ran are the
  bytes each node read.

Leafs hold deterministic data (graphspec.leaf_bytes): values in [-1, 1) from their seed,
indices in [0, rows). All leafs live in the buffer of backend 0.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

from ggspec.reference.types import GGMLType, blck_size, type_size
from hypothesis import strategies as st

from .graphspec import GraphSpec, Leaf, Node

F32, F16, Q4_0, Q8_0, I32 = GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.I32
QUANTIZED = (Q4_0, Q8_0)

#: the ops the strategy draws, simplest first (hypothesis shrinks towards the front)
GRAPH_OPS: tuple[str, ...] = (
    "add", "dup", "mul", "scale", "cont", "view", "reshape", "permute", "transpose", "cpy",
    "mul_mat", "get_rows", "norm", "soft_max_ext", "gelu", "silu",
)

#: every permutation of the four axes, the identity first
PERMUTATIONS: tuple[tuple[int, int, int, int], ...] = tuple(itertools.permutations(range(4)))  # type: ignore[arg-type]

Shape = tuple[int, int, int, int]


def contiguous_nb(type_: GGMLType, ne: Shape) -> Shape:
    """CORE-2's strides for a new tensor of `ne`."""
    nb0 = type_size(type_)
    nb1 = nb0 * (ne[0] // blck_size(type_))
    return (nb0, nb1, nb1 * ne[1], nb1 * ne[1] * ne[2])


@dataclass(frozen=True)
class Val:
    """What the strategy knows of a tensor while drawing: its layout and where its bytes live.

    `role`: "input", "weights" (leafs), "node", or "private" (index, mask and copy-destination
    leafs, and views of destinations: never drawn as an operand)."""

    name: str
    type: GGMLType
    ne: Shape
    nb: Shape
    role: str

    @property
    def n(self) -> int:
        return self.ne[0] * self.ne[1] * self.ne[2] * self.ne[3]

    @property
    def contiguous(self) -> bool:
        return self.nb == contiguous_nb(self.type, self.ne)

    @property
    def unit_step(self) -> bool:
        """Adjacent elements (blocks): `nb[0]` is the type size (and a quantized tensor's rows
        are whole blocks: a transposed quantized tensor is not)."""
        return self.nb[0] == type_size(self.type) and self.ne[0] % blck_size(self.type) == 0

    @property
    def padded_1d(self) -> bool:
        """`ggml_is_padded_1d` / `ggml_is_contiguous_except_dim_1`."""
        return self.unit_step and self.nb[2] == self.nb[1] * self.ne[1] and self.nb[3] == self.nb[2] * self.ne[2]


class _Builder:
    """The graph so far: leafs, nodes and the tensors operands are drawn from."""

    def __init__(self, draw: st.DrawFn, seed: int) -> None:
        self.draw = draw
        self.seed = seed
        self.leafs: list[Leaf] = []
        self.nodes: list[Node] = []
        self.vals: dict[str, Val] = {}
        self.pool: list[Val] = []  # operands, in creation order

    # leafs ---------------------------------------------------------------------------------

    def leaf(self, stem: str, type_: GGMLType, ne: Shape, role: str, int_range: int = 1) -> Val:
        name = f"{stem}{len(self.leafs)}"
        self.leafs.append(Leaf(name, int(type_), _trim(ne), place=0, weights=role == "weights",
                               seed=self.seed + len(self.leafs), int_range=int_range))
        v = Val(name, type_, ne, contiguous_nb(type_, ne), role)
        self.vals[name] = v
        if role in ("input", "weights"):
            self.pool.append(v)
        return v

    def shape(self, label: str, ne0: int | None = None, quantized: bool = False) -> Shape:
        d = self.draw
        if ne0 is None:
            ne0 = d(st.sampled_from([32, 64]) if quantized else st.sampled_from([4, 32, 2, 8, 3, 1]), label=f"{label} ne0")
        ne1 = d(st.integers(1, 4), label=f"{label} ne1")
        ne2 = d(st.integers(1, 3), label=f"{label} ne2")
        ne3 = d(st.integers(1, 2), label=f"{label} ne3")
        return (ne0, ne1, ne2, ne3)

    def input_leaf(self, label: str, types: tuple[GGMLType, ...] = (F32,), ne: Shape | None = None) -> Val:
        type_ = self.draw(st.sampled_from(types), label=f"{label} type") if len(types) > 1 else types[0]
        return self.leaf("in", type_, ne if ne is not None else self.shape(label), "input")

    # operands ------------------------------------------------------------------------------

    def pick(self, label: str, ok: list[Val]) -> Val | None:
        """One of `ok`, or None (a new leaf) when `ok` is empty or the draw says so."""
        if not ok:
            return None
        i = self.draw(st.integers(0, len(ok)), label=label)
        return ok[i] if i < len(ok) else None

    def node(self, op: str, srcs: tuple[str | None, ...], params: tuple[float, ...], type_: GGMLType, ne: Shape,
             nb: Shape | None = None, role: str = "node") -> Val:
        name = f"n{len(self.nodes)}"
        self.nodes.append(Node(name, op, srcs, params))
        v = Val(name, type_, ne, nb if nb is not None else contiguous_nb(type_, ne), role)
        self.vals[name] = v
        if role == "node":
            self.pool.append(v)
        return v

    def spec(self) -> GraphSpec:
        used = {s for n in self.nodes for s in n.srcs if s is not None}
        outputs = tuple(n.name for n in self.nodes if n.name not in used)
        return GraphSpec(tuple(self.leafs), tuple(self.nodes), outputs)


def _trim(ne: Shape) -> tuple[int, ...]:
    """Extents without trailing 1s (at least one): how a leaf's shape is written."""
    out = list(ne)
    while len(out) > 1 and out[-1] == 1:
        out.pop()
    return tuple(out)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


# --- one builder per op ------------------------------------------------------------------------


def _unary_copy(g: _Builder, op: str) -> None:
    """DUP, CONT: a plain (not quantized) operand, a fresh contiguous result."""
    a = g.pick("operand", [v for v in g.pool if v.type in (F32, F16)]) or g.input_leaf("operand", (F32, F16))
    g.node(op, (a.name,), (), a.type, a.ne)


def _repeat_shape(g: _Builder, like: Shape, label: str) -> Shape:
    """A shape that repeats into `like`: each extent a divisor of like's."""
    return tuple(g.draw(st.sampled_from(_divisors(x)[::-1]), label=f"{label} ne{i}")  # type: ignore[return-value]
                 for i, x in enumerate(like))


def _add(g: _Builder) -> None:
    a = g.pick("a", [v for v in g.pool if v.type in (F32, F16) and v.unit_step]) or g.input_leaf("a", (F32, F16))
    if a.type == F32:  # CORE-54: b F32, repeated over a, any strides
        ok = [v for v in g.pool if v.type == F32 and all(x % y == 0 for x, y in zip(a.ne, v.ne, strict=True))]
        b = g.pick("b", ok) or g.input_leaf("b", ne=_repeat_shape(g, a.ne, "b"))
    else:  # F16: same shape (CORE-55), F16 or F32 with adjacent elements (CORE-49)
        ok = [v for v in g.pool if v.type in (F16, F32) and v.ne == a.ne and v.unit_step]
        b = g.pick("b", ok) or g.input_leaf("b", (F16, F32), ne=a.ne)
    g.node("add", (a.name, b.name), (), a.type, a.ne)


def _mul(g: _Builder) -> None:
    a = g.pick("a", [v for v in g.pool if v.type == F32 and v.unit_step]) or g.input_leaf("a")
    ok = [v for v in g.pool if v.type == F32 and all(x % y == 0 for x, y in zip(a.ne, v.ne, strict=True))]
    b = g.pick("b", ok) or g.input_leaf("b", ne=_repeat_shape(g, a.ne, "b"))
    g.node("mul", (a.name, b.name), (), F32, a.ne)


def _scale(g: _Builder) -> None:
    a = g.pick("operand", [v for v in g.pool if v.type == F32 and v.contiguous]) or g.input_leaf("operand")
    s = g.draw(st.sampled_from([0.5, -2.0, 0.125, 3.0, 0.0]), label="scale")
    g.node("scale", (a.name,), (s,), F32, a.ne)


def _elementwise(g: _Builder, op: str) -> None:
    """GELU, SILU: F32 rows of adjacent elements, dimensions 2 and 3 dense (CORE-72)."""
    a = g.pick("operand", [v for v in g.pool if v.type == F32 and v.padded_1d]) or g.input_leaf("operand")
    g.node(op, (a.name,), (), F32, a.ne)


def _norm(g: _Builder) -> None:
    a = g.pick("operand", [v for v in g.pool if v.type == F32 and v.unit_step]) or g.input_leaf("operand")
    eps = g.draw(st.sampled_from([1e-5, 1e-3, 0.5]), label="eps")
    g.node("norm", (a.name,), (eps,), F32, a.ne)


def _soft_max(g: _Builder) -> None:
    a = g.pick("operand", [v for v in g.pool if v.type == F32 and v.contiguous]) or g.input_leaf("operand")
    scale = g.draw(st.sampled_from([1.0, 0.5, 0.125, 2.0]), label="scale")
    mask: str | None = None
    if g.draw(st.booleans(), label="with a mask"):
        ok = [v for v in g.pool if v.type == F32 and v.contiguous and v.ne[0] == a.ne[0] and v.ne[2] == v.ne[3] == 1
              and a.ne[1] % v.ne[1] == 0]
        m = g.pick("mask", ok)
        if m is None:
            rows = g.draw(st.sampled_from(_divisors(a.ne[1])[::-1]), label="mask rows")
            m = g.leaf("mask", F32, (a.ne[0], rows, 1, 1), "private")
        mask = m.name
    g.node("soft_max_ext", (a.name, mask), (scale,), F32, a.ne)


def _mul_mat(g: _Builder) -> None:
    """b (the activations) first, then weights that fit it (CORE-22, CORE-23, CORE-61 to CORE-64)."""
    b = g.pick("b", [v for v in g.pool if v.type in (F32, F16) and v.unit_step])
    if b is None:
        b = g.input_leaf("b", ne=g.shape("b", quantized=g.draw(st.booleans(), label="b rows of whole blocks")))

    def fits(a: Val) -> bool:
        if a.ne[0] != b.ne[0] or b.ne[2] % a.ne[2] or b.ne[3] % a.ne[3] or not a.unit_step or a.nb[0] > a.nb[1]:
            return False
        if a.type in QUANTIZED:
            return b.type == F32
        return a.type == b.type or b.type == F32  # F32 b, or b already of a's vec_dot type

    a = g.pick("a (weights)", [v for v in g.pool if v.type in (F32, F16, *QUANTIZED) and fits(v)])
    if a is None:
        types = [F32, F16] if b.type == F32 else [F16]
        if b.type == F32 and b.ne[0] % 32 == 0:
            types += [Q4_0, Q8_0]
        t = g.draw(st.sampled_from(types), label="weights type")
        ne1 = g.draw(st.integers(1, 4), label="weights rows")
        ne2 = g.draw(st.sampled_from(_divisors(b.ne[2])), label="weights ne2")
        ne3 = g.draw(st.sampled_from(_divisors(b.ne[3])), label="weights ne3")
        a = g.leaf("w", t, (b.ne[0], ne1, ne2, ne3), "weights")
    g.node("mul_mat", (a.name, b.name), (), F32, (a.ne[1], b.ne[1], b.ne[2], b.ne[3]))


def _get_rows(g: _Builder) -> None:
    """A table with adjacent elements and at most 3 dims, indices in range (CORE-36 to CORE-39, CORE-65)."""
    ok = [v for v in g.pool if v.type in (F32, F16, *QUANTIZED) and v.unit_step and v.ne[3] == 1]
    a = g.pick("table", ok)
    if a is None:
        t = g.draw(st.sampled_from([F32, F16, Q4_0, Q8_0]), label="table type")
        ne = g.shape("table", quantized=t in QUANTIZED)
        a = g.leaf("w", t, (ne[0], ne[1], ne[2], 1), "weights")
    n = g.draw(st.integers(1, 4), label="rows to get")
    idx = g.leaf("idx", I32, (n, a.ne[2], 1, 1), "private", int_range=a.ne[1])
    g.node("get_rows", (a.name, idx.name), (), F32, (a.ne[0], n, a.ne[2], 1))


def _view(g: _Builder) -> None:
    """A sub-block of a tensor with adjacent elements: its strides, a smaller extent per
    dimension, an offset (CORE-28)."""
    a = g.pick("operand", [v for v in g.pool if v.unit_step]) or g.input_leaf("operand", (F32, F16))
    bs = blck_size(a.type)
    ne: list[int] = []
    offset = 0
    for i, x in enumerate(a.ne):
        units = x // bs if i == 0 else x
        k = g.draw(st.integers(1, units), label=f"view ne{i}")
        o = g.draw(st.integers(0, units - k), label=f"view offset{i}")
        ne.append(k * bs if i == 0 else k)
        offset += o * a.nb[i]
    params = (*ne, a.nb[1], a.nb[2], a.nb[3], offset)
    g.node("view", (a.name,), tuple(float(p) for p in params), a.type, tuple(ne), (a.nb[0], a.nb[1], a.nb[2], a.nb[3]))  # type: ignore[arg-type]


def _reshape(g: _Builder) -> None:
    """The elements of a contiguous tensor in a new shape (CORE-29 to CORE-31)."""
    a = g.pick("operand", [v for v in g.pool if v.contiguous]) or g.input_leaf("operand", (F32, F16))
    bs = blck_size(a.type)
    dims = g.draw(st.integers(1, 4), label="reshape dims")
    rest = a.n
    ne: list[int] = []
    for i in range(dims - 1):
        choices = [k for k in _divisors(rest) if (i > 0 or k % bs == 0)]
        k = g.draw(st.sampled_from(choices), label=f"reshape ne{i}")
        ne.append(k)
        rest //= k
    ne.append(rest)
    full = (ne + [1, 1, 1])[:4]
    g.node("reshape", (a.name,), tuple(float(x) for x in ne), a.type, tuple(full))  # type: ignore[arg-type]


def _permute(g: _Builder) -> None:
    a = g.pick("operand", list(g.pool)) or g.input_leaf("operand", (F32, F16))
    # a quantized tensor keeps its rows of blocks in dimension 0 (else its nbytes is meaningless)
    axes = g.draw(st.sampled_from(PERMUTATIONS[:6] if a.type in QUANTIZED else PERMUTATIONS), label="axes")
    ne, nb = [0] * 4, [0] * 4
    for i, ax in enumerate(axes):
        ne[ax], nb[ax] = a.ne[i], a.nb[i]
    g.node("permute", (a.name,), tuple(float(x) for x in axes), a.type, tuple(ne), tuple(nb))  # type: ignore[arg-type]


def _transpose(g: _Builder) -> None:
    a = g.pick("operand", [v for v in g.pool if v.type not in QUANTIZED]) or g.input_leaf("operand", (F32, F16))
    ne = (a.ne[1], a.ne[0], a.ne[2], a.ne[3])
    nb = (a.nb[1], a.nb[0], a.nb[2], a.nb[3])
    g.node("transpose", (a.name,), (), a.type, ne, nb)


def _cpy(g: _Builder) -> None:
    """Into a destination leaf of its own: the whole leaf (its shape or flat), or a view of a
    bigger one (CORE-25, CORE-26, CORE-51)."""
    a = g.pick("source", [v for v in g.pool if v.type in (F32, F16)]) or g.input_leaf("source", (F32, F16))
    types = [F32, F16]
    if a.ne[0] % 32 == 0 and a.unit_step:
        types += [Q4_0, Q8_0]
    t = g.draw(st.sampled_from(types), label="destination type")
    how = ["same shape"]
    if t not in QUANTIZED:
        how.append("view of a bigger leaf")
    if t != a.type or a.contiguous:  # a same-type copy into another shape must not take CORE-52's path
        how.append("flat")
    way = g.draw(st.sampled_from(how), label="destination")
    if way == "same shape":
        dst = g.leaf("dst", t, a.ne, "private")
    elif way == "flat":
        dst = g.leaf("dst", t, (a.n, 1, 1, 1), "private")
    else:
        pad0 = g.draw(st.integers(0, 3), label="destination row padding")
        pad1 = g.draw(st.integers(0, 2), label="destination extra rows")
        big = g.leaf("dst", t, (a.ne[0] + pad0, a.ne[1] + pad1, a.ne[2], a.ne[3]), "private")
        o0 = g.draw(st.integers(0, pad0), label="destination column")
        o1 = g.draw(st.integers(0, pad1), label="destination row")
        offset = o0 * big.nb[0] + o1 * big.nb[1]
        params = (*a.ne, big.nb[1], big.nb[2], big.nb[3], offset)
        dst = g.node("view", (big.name,), tuple(float(p) for p in params), t, a.ne, big.nb, role="private")
    g.node("cpy", (a.name, dst.name), (), t, dst.ne, dst.nb)


_BUILD: dict[str, Callable[[_Builder], None]] = {
    "add": _add, "mul": _mul, "scale": _scale, "mul_mat": _mul_mat, "cpy": _cpy, "view": _view,
    "reshape": _reshape, "permute": _permute, "transpose": _transpose, "get_rows": _get_rows, "norm": _norm,
    "soft_max_ext": _soft_max,
    "dup": lambda g: _unary_copy(g, "dup"), "cont": lambda g: _unary_copy(g, "cont"),
    "gelu": lambda g: _elementwise(g, "gelu"), "silu": lambda g: _elementwise(g, "silu"),
}


@st.composite
def _one_node(draw: st.DrawFn, g: _Builder, ops: tuple[str, ...]) -> None:
    """One op (with the leafs it needs) as one span of choices, which the shrinker can delete."""
    outer, g.draw = g.draw, draw
    try:
        _BUILD[draw(st.sampled_from(ops), label="op")](g)
    finally:
        g.draw = outer


@st.composite
def graph_specs(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 8,
                ops: tuple[str, ...] = GRAPH_OPS) -> GraphSpec:
    """A random graph of `min_nodes` to about `max_nodes` nodes over `ops` (a subset of
    GRAPH_OPS; a CPY into a view may add one node more), with consistent shapes and types,
    leafs as inputs and weights, that the reference builds and computes without an assert or
    undefined behaviour under both profiles.

    Nodes are drawn one after the other while an "another node?" draw says so (7 in 8), each
    as one span, like the elements of a list: hypothesis shrinks a failing graph by cutting the
    list short and by deleting single nodes from the middle."""
    unknown = set(ops) - set(GRAPH_OPS)
    if unknown:
        raise ValueError(f"graph_specs: unknown ops {sorted(unknown)}; known: {GRAPH_OPS}")
    g = _Builder(draw, draw(st.integers(0, 2**16), label="data seed"))
    g.input_leaf("first input", (F32, F16))
    while True:
        # drawn at the maximum too (and ignored there), so that deleting a node leaves a valid
        # choice sequence: the shrinker sets this last draw to 0 first
        more = draw(st.integers(0, 7), label="another node? (0: no)") if len(g.nodes) >= min_nodes else 1
        if more == 0 or len(g.nodes) >= max_nodes:
            break
        draw(_one_node(g, tuple(ops)), label=f"node {len(g.nodes)}")
    return g.spec()


def with_graph_size(spec: GraphSpec, size: int) -> GraphSpec:
    """The same graph with room for `size` nodes and leafs (CORE-7)."""
    return replace(spec, graph_size=size)
