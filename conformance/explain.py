"""`ggspec explain`: what the scheduler decides for a graph, as a table and an SVG drawing.

The input is a fixture name (`encoder`, `decoder`), a Python file that defines `SPEC` (a
GraphSpec) and optionally `N_BACKENDS`, or a saved vector (a GraphSpec as JSON). The reference
model splits the graph over N backends (N-1 virtual devices named GPU0.., then the CPU) and
the drawing shows every node coloured by backend, the splits boxed, and copied inputs marked.
"""

from __future__ import annotations

import html
import json
import runpy
from dataclasses import dataclass
from pathlib import Path

from ggspec.reference import sched as S
from ggspec.reference.backend import backend_name
from ggspec.reference.tensor import nbytes
from ggspec.reference.vdev import VDevParams

from .adapters.reference import ReferenceTarget
from .fixtures import FIXTURES
from .graphspec import GraphSpec, build

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f"]


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


@dataclass
class Explained:
    rows: list[Row]
    splits: list[tuple[str, int, int, list[str]]]
    backends: list[str]


def load_spec(source: str, n_backends: int) -> tuple[GraphSpec, int]:
    """A GraphSpec from a fixture name, a Python file or a JSON vector."""
    if source in FIXTURES:
        return FIXTURES[source](n_backends), n_backends
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{source!r} is neither a fixture ({', '.join(FIXTURES)}) nor a file")
    if path.is_dir():
        raise ValueError(f"{source} is a folder, not a fixture ({', '.join(FIXTURES)}), a .py or a .json file")
    if path.suffix == ".json":  # a usage error names the file and what is wrong with it
        try:
            return GraphSpec.from_json(path.read_text(encoding="utf-8")), n_backends
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read it: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not valid JSON: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
            raise ValueError(f"{source}: not a graph vector (a JSON object with leafs, nodes and outputs): {what}") from None
    try:
        namespace = runpy.run_path(str(path))
    except Exception as exc:  # noqa: BLE001 - the user's file failed: one line naming it
        raise ValueError(f"{source}: running it failed: {type(exc).__name__}: {exc}") from None
    spec = namespace.get("SPEC")
    if not isinstance(spec, GraphSpec):
        raise ValueError(f"{source} must define SPEC = GraphSpec(...)")
    return spec, int(namespace.get("N_BACKENDS", n_backends))


def explain(spec: GraphSpec, n_backends: int) -> Explained:
    """Split `spec` with the reference scheduler (no compute) and describe what it decided."""
    t = ReferenceTarget()
    backends = [t.vdev_init(VDevParams(name=f"GPU{i}")) for i in range(n_backends - 1)] + [t.cpu_init()]
    built = build(t, spec, backends, fill=False, weights_apart=True)
    s = S.sched_new(t.world, backends, None, spec.graph_size)
    S.split_graph(s, built.graph)
    rows = []
    for i, node in enumerate(built.graph.node_list()):
        b = S.get_node_backend(s, node)
        rows.append(Row(i, node.name, node.op.name, nbytes(node), backend_name(b) if b else "-",
                        S.backend_prio(s, b) if b else -1, S.cause_of(s, node),
                        [x.name for x in node.src if x is not None]))
    splits = [(backend_name(S.allocr_backend(s, sp.tallocr)), sp.i_start, sp.i_end, [x.name for x in sp.inputs])
              for sp in s.splits]
    return Explained(rows, splits, [backend_name(b) for b in backends])


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


def svg(ex: Explained) -> str:
    """One row per node, coloured by backend; splits boxed and labelled; copies marked."""
    row_h, top, width = 22, 40, 900
    height = top + row_h * (len(ex.rows) + 2 * len(ex.splits)) + 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" '
           'font-size="12">', '<title>ggspec explain: scheduler assignment</title>']
    for k, name in enumerate(ex.backends):
        out.append(f'<rect x="{10 + 150 * k}" y="8" width="14" height="14" fill="{PALETTE[k % len(PALETTE)]}"/>'
                   f'<text x="{30 + 150 * k}" y="20">{html.escape(name)}</text>')
    y = top
    starts = {i0: (k, b, i1, ins) for k, (b, i0, i1, ins) in enumerate(ex.splits)}
    for r in ex.rows:
        if r.index in starts:
            k, b, i1, ins = starts[r.index]
            box_h = row_h * (i1 - r.index + 1) + 6
            out.append(f'<rect class="split" x="4" y="{y}" width="{width - 8}" height="{box_h}" fill="none" '
                       'stroke="#333" stroke-dasharray="4 2"/>')
            label = f"split {k} on {b}; inputs: {', '.join(ins) or 'none'}"
            out.append(f'<text x="10" y="{y + 15}" font-weight="bold">{html.escape(label)}</text>')
            y += row_h
        colour = PALETTE[r.backend_index % len(PALETTE)] if r.backend_index >= 0 else "#cccccc"
        copied = [s for s in r.sources if "#" in s]
        out.append(f'<g class="node"><rect x="20" y="{y + 2}" width="16" height="{row_h - 6}" fill="{colour}"/>'
                   f'<text x="44" y="{y + 15}">{html.escape(f"{r.index:3d} {r.name}  {r.op}  [{r.backend} {r.cause}]")}'
                   '</text>'
                   + (f'<text x="560" y="{y + 15}" fill="#b00">{html.escape("reads copy " + ", ".join(copied))}</text>'
                      if copied else "") + "</g>")
        y += row_h
    out.append("</svg>")
    return "\n".join(out)


def main(source: str, n_backends: int, svg_path: str | None) -> int:
    spec, n = load_spec(source, n_backends)
    ex = explain(spec, n)
    print(table(ex))
    target = Path(svg_path or f"{Path(source).stem}.svg")
    target.write_text(svg(ex), encoding="utf-8")
    print(f"wrote {target}")
    return 0
