"""Graphs as data: a `GraphSpec` names its leafs (with where they live and what they hold) and
its nodes (an op, sources by name, parameters), so the same graph can be built on any target
through the Target protocol, printed as a reproducer, shrunk by hypothesis, and saved as a
vector file.

`build(t, spec, backends)` creates the leafs in buffers of the given backends (one buffer per
backend, WEIGHTS usage where a leaf says so), fills them, creates the nodes with `t.op`, and
expands the outputs into a new graph.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from ggspec.reference.quants import quantize_q4_0, quantize_q8_0
from ggspec.reference.types import GGMLType, blck_size, type_size

from ..target import Handle, Target

#: the op kinds `Target.op` accepts, with the parameters each takes
OP_KINDS: dict[str, str] = {
    "dup": "",
    "add": "",
    "mul": "",
    "scale": "s (float)",
    "mul_mat": "",
    "cpy": "",
    "cont": "",
    "view": "ne..., nb[1:]..., offset (ints; len(ne) = (len(params) + 1) // 2)",
    "reshape": "ne... (ints)",
    "permute": "ax0, ax1, ax2, ax3",
    "transpose": "",
    "get_rows": "",
    "norm": "eps (float)",
    "soft_max_ext": "scale (float); srcs: a, mask or None",
    "soft_max": "",
    "reshape_as": "srcs: a, b (b's shape)",
    "gelu": "",
    "silu": "",
}


@dataclass(frozen=True)
class Leaf:
    """An input or weight tensor. `place` is the index of the backend whose buffer holds it;
    `seed` decides its values; I32 leafs hold integers in [0, int_range)."""

    name: str
    type: int
    ne: tuple[int, ...]
    place: int = -1
    weights: bool = False
    seed: int = 0
    int_range: int = 1


@dataclass(frozen=True)
class Node:
    name: str
    op: str
    srcs: tuple[str | None, ...]
    params: tuple[float, ...] = ()


@dataclass(frozen=True)
class GraphSpec:
    leafs: tuple[Leaf, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[str, ...]
    graph_size: int = 2048

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @staticmethod
    def from_json(text: str) -> GraphSpec:
        d = json.loads(text)
        return GraphSpec(
            tuple(Leaf(**{**x, "ne": tuple(x["ne"])}) for x in d["leafs"]),
            tuple(Node(x["name"], x["op"], tuple(x["srcs"]), tuple(x["params"])) for x in d["nodes"]),
            tuple(d["outputs"]),
            d.get("graph_size", 2048),
        )


def leaf_bytes(leaf: Leaf) -> bytes:
    """The bytes a leaf holds: deterministic in its seed (values in [-1, 1), or ints)."""
    t = GGMLType(leaf.type)
    n = 1
    for x in leaf.ne:
        n *= x
    rng = np.random.default_rng(leaf.seed)
    if t == GGMLType.I32:
        return rng.integers(0, max(leaf.int_range, 1), size=n, dtype=np.int32).tobytes()
    values = rng.uniform(-1.0, 1.0, size=n).astype(np.float32)
    if t == GGMLType.F32:
        return values.tobytes()
    if t == GGMLType.F16:
        return values.astype(np.float16).tobytes()
    if t == GGMLType.Q4_0:
        return bytes(quantize_q4_0(values))
    if t == GGMLType.Q8_0:
        return bytes(quantize_q8_0(values))
    raise ValueError(f"leaf {leaf.name}: no data for type {t.name}")


def leaf_nbytes(leaf: Leaf) -> int:
    t = GGMLType(leaf.type)
    n = type_size(t) * leaf.ne[0] // blck_size(t)
    for x in leaf.ne[1:]:
        n *= x
    return n


@dataclass
class Built:
    """A graph built on one target: tensors by name, the graph, the leaf buffers by backend."""

    tensors: dict[str, Handle]
    graph: Handle
    buffers: dict[int, Handle] = field(default_factory=dict)
    #: with `weights_apart`: the WEIGHTS buffer of each place that has weights leafs
    weight_buffers: dict[int, Handle] = field(default_factory=dict)


def _pad(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def packed(t: Target, backend: Handle, tensors: Sequence[Handle], clear: int | None = None) -> tuple[Handle, list[int]]:
    """A new buffer of `backend` with room for `tensors` one after another, each at its buffer
    type's alignment (get_alloc_size bytes each, plus one alignment for the buffer's base), cleared
    to the byte `clear` when given; returns it with each tensor's offset from the buffer's base
    (aligned addresses), for tensor_alloc."""
    buft = t.backend_get_default_buffer_type(backend)
    align = t.buft_get_alignment(buft)
    offsets, size = [], 0
    for x in tensors:
        size = _pad(size, align)
        offsets.append(size)
        size += t.buft_get_alloc_size(buft, x)
    buf = t.backend_alloc_buffer(backend, size + align)
    if clear is not None:
        t.buffer_clear(buf, clear)
    base_pad = (-t.buffer_get_base(buf)) % align
    return buf, [base_pad + off for off in offsets]


def init_views(t: Target, tensors: Iterable[Handle]) -> None:
    """view_init each view among `tensors` that has no buffer yet, into its root's buffer (the
    roots are placed first)."""
    for x in tensors:
        root = t.tensor_view_src(x)
        if root is not None and t.tensor_buffer(x) is None:
            root_buf = t.tensor_buffer(root)
            assert root_buf is not None, "a view's root is placed before the view"
            t.view_init(root_buf, x)


def build(t: Target, spec: GraphSpec, backends: list[Handle], fill: bool = True, weights_apart: bool = False) -> Built:
    """Create `spec` on target `t`; leafs with place p go into one buffer of backends[p] (with
    `weights_apart`, weights leafs into a second one, so only that one has WEIGHTS usage)."""
    tensors: dict[str, Handle] = {}
    by_place: dict[tuple[int, bool], list[Leaf]] = {}
    for leaf in spec.leafs:
        tensors[leaf.name] = t.new_tensor(leaf.type, leaf.ne, leaf.name)
        if leaf.place >= 0:
            by_place.setdefault((leaf.place, weights_apart and leaf.weights), []).append(leaf)
    buffers: dict[int, Handle] = {}
    weight_buffers: dict[int, Handle] = {}
    for (place, apart), leafs in sorted(by_place.items()):
        buf, offsets = packed(t, backends[place], [tensors[leaf.name] for leaf in leafs])
        if any(leaf.weights for leaf in leafs):
            t.buffer_set_usage(buf, 1)
        for leaf, off in zip(leafs, offsets, strict=True):
            t.tensor_alloc(buf, tensors[leaf.name], off)
            if fill:
                data = leaf_bytes(leaf)
                t.tensor_set(tensors[leaf.name], data, 0, len(data))
        (weight_buffers if apart else buffers)[place] = buf
    for node in spec.nodes:
        srcs = [tensors[s] if s is not None else None for s in node.srcs]
        tensors[node.name] = t.op(node.op, srcs, node.params)
        t.set_name(tensors[node.name], node.name)
    graph = t.new_graph(spec.graph_size)
    for out in spec.outputs:
        t.build_forward_expand(graph, tensors[out])
    return Built(tensors, graph, buffers, weight_buffers)


def describe(spec: GraphSpec) -> str:
    """A readable listing of the graph (for reproducers and `ggspec explain`)."""
    lines = [f"leaf {x.name}: {GGMLType(x.type).name}{list(x.ne)} on backend {x.place}"
             f"{' (weights)' if x.weights else ''}" for x in spec.leafs]
    lines += [f"{n.name} = {n.op}({', '.join(s or 'NULL' for s in n.srcs)}"
              f"{'; ' + ', '.join(str(p) for p in n.params) if n.params else ''})" for n in spec.nodes]
    lines.append(f"outputs: {', '.join(spec.outputs)}")
    return "\n".join(lines)


def as_jsonable(value: Any) -> Any:
    return asdict(value) if hasattr(value, "__dataclass_fields__") else value
