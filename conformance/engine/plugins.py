"""The engine's plug points: what the engine needs from the packages above it, filled by them.

The engine runs checks on targets without importing an adapter, a check module or a tool: the
package's `__init__.py` plugs the defaults in (adapters/ for targets, checks/ for checks, the C
reproducer and the graph vector for failing examples). Another suite built on the engine can
plug its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ggspec.reference.clauses import Profile

if TYPE_CHECKING:
    from ..target import Target

#: (exception of a failing example, directory or None) -> the lines to add to its detail
FailureNote = Callable[[BaseException, "Path | None"], str]
#: (exception, directory or None, seed) -> the lines to add to its detail
VectorNote = Callable[[BaseException, "str | None", "int | None"], str]


@dataclass
class Plugins:
    #: (target name, profile or None) -> a fresh Target (adapters.make_target)
    make_target: Callable[[str, Profile | None], Target] | None = None
    #: (target name) -> None: fetch and build the target without loading it, which runs none of
    #: its code (adapters.prepare_target); run_check calls it before it forks a check's worker
    prepare_target: Callable[[str], None] | None = None
    #: called first in a worker forked for one example that needs a pristine process
    #: (adapters.capi.enter_pristine_worker)
    enter_pristine_worker: list[Callable[[], None]] = field(default_factory=list)
    #: packages whose every module registers checks when imported (conformance.checks)
    check_packages: list[str] = field(default_factory=list)
    #: modules the runner imports before forking its workers (the adapters' Python code)
    preload: list[str] = field(default_factory=list)
    #: a failing example of a C target as a C file (adapters.creproducer.note_for)
    c_reproducer: FailureNote | None = None
    #: a failing example that fits a graph vector, saved (tools.vectors.note_for)
    vector: VectorNote | None = None


PLUGINS = Plugins()


def make_target(name: str, profile: Profile | None = None) -> Target:
    """A fresh target of that name, through the plugged-in factory."""
    if PLUGINS.make_target is None:
        raise RuntimeError("no target factory is plugged in (import ggspec.conformance, which plugs adapters/ in)")
    return PLUGINS.make_target(name, profile)


def enter_pristine_worker() -> None:
    for fn in PLUGINS.enter_pristine_worker:
        fn()
