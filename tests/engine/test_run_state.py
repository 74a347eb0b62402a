"""No module-level settings in conformance/: what a run sets (the timeout, forking every example,
the errata and undefined behaviour seen) travels in a RunState the runner makes per check; a
worker's pipe and page live in isolate.WORKER, the C registry's process state in capi.PROCESS."""

from __future__ import annotations

import ast
from pathlib import Path

from ggspec.conformance.engine.differential import EXAMPLE_FACTOR, RunState

ROOT = Path(__file__).resolve().parents[2] / "conformance"


def test_no_one_element_list_settings_at_module_level() -> None:
    """The old pattern `NAME: list[bool] = [False]`, set from elsewhere through `NAME[0] = ...`."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.List) and len(value.elts) == 1 and isinstance(value.elts[0], ast.Constant):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Global):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} global {', '.join(node.names)}")
    assert not found, found


def test_a_run_state_is_fresh_for_each_check() -> None:
    a, b = RunState(example_timeout=2.0), RunState()
    a.errata_seen["X-1"] = ("fail", "seen")
    assert b.errata_seen == {} and b.example_timeout == 10.0
    assert a.example_limit() == EXAMPLE_FACTOR * 2.0
