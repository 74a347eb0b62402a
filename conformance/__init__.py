"""ggspec's conformance suite: the engine, what checks draw, the checks, the adapters, the reports
and the tools.

`ggspec check` (tools/cli.py) runs every check against one target and prints a per-clause
table. Checks are plain scenario functions over the `Target` protocol (target.py); the runner
(engine/runner.py) runs them through hypothesis, on the reference and on the target, in forked
workers so that a crashing target costs one verdict, not the run.

The public API — what a user imports; everything else is internal and may move (the old paths
of what moved are in one alias table, _moved.py, which warns once and names the new path):

    ggspec.conformance.check, .example      register a check of your own (engine/registry.py's
                                            `check` decorator and `example` pins; also `Check`,
                                            `Recorder`, `CHECKS` there)
    ggspec.conformance.Target               the protocol every target implements (target.py)
    ggspec.conformance.tools.replay.replay  replay a printed example on a target
    ggspec.conformance.inputs.strategies    what checks draw: tensors, views, graphs, scheduler cases
    ggspec.conformance.adapters.make_target a target by name (`ggspec list --targets`)
    ggspec.conformance.run                  a run from Python: `Plan` (plan.py), `execute`
    the `ggspec` command (tools/cli.py) and the pytest plugin (tools/pytest_plugin.py, `--ggspec`)

docs/guides/your-own-tests.md ("The public API") names the same. A failing run's printed
reproducer imports only these.

The folders, in the order they may import each other (each imports only those above it; run/
imports those and reports/; tools/ imports anything; tests/project/test_layers.py walks the
imports, deferred ones included):

    errors.py   every exception of the suite (one module, one CannotFetch)
    target.py   the protocol every adapter implements, and its one op table (OP_KINDS, op_call)
    target_names.py  what a target name says (parse, default_profile), read in one place
    names.py    the one rule for the names a user types (clause IDs, patterns, targets)
    version.py  `ggspec --version`
    engine/     runs one example on the reference and on a target and judges it (registry,
                differential with its RunState, isolate, after_ub), runs checks and gathers
                verdicts (runner, results: Status, FAILING and the one JSON encoding of a check
                result, stream); plugins.py is where the packages below plug in
    adapters/   the targets: reference, native, the C-API adapter, external/rc8/ggml-python builds,
                their version drift (drift.py) and C reproducers (creproducer.py)
    inputs/     what checks draw: graphspec (graphs as data), strategies, graph_strategies,
                fixtures, sched_scope (every tiny scheduler case)
    checks/     one module per spec chapter (check names AREA.function), the state machines,
                the deterministic examples
    reports/    what a run found, written out: terminal/JSON/JUnit (report), html, baseline,
                merge, known (the known-failures files' code)
    run/        a run's one home: a frozen plan (plan.py: from the CLI's options or the pytest
                plugin's), execute.py (runs a plan, judges it, picks the exit status), and the
                run's parts select, changed, cache, reuse. Front ends parse and print, run/
                decides, engine/ executes, reports/ write.
    tools/      the commands: cli, pytest_plugin, compare (front ends of run/), explain, listing,
                replay, vectors, sitegen, trace, versions, known_files (writes known/), areas,
                rc8lines
    known/, vectors/  data: the shipped known-failures files (shared reasons in _reasons.toml)
                and graph vectors

reports/ import only engine.results; the engine never imports an adapter, a check or a tool:
this module plugs the defaults into engine.plugins (below).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ggspec.reference.clauses import Profile

from ._moved import install
from .engine.plugins import PLUGINS

if TYPE_CHECKING:
    from .engine.registry import check, example
    from .target import Target

__all__ = ["Target", "check", "example"]


def _make_target(name: str, profile: Profile | None) -> Target:
    from .adapters import make_target

    return make_target(name, profile)


def _prepare_target(name: str) -> None:
    from .adapters import prepare_target

    prepare_target(name)


def _enter_pristine_worker() -> None:
    from .adapters.capi import enter_pristine_worker

    enter_pristine_worker()


def _c_reproducer(exc: BaseException, directory: Path | None) -> str:
    from .adapters.creproducer import note_for

    return note_for(exc, directory)


def _vector(exc: BaseException, repro_dir: str | None, seed: int | None) -> str:
    from .tools.vectors import note_for

    return note_for(exc, repro_dir, seed)


PLUGINS.make_target = _make_target
PLUGINS.prepare_target = _prepare_target
PLUGINS.enter_pristine_worker.append(_enter_pristine_worker)
PLUGINS.check_packages.append(f"{__name__}.checks")
PLUGINS.preload.extend(f"{__name__}.adapters.{m}" for m in ("capi", "native", "reference"))
PLUGINS.c_reproducer = _c_reproducer
PLUGINS.vector = _vector
install()


def __getattr__(name: str) -> object:
    """The public API's names at the package's top, imported when first asked for (a plain
    `import ggspec.conformance`, as the pytest plugin's loading does, stays light)."""
    if name in ("check", "example"):
        from .engine import registry

        return getattr(registry, name)
    if name == "Target":
        from .target import Target

        return Target
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
