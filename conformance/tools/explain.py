"""`ggspec explain`: what the scheduler decides for a graph, as a table and a Graphviz drawing.

The input is a fixture name (`encoder`, `decoder`), a Python file that defines `SPEC` (a
GraphSpec) and optionally `N_BACKENDS`, or a JSON file: a graph vector (conformance/vectors.py,
docs/vectors.md) or a bare GraphSpec. The reference model splits the graph over N backends
(N-1 virtual devices named GPU0.., then the CPU; a vector brings its own devices and user
assignments) without computing it.

The drawing (laid out by Graphviz `dot`, through the `graphviz` package) has one box per node
with its name, op, shape and type; the graph's leafs as notes; an edge from each source; one
cluster per split, filled with its backend's colour; the copies the scheduler makes of a
split's inputs (`GPU0#inp`) as nodes of their own on the edges they replace; the pass that
decided each tensor's backend as its tooltip; and a legend of the backends that got a tensor.
"""

from __future__ import annotations

import runpy
from dataclasses import dataclass, field
from pathlib import Path

from ggspec.reference import sched as S
from ggspec.reference.backend import backend_name
from ggspec.reference.tensor import Tensor, nbytes

from ..adapters.reference import ReferenceTarget
from ..inputs.fixtures import FIXTURES
from ..inputs.graphspec import GraphSpec, build
from ..names import did_you_mean
from .vectors import Vector

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f"]
#: what each cause (reference/sched.py's `cause_of`) means, for the tooltips
PASSES = {
    "user": "set by the user (set_node_backend)",
    "1.dst": "pass 1: its own buffer",
    "1.vsrc": "pass 1: its view_src's buffer",
    "1.wgt": "pass 1: the buffer of a source holding weights",
    "2.1": "pass 2.1: a device assignment spread upward",
    "2.2": "pass 2.2: a device assignment spread downward",
    "2.3": "pass 2.3: any assignment spread upward",
    "2.4": "pass 2.4: any assignment spread downward",
    "3.": "pass 3: its view_src's backend or its node's",
    "4.cpy": "pass 4: a copy of a split input",
}


@dataclass
class Row:
    index: int
    name: str
    op: str
    size: int
    backend: str
    backend_index: int
    cause: str
    sources: list[str]
    type: str = ""
    ne: tuple[int, ...] = ()
    #: the sources before pass 4 redirected some of them to copies
    original_sources: list[str] = field(default_factory=list)


@dataclass
class Copy:
    """A copy the scheduler made: `name` (`BACKEND#input`) of `source` for split `split`."""

    name: str
    source: str
    backend: str
    backend_index: int
    split: int
    readers: list[str] = field(default_factory=list)


@dataclass
class Explained:
    rows: list[Row]
    splits: list[tuple[str, int, int, list[str]]]
    backends: list[str]
    leafs: list[Row] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)


def load_vector(source: str, n_backends: int) -> Vector:
    """A vector from a fixture name, a Python file (SPEC, N_BACKENDS) or a JSON file."""
    from ggspec.reference.vdev import VDevParams

    def devices(n: int) -> tuple[VDevParams, ...]:
        if n < 1:
            raise ValueError(f"--backends must be at least 1, not {n}")
        return tuple(VDevParams(name=f"GPU{i}") for i in range(n - 1))

    if source in FIXTURES:
        return Vector(FIXTURES[source](n_backends), devices(n_backends))
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{source!r} is neither a fixture ({', '.join(FIXTURES)}) nor a file"
                         + did_you_mean(source, FIXTURES))
    if path.is_dir():
        raise ValueError(f"{source} is a folder, not a fixture ({', '.join(FIXTURES)}), a .py or a .json file")
    if path.suffix == ".json":
        vector = Vector.load(path)
        if '"format"' not in path.read_text(encoding="utf-8"):  # a bare GraphSpec: --backends decides
            vector = Vector(vector.graph, devices(n_backends))
        return vector
    try:
        namespace = runpy.run_path(str(path))
    except Exception as exc:  # noqa: BLE001 - the user's file failed: one line naming it
        raise ValueError(f"{source}: running it failed: {type(exc).__name__}: {exc}") from None
    spec = namespace.get("SPEC")
    if not isinstance(spec, GraphSpec):
        raise ValueError(f"{source} must define SPEC = GraphSpec(...)")
    return Vector(spec, devices(int(namespace.get("N_BACKENDS", n_backends))))


def load_spec(source: str, n_backends: int) -> tuple[GraphSpec, int]:
    """A GraphSpec and a number of backends from a fixture name, a Python file or a JSON file."""
    v = load_vector(source, n_backends)
    return v.graph, v.n_backends


def _dims(t: Tensor) -> tuple[int, ...]:
    ne = list(t.ne)
    while len(ne) > 1 and ne[-1] == 1:
        ne.pop()
    return tuple(ne)


def explain_vector(vector: Vector) -> Explained:
    """Split the vector's graph with the reference scheduler (no compute); describe the result."""
    t = ReferenceTarget()
    backends = [t.vdev_init(p) for p in vector.devices] + [t.cpu_init()]
    built = build(t, vector.graph, backends, fill=False, weights_apart=True)
    s = S.sched_new(t.world, backends, None, vector.graph.graph_size)
    for name, b in vector.assign:
        S.set_node_backend(s, built.tensors[name], backends[b])
    nodes = built.graph.node_list()
    before = [[x.name for x in n.src if x is not None] for n in nodes]
    S.split_graph(s, built.graph)

    def row(i: int, x: Tensor, original: list[str]) -> Row:
        b = S.get_node_backend(s, x)
        return Row(i, x.name, x.op.name, nbytes(x), backend_name(b) if b else "-", S.backend_prio(s, b) if b else -1,
                   S.cause_of(s, x), [y.name for y in x.src if y is not None], x.type.name, _dims(x), original)

    rows = [row(i, n, before[i]) for i, n in enumerate(nodes)]
    leafs = [row(i, x, []) for i, x in enumerate(built.graph.leaf_list())]
    splits = [(backend_name(S.allocr_backend(s, sp.tallocr)), sp.i_start, sp.i_end, [x.name for x in sp.inputs])
              for sp in s.splits]
    copies: dict[str, Copy] = {}
    for k, sp in enumerate(s.splits):
        for i in range(sp.i_start, sp.i_end):
            r = rows[i]
            for now, was in zip(r.sources, r.original_sources, strict=False):
                if now != was:
                    c = copies.setdefault(now, Copy(now, was, splits[k][0], S.allocr_prio(s, sp.tallocr), k))
                    c.readers.append(r.name)
    return Explained(rows, splits, [backend_name(b) for b in backends], leafs, list(copies.values()))


def explain(spec: GraphSpec, n_backends: int) -> Explained:
    """`explain_vector` over N-1 virtual devices GPU0.. and the CPU."""
    from ggspec.reference.vdev import VDevParams

    return explain_vector(Vector(spec, tuple(VDevParams(name=f"GPU{i}") for i in range(n_backends - 1))))


def table(ex: Explained) -> str:
    w = max([24, *(len(r.name) for r in ex.rows)])
    lines = [f"{'#':>3}  {'node':{w}s} {'op':12s} {'size':>8s}  {'backend':8s} {'pass':7s} sources"]
    starts = {i0: (k, b, ins) for k, (b, i0, _, ins) in enumerate(ex.splits)}
    for r in ex.rows:
        if r.index in starts:
            k, b, ins = starts[r.index]
            lines.append(f"--- split {k} on {b}; inputs: {', '.join(ins) or 'none'}")
        lines.append(f"{r.index:3d}  {r.name:{w}s} {r.op[:12]:12s} {r.size:8d}  {r.backend:8s} {r.cause:7s} "
                     f"{', '.join(r.sources)}")
    lines.append(f"{len(ex.splits)} split(s) over {', '.join(ex.backends)}")
    return "\n".join(lines)


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)] if index >= 0 else "#cccccc"


def _pass(cause: str) -> str:
    for key, text in PASSES.items():
        if cause.startswith(key):
            return f"{text} ({cause})"
    return f"decided by {cause}" if cause else "no backend"


def _shape(r: Row) -> str:
    return f"{r.type}[{', '.join(str(x) for x in r.ne)}]"


def graph(ex: Explained, title: str = "") -> object:
    """The drawing as a `graphviz.Digraph` (the graphviz package; `dot` lays it out)."""
    import graphviz

    g = graphviz.Digraph("sched", graph_attr={"rankdir": "TB", "fontname": "Helvetica", "label": title, "labelloc": "t",
                                              "tooltip": title or "ggspec explain"},
                         node_attr={"fontname": "Helvetica", "fontsize": "10", "style": "filled"},
                         edge_attr={"color": "#555555", "arrowsize": "0.6"})
    ids = {r.name: f"n{r.index}" for r in ex.rows}
    ids.update({x.name: f"l{x.index}" for x in ex.leafs})
    ids.update({c.name: f"c{k}" for k, c in enumerate(ex.copies)})
    used: set[int] = set()
    for x in ex.leafs:
        used.add(x.backend_index)
        g.node(ids[x.name], f"{x.name}\n{_shape(x)}", shape="note", fillcolor=_colour(x.backend_index) + "55",
               tooltip=f"{x.name}: leaf on {x.backend}; {_pass(x.cause)}")
    for k, (backend, i0, i1, inputs) in enumerate(ex.splits):
        bi = ex.backends.index(backend) if backend in ex.backends else -1
        with g.subgraph(name=f"cluster_split{k}") as c:
            tip = f"split {k} on {backend}: nodes {i0}..{i1 - 1}; inputs {', '.join(inputs) or 'none'}"
            c.attr(label=f"split {k} on {backend}", style="rounded,filled", fillcolor=_colour(bi) + "22", color=_colour(bi),
                   fontname="Helvetica", tooltip=tip)
            for r in ex.rows[i0:i1]:
                used.add(r.backend_index)
                c.node(ids[r.name], f"{r.name}\n{r.op}  {_shape(r)}", shape="box", fillcolor=_colour(r.backend_index),
                       fontcolor="white", tooltip=f"{r.name}: {r.op} on {r.backend}; {_pass(r.cause)}")
            for cp in (cp for cp in ex.copies if cp.split == k):
                c.node(ids[cp.name], cp.name, shape="box", style="filled,dashed", fillcolor="white", color=_colour(bi),
                       tooltip=f"{cp.name}: the scheduler's copy of {cp.source} to {cp.backend} (pass 4)")
    in_split = {r.name for _, i0, i1, _ in ex.splits for r in ex.rows[i0:i1]}
    for r in ex.rows:  # nodes outside every split (a graph the scheduler could not split fully)
        if r.name not in in_split:
            g.node(ids[r.name], f"{r.name}\n{r.op}  {_shape(r)}", shape="box", fillcolor=_colour(r.backend_index),
                   tooltip=f"{r.name}: {r.op} on {r.backend}; {_pass(r.cause)}")
    copies = {c.name: c for c in ex.copies}
    drawn: set[tuple[str, str]] = set()

    def edge(a: str, b: str, **attrs: str) -> None:
        if (a, b) not in drawn and a in ids and b in ids:
            drawn.add((a, b))
            g.edge(ids[a], ids[b], **attrs)

    for r in ex.rows:
        for src in r.sources:
            if src in copies:
                edge(copies[src].source, src, style="dashed", tooltip=f"copy {copies[src].source} to {copies[src].backend}")
                edge(src, r.name)
            else:
                edge(src, r.name)
    with g.subgraph(name="cluster_legend") as legend:
        legend.attr(label="backends", fontname="Helvetica", style="rounded", color="#999999")
        for k, name in enumerate(ex.backends):
            if k in used:
                legend.node(f"legend{k}", name, shape="box", fillcolor=_colour(k), fontcolor="white",
                            tooltip=f"backend {k}: {name}")
    return g


def render(ex: Explained, fmt: str, title: str = "") -> bytes:
    """The drawing as `fmt` ("svg" or "png") bytes, laid out by Graphviz's dot."""
    import graphviz

    g = graph(ex, title)
    assert isinstance(g, graphviz.Digraph)
    try:
        data: bytes = g.pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise ValueError("Graphviz's `dot` is not installed (Debian: apt-get install graphviz)") from None
    return data


def svg(ex: Explained, title: str = "") -> str:
    """The drawing as SVG text."""
    return render(ex, "svg", title).decode("utf-8")


def main(source: str, n_backends: int, svg_path: str | None, png_path: str | None = None) -> int:
    try:
        import graphviz  # noqa: F401 - fail early with one line
    except ImportError:
        raise ValueError("`ggspec explain` needs the graphviz package: pip install 'ggspec[docs]'") from None
    vector = load_vector(source, n_backends)
    ex = explain_vector(vector)
    print(table(ex))
    title = f"{Path(source).stem}: {len(ex.splits)} split(s) over {', '.join(ex.backends)}"
    outputs = [(svg_path, "svg"), (png_path, "png")]
    if svg_path is None and png_path is None:
        outputs = [(f"{Path(source).stem}.svg", "svg")]
    for path, fmt in outputs:
        if path is not None:
            Path(path).write_bytes(render(ex, fmt, title))
            print(f"wrote {path}")
    return 0
