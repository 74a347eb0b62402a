"""`ggspec explain`: for a fixture, a Python file defining SPEC, or a JSON vector, the table lists
every node, and the Graphviz drawing is SVG that names every node, draws every edge from a source
(through the scheduler's copy where pass 4 made one), boxes each split, gives each tensor the
pass that decided it as a tooltip, and lists in its legend only the backends that got a tensor."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ggspec.conformance.inputs.fixtures import FIXTURES
from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node
from ggspec.conformance.tools.explain import Explained, explain

pytest.importorskip("graphviz")
if shutil.which("dot") is None:  # Debian's graphviz package
    pytest.skip("Graphviz's dot is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"

#: a small graph over two backends: weights on the device, an input on the CPU, a view
SMALL = GraphSpec(
    (Leaf("w", 0, (4, 4), 0, weights=True, seed=1), Leaf("x", 0, (4, 2), 1, seed=2)),
    (Node("mm", "mul_mat", ("w", "x")), Node("half", "scale", ("mm",), (0.5,)),
     Node("row", "view", ("half",), (4, 1, 16, 16)), Node("out", "add", ("x", "row"))),
    ("out",),
)


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", "explain", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def table_nodes(stdout: str) -> list[str]:
    """The node names of the table's rows (`index  name  op ...`)."""
    return [m.group(1) for m in (re.match(r"\s*\d+  (\S+)\s", line) for line in stdout.splitlines()) if m]


class Drawing:
    """What an SVG written by Graphviz shows: nodes (id → text lines, tooltip), edges, clusters."""

    def __init__(self, path: Path) -> None:
        root = ET.parse(path).getroot()  # well-formed, or this raises
        assert root.tag == f"{SVG}svg"
        self.nodes: dict[str, tuple[list[str], str]] = {}
        self.edges: set[tuple[str, str]] = set()
        self.clusters: dict[str, list[str]] = {}
        for g in root.iter(f"{SVG}g"):
            title = g.findtext(f"{SVG}title") or ""
            texts = ["".join(t.itertext()).replace("\xa0", " ") for t in g.iter(f"{SVG}text")]
            if g.get("class") == "node":
                tips = [a.get(f"{XLINK}title", "") for a in g.iter(f"{SVG}a")]
                self.nodes[title] = (texts, tips[0] if tips else "")
            elif g.get("class") == "edge":
                tail, head = title.split("->")
                self.edges.add((tail, head))
            elif g.get("class") == "cluster":
                self.clusters[title] = texts

    def by_name(self) -> dict[str, str]:
        """First text line (the tensor's name) → node id."""
        return {texts[0]: nid for nid, (texts, _) in self.nodes.items() if texts}


def check_drawing(ex: Explained, svg: Path) -> Drawing:
    d = Drawing(svg)
    ids = d.by_name()
    for r in ex.rows:  # every node, with op, shape and type, and the pass that decided it
        assert r.name in ids, r.name
        texts, tip = d.nodes[ids[r.name]]
        assert texts[1].startswith(r.op) and f"{r.type}[" in texts[1], texts
        assert r.cause and f"({r.cause})" in tip and r.backend in tip, tip
    copies = {c.name: c for c in ex.copies}
    for r in ex.rows:  # every edge from a source, through the copy where pass 4 made one
        for src in r.sources:
            assert (ids[src], ids[r.name]) in d.edges, (src, r.name)
            if src in copies:
                assert (ids[copies[src].source], ids[src]) in d.edges, (copies[src].source, src)
    assert len(d.edges) == len({(s, r.name) for r in ex.rows for s in r.sources} | {(c.source, c.name) for c in ex.copies})
    for k, (backend, _, _, _) in enumerate(ex.splits):  # one cluster per split, named by its backend
        assert f"split {k} on {backend}" in d.clusters[f"cluster_split{k}"]
    for c in ex.copies:
        assert "copy of " + c.source in d.nodes[ids[c.name]][1]
    return d


@pytest.mark.parametrize(("fixture", "backends"), [("encoder", 3), ("encoder", 2), ("decoder", 2), ("decoder", 3)])
def test_fixtures(fixture: str, backends: int, tmp_path: Path) -> None:
    svg = tmp_path / f"{fixture}.svg"
    proc = run(fixture, "--backends", str(backends), "--svg", str(svg))
    assert proc.returncode == 0, proc.stderr
    names = {n.name for n in FIXTURES[fixture](backends).nodes}
    assert set(table_nodes(proc.stdout)) == names and len(table_nodes(proc.stdout)) == len(names)
    assert f"over {', '.join([f'GPU{i}' for i in range(backends - 1)] + ['CPU'])}" in proc.stdout
    assert f"wrote {svg}" in proc.stdout
    ex = explain(FIXTURES[fixture](backends), backends)
    assert {r.name for r in ex.rows} == names
    check_drawing(ex, svg)


def test_encoder_copies_are_nodes_on_the_edges_they_replace(tmp_path: Path) -> None:
    """Over GPU0, GPU1 and the CPU the encoder's input is copied to each device: `GPU0#inp` sits
    between `inp` and the first layer norm, and the direct edge is gone."""
    ex = explain(FIXTURES["encoder"](3), 3)
    svg = tmp_path / "e.svg"
    assert run("encoder", "--backends", "3", "--svg", str(svg)).returncode == 0
    d = check_drawing(ex, svg)
    ids = d.by_name()
    assert {"GPU0#inp", "GPU1#inp"} <= {c.name for c in ex.copies}
    assert (ids["inp"], ids["GPU0#inp"]) in d.edges and (ids["GPU0#inp"], ids["ln0.norm"]) in d.edges
    assert (ids["inp"], ids["ln0.norm"]) not in d.edges


def test_legend_leaves_out_backends_without_a_tensor(tmp_path: Path) -> None:
    """Over four backends the encoder uses GPU0, GPU1 and the CPU: GPU2 is not in the legend."""
    svg = tmp_path / "e4.svg"
    proc = run("encoder", "--backends", "4", "--svg", str(svg))
    assert proc.returncode == 0, proc.stderr
    d = Drawing(svg)
    assert d.clusters["cluster_legend"] == ["backends"]
    legend = sorted(texts[0] for nid, (texts, _) in d.nodes.items() if nid.startswith("legend"))
    assert legend == ["CPU", "GPU0", "GPU1"]


def test_png(tmp_path: Path) -> None:
    png = tmp_path / "d.png"
    proc = run("decoder", "--png", str(png))
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and f"wrote {png}" in proc.stdout


def test_python_file_with_spec(tmp_path: Path) -> None:
    source = tmp_path / "small.py"
    source.write_text("from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node\n"
                      f"SPEC = {SMALL!r}\nN_BACKENDS = 2\n", encoding="utf-8")
    svg = tmp_path / "small.svg"
    proc = run(str(source), "--svg", str(svg))
    assert proc.returncode == 0, proc.stderr
    assert set(table_nodes(proc.stdout)) == {n.name for n in SMALL.nodes}
    assert "GPU0#x" in proc.stdout  # the CPU input copied to the device
    check_drawing(explain(SMALL, 2), svg)


def test_json_graph_and_default_svg_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --svg the drawing goes under the cache, not into the current folder, and the
    output says where."""
    vector = tmp_path / "small.json"
    vector.write_text(SMALL.to_json(), encoding="utf-8")
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))
    proc = run(str(vector), "--backends", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    where = tmp_path / "cache" / "explain" / "small.svg"
    assert f"wrote {where}" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "small.json"]
    check_drawing(explain(SMALL, 2), where)


def test_saved_vector_brings_its_devices(tmp_path: Path) -> None:
    """A vector file names its devices: conformance/vectors/encoder.json is over GPU0 and the CPU."""
    svg = tmp_path / "v.svg"
    proc = run(str(ROOT / "conformance" / "vectors" / "encoder.json"), "--backends", "5", "--svg", str(svg))
    assert proc.returncode == 0, proc.stderr
    assert "over GPU0, CPU" in proc.stdout


def test_bad_source_is_one_clear_line(tmp_path: Path) -> None:
    proc = run(str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "neither a fixture" in proc.stderr
