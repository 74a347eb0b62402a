"""The random-graph check catches a real defect and shrinks it: native/ built with
GGSPEC_DEFECT_PERMUTE_STRIDES (PERMUTE moves each extent to its new axis but leaves the strides
where they were) fails `graph.random_graphs_compute` through the runner, and hypothesis' shrunk
failing example, read back from the reproducer in the failure's detail, is a graph of at most
three nodes with a PERMUTE among them.

Hypothesis reports every distinct failure it finds by default (an ExceptionGroup, whose text the
runner cannot turn into one reproducer); the test runs the check under a profile with
`report_multiple_bugs=False`, so the detail holds the one shrunk example.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node
from ggspec.native.build import build_variant
from ggspec.reference.clauses import Profile
from ggspec.reference.types import Op
from ggspec.reference.vdev import ALL_OPS, VDevParams
from hypothesis import settings

load_checks()

CHECK = "graph.random_graphs_compute"
SEED = 20261130


@pytest.fixture(scope="module")
def permute_defect(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("permute-defect")
    build_variant("ggspec_native_permute_defect", str(out), defines=["GGSPEC_DEFECT_PERMUTE_STRIDES"])
    return f"native:{out}:ggspec_native_permute_defect"


@pytest.fixture
def one_bug() -> Iterator[None]:
    """The current hypothesis profile, reporting only the simplest failure."""
    previous = settings._current_profile  # noqa: SLF001 - restored below
    settings.register_profile("ggspec-one-bug", parent=settings.default, report_multiple_bugs=False)
    settings.load_profile("ggspec-one-bug")
    try:
        yield
    finally:
        settings.load_profile(previous or "default")


def shrunk_spec(detail: str) -> GraphSpec:
    """The GraphSpec of the failing example in a failure's reproducer (`args={...}`)."""
    m = re.search(r"args=(\{.*\})\)\s*\nEOF", detail, re.S)
    assert m is not None, f"no reproducer in the detail:\n{detail}"
    args = eval(m.group(1), {"GraphSpec": GraphSpec, "Leaf": Leaf, "Node": Node, "VDevParams": VDevParams,  # noqa: S307
                             "ALL_OPS": ALL_OPS, "Op": Op, "frozenset": frozenset})
    spec = args["spec"]
    assert isinstance(spec, GraphSpec)
    return spec


def test_permute_defect_fails_and_shrinks_to_a_small_graph(permute_defect: str, one_bug: None) -> None:
    cfg = RunConfig(permute_defect, Profile.FIXED, max_examples=100, seed=SEED, c_reproducers=False)
    result = run_check(CHECKS[CHECK], cfg)
    assert result.status in ("fail", "crash"), f"the defect went unnoticed: {result}"
    spec = shrunk_spec(result.detail)
    assert 1 <= len(spec.nodes) <= 3, f"shrunk to {len(spec.nodes)} nodes:\n{spec.to_json()}"
    assert any(n.op == "permute" for n in spec.nodes), spec


def test_the_same_run_passes_on_the_build_without_the_defect(one_bug: None) -> None:
    cfg = RunConfig("native", Profile.FIXED, max_examples=100, seed=SEED, c_reproducers=False)
    result = run_check(CHECKS[CHECK], cfg)
    assert result.status == "pass", result.detail
