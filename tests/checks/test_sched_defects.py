"""The scheduler checks catch real defects (tests/checks/sched_defects.py; one test file per planted
defect: tests/checks/test_sched_defect_pass2.py, _dedup.py, _eval_batch.py, so that pytest-xdist runs
them on different workers). Here: the same checks under the same seed pass on the default build,
and the failures' reproducers parse."""

from __future__ import annotations

from sched_defects import run_sched_checks, shrunk_case


def test_the_default_build_passes_those_checks() -> None:
    """The planted defects are off by default (the same checks, the same seed)."""
    results = run_sched_checks("native")
    assert all(r.status == "pass" for r in results), [(r.check, r.detail[:600]) for r in results if r.status != "pass"]


def test_reproducers_parse() -> None:
    text = ("replay('sched.x', target='native', profile='fixed',\n       args={'case': SchedCase(setup=SchedSetup("
            "devices=()), graph=SchedGraph(spec=GraphSpec(leafs=(), nodes=(Node(name='a', op='scale', srcs=('x',), "
            "params=(0.5,)),), outputs=('a',), graph_size=2048)))})\nEOF")
    case = shrunk_case(text)
    assert case is not None and [n.name for n in case.graph.spec.nodes] == ["a"]
