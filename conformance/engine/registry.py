"""The registry of checks: `@check` (a scenario with its clauses and strategies), `@example`
(its deterministic examples), `register_machine` (a state-machine check), and the `Recorder` a
scenario records its observations with. Every module of conformance/checks/ fills `CHECKS` at
import (engine.runner.load_checks imports them all).

A check's name is `AREA.function`: AREA is the module's `CHECK_AREA` when it sets one (so that a
renamed module keeps the names printed in reproducers and given to --select), else the module's
own name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ggspec.reference.clauses import Profile, clause
from hypothesis import strategies as st

from ..errors import MockOnly
from . import isolate

Scenario = Callable[..., None]


@dataclass(frozen=True)
class NotObservable:
    """What `mock_reading` gives where the device is not the mock: the reading asked
    for, the same text on both sides, so the observation compares equal and says why."""

    reading: str

    def __repr__(self) -> str:
        return f"not observable: {self.reading}"


def mock_reading(read: Callable[[], Any]) -> Any:
    """`read()`, a reading only the virtual device gives (`vdev_pending`, `vdev_counters`), to
    record. Under `--device webgpu` the device may be WebGPU, which has no such counters: then
    it is `NotObservable` on both sides and the scenario goes on, so that what the real device
    does show (data, placement, results) is still compared; the counters themselves are checked
    on the mock, in every run without `--device webgpu`."""
    try:
        return read()
    except MockOnly as exc:
        return NotObservable(exc.symbol)


class Recorder:
    """Collects a scenario's observations; in a forked worker each one reaches the parent at once."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []
        #: called after each observation (differential.LogTap: the entry log at that point)
        self.tap: Callable[[], None] | None = None

    def __call__(self, label: str, value: Any) -> None:
        item = (label, value)
        self.items.append(item)
        isolate.report(item)
        if self.tap is not None:
            self.tap()


#: (target name, profile) -> a RuleBasedStateMachine class driving that target
MachineFactory = Callable[[str, Profile], type[Any]]


@dataclass(frozen=True)
class Check:
    name: str
    clauses: tuple[str, ...]
    scenario: Scenario
    strategies: dict[str, st.SearchStrategy[Any]]
    module: str
    #: set for a state-machine check: the runner runs the machine instead of `scenario`
    machine: MachineFactory | None = None
    #: deterministic examples (see `example`): hypothesis runs them first under every seed
    examples: tuple[dict[str, Any], ...] = ()
    #: the run sizes (results.PROFILES) the check runs at; None: every size (see `only_at`)
    sizes: tuple[str, ...] | None = None


CHECKS: dict[str, Check] = {}


def check_name(fn: Scenario) -> str:
    """`AREA.function` (see the module's docstring)."""
    area = fn.__globals__.get("CHECK_AREA") or fn.__module__.rsplit(".", 1)[-1]
    return f"{area}.{fn.__name__}"


def check(*clauses: str, **strategies: st.SearchStrategy[Any]) -> Callable[[Scenario], Scenario]:
    """Register a scenario as a check covering `clauses`, its arguments drawn from `strategies`."""

    def register(fn: Scenario) -> Scenario:
        for cid in clauses:
            clause(cid)  # unknown IDs fail at import
        name = check_name(fn)
        if name in CHECKS:
            raise ValueError(f"check {name} registered twice")
        CHECKS[name] = Check(name, tuple(clauses), fn, dict(strategies), fn.__module__)
        return fn

    return register


def example(**args: Any) -> Callable[[Scenario], Scenario]:
    """A deterministic example of the check registered just below (write it above `@check`):
    the runner gives it to hypothesis as an explicit example, so whatever it reaches (an
    erratum, an undefined-behaviour point, a boundary) is reached under every seed."""

    def add(fn: Scenario) -> Scenario:
        name = check_name(fn)
        if name not in CHECKS or CHECKS[name].scenario is not fn:
            raise ValueError(f"@example must be written above the @check of {name}")
        add_example(name, args, first=True)  # decorators apply bottom-up: keep the source's order
        return fn

    return add


def add_example(name: str, args: dict[str, Any], first: bool = False) -> None:
    """Give the registered check `name` the deterministic example `args` (every argument)."""
    chk = CHECKS[name]
    if set(args) != set(chk.strategies):
        raise TypeError(f"an example of {name} gives {sorted(args)}; the check takes {sorted(chk.strategies)}")
    examples = (dict(args), *chk.examples) if first else (*chk.examples, dict(args))
    CHECKS[name] = replace(chk, examples=examples)


def only_at(*sizes: str, why: str) -> Callable[[Scenario], Scenario]:
    """Run the check registered just below (write it above `@check`) only at these run sizes
    (`--size`, results.PROFILES): a check whose every example is too slow for the smaller
    sizes. At any other size the runner reports it `unsupported`, saying `why` and the sizes
    it runs at, so the clause is never passed without being checked."""

    def mark(fn: Scenario) -> Scenario:
        name = check_name(fn)
        if name not in CHECKS or CHECKS[name].scenario is not fn:
            raise ValueError(f"@only_at must be written above the @check of {name}")
        CHECKS[name] = replace(CHECKS[name], sizes=tuple(sizes))
        SIZE_REASONS[name] = why
        return fn

    return mark


#: check name -> why it runs only at the sizes `only_at` gave it
SIZE_REASONS: dict[str, str] = {}


def _machine_only(t: Any, rec: Recorder, **args: Any) -> None:
    raise TypeError("a state-machine check has no single scenario: the runner runs its machine")


def register_machine(name: str, clauses: tuple[str, ...], factory: MachineFactory) -> None:
    """Register a hypothesis state machine as the check `name` covering `clauses`.

    `factory(target_name, profile)` returns the machine class; the runner runs it with
    `run_state_machine_as_test` under the run's settings (examples, seed), and a failure is
    blamed on `clauses`.
    """
    for cid in clauses:
        clause(cid)
    if name in CHECKS:
        raise ValueError(f"check {name} registered twice")
    CHECKS[name] = Check(name, tuple(clauses), _machine_only, {}, getattr(factory, "__module__", name), factory)
