"""`ggspec explain`: for a fixture, a Python file defining SPEC, or a JSON vector, the table
lists every node and the SVG is well-formed XML that names every node."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ggspec.conformance.fixtures import FIXTURES
from ggspec.conformance.graphspec import GraphSpec, Leaf, Node

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"

#: a small graph over two backends: weights on the device, an input on the CPU, a view
SMALL = GraphSpec(
    (Leaf("w", 0, (4, 4), 0, weights=True, seed=1), Leaf("x", 0, (4, 2), 1, seed=2)),
    (Node("mm", "mul_mat", ("w", "x")), Node("half", "scale", ("mm",), (0.5,)),
     Node("row", "view", ("half",), (4, 1, 16, 16)), Node("out", "add", ("x", "row"))),
    ("out",),
)


def explain(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", "explain", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def table_nodes(stdout: str) -> list[str]:
    """The node names of the table's rows (`index  name  op ...`)."""
    return [m.group(1) for m in (re.match(r"\s*\d+  (\S+)\s", line) for line in stdout.splitlines()) if m]


def svg_nodes(path: Path) -> list[str]:
    """The node names the SVG's node rows show (`index name  op  [backend pass]`)."""
    root = ET.parse(path).getroot()  # well-formed, or this raises
    assert root.tag == f"{SVG}svg"
    texts = ["".join(t.itertext()) for g in root.iter(f"{SVG}g") if g.get("class") == "node" for t in g.iter(f"{SVG}text")]
    return [m.group(1) for m in (re.match(r"\s*\d+ (\S+)  ", t) for t in texts) if m]


def check_output(proc: subprocess.CompletedProcess[str], svg: Path, names: set[str], shown: str | None = None) -> None:
    assert proc.returncode == 0, proc.stderr
    assert set(table_nodes(proc.stdout)) == names
    assert len(table_nodes(proc.stdout)) == len(names)
    assert set(svg_nodes(svg)) == names
    assert "split 0 on " in proc.stdout and f"wrote {shown or svg}" in proc.stdout


@pytest.mark.parametrize(("fixture", "backends"), [("encoder", 3), ("encoder", 2), ("decoder", 2), ("decoder", 3)])
def test_fixtures(fixture: str, backends: int, tmp_path: Path) -> None:
    svg = tmp_path / f"{fixture}.svg"
    proc = explain(fixture, "--backends", str(backends), "--svg", str(svg))
    check_output(proc, svg, {n.name for n in FIXTURES[fixture](backends).nodes})
    assert f"over {', '.join([f'GPU{i}' for i in range(backends - 1)] + ['CPU'])}" in proc.stdout


def test_python_file_with_spec(tmp_path: Path) -> None:
    source = tmp_path / "small.py"
    source.write_text("from ggspec.conformance.graphspec import GraphSpec, Leaf, Node\n"
                      f"SPEC = {SMALL!r}\nN_BACKENDS = 2\n", encoding="utf-8")
    svg = tmp_path / "small.svg"
    proc = explain(str(source), "--svg", str(svg))
    check_output(proc, svg, {n.name for n in SMALL.nodes})
    assert "GPU0#x" in proc.stdout  # the CPU input copied to the device


def test_json_vector_and_default_svg_path(tmp_path: Path) -> None:
    vector = tmp_path / "small.json"
    vector.write_text(SMALL.to_json(), encoding="utf-8")
    proc = explain(str(vector), "--backends", "2", cwd=tmp_path)
    check_output(proc, tmp_path / "small.svg", {n.name for n in SMALL.nodes}, shown="small.svg")


def test_bad_source_is_one_clear_line(tmp_path: Path) -> None:
    proc = explain(str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "neither a fixture" in proc.stderr
