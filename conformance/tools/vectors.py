"""Graph vectors: a graph and the backends it runs on, saved as JSON, replayable on any target.

A vector (format `ggspec-vector/1`, documented in docs/vectors.md) holds a `GraphSpec`, the
virtual devices of the scheduler's set-up (the CPU is always the last backend), the user's
node assignments, and, for a vector that a failing check saved, that check's name and its other
arguments. `replay(vector, target, profile)` runs the vector's check, or the default scheduler
checks for a vector without one, through `differential` (reference vs target).

This package's folder holds example vectors: the two fixtures (`encoder.json`, `decoder.json`,
over GPU0 and the CPU) and shrunk failures that the suite found in planted defects.

The runner saves the shrunk failing example of a check whose arguments fit a vector (a graph,
a scheduler case, devices and plain values) with `note_for(exc, directory)`.
"""

from __future__ import annotations

import hashlib
import json
import os
import typing
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile
from ggspec.reference.types import Op
from ggspec.reference.vdev import ALL_OPS, VDevParams

from ..inputs.graphspec import GraphSpec
from ..inputs.strategies import SchedCase, SchedGraph, SchedSetup

FORMAT = "ggspec-vector/1"

#: what a vector without a check replays: the scheduler checks that take one SchedCase
DEFAULT_CHECKS = ("sched.pass4_splits", "sched.pass4_inputs_once", "sched.pass4_copies", "sched.compute_copies_then_runs")

_PLAIN = (int, float, str, bool, type(None))


def _device_json(p: VDevParams) -> dict[str, Any]:
    d = asdict(p)
    d["ops"] = "all" if p.ops == ALL_OPS else sorted(o.name for o in p.ops)
    if p.absent:
        d["absent"] = sorted(p.absent)
    else:
        d.pop("absent", None)  # the optional entries are all there: vectors written before the knob read the same
    return d


def _device_from(d: dict[str, Any]) -> VDevParams:
    ops = d.get("ops", "all")
    return VDevParams(**{**d, "ops": ALL_OPS if ops == "all" else frozenset(Op[o] for o in ops),
                         "absent": frozenset(d.get("absent", ()))})


@dataclass(frozen=True)
class Vector:
    graph: GraphSpec
    #: the virtual devices in priority order; the CPU backend comes after them
    devices: tuple[VDevParams, ...] = (VDevParams(name="GPU0"),)
    assign: tuple[tuple[str, int], ...] = ()
    caches: tuple[str, ...] = ()
    want: frozenset[str] = frozenset()
    stop: frozenset[str] = frozenset()
    #: the check that saved it (replayed as it was), or None (the default checks)
    check: str | None = None
    #: that check's other arguments, by name (plain JSON values)
    args: dict[str, Any] = field(default_factory=dict)
    clauses: tuple[str, ...] = ()
    #: where it was found: target, profile, seed, the first line of the failure
    found: dict[str, Any] = field(default_factory=dict)

    @property
    def n_backends(self) -> int:
        return len(self.devices) + 1

    def sched_case(self) -> SchedCase:
        return SchedCase(SchedSetup(self.devices), SchedGraph(self.graph, self.assign, self.caches), self.want, self.stop)

    def to_json(self) -> str:
        return json.dumps({
            "format": FORMAT,
            "check": self.check,
            "clauses": list(self.clauses),
            "found": self.found,
            "devices": [_device_json(d) for d in self.devices],
            "assign": [list(a) for a in self.assign],
            "caches": list(self.caches),
            "want": sorted(self.want),
            "stop": sorted(self.stop),
            "args": self.args,
            "graph": asdict(self.graph),
        }, indent=1) + "\n"

    @staticmethod
    def from_json(text: str) -> Vector:
        """A vector, or a bare GraphSpec (`GraphSpec.to_json()`: one device GPU0, no check)."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        try:
            if not isinstance(d, dict):
                raise ValueError("not a JSON object")
            if "format" not in d:
                return Vector(GraphSpec.from_json(text))
            if d["format"] != FORMAT:
                raise ValueError(f"format {d['format']!r}, expected {FORMAT!r}")
            return Vector(
                GraphSpec.from_json(json.dumps(d["graph"])),
                tuple(_device_from(x) for x in d.get("devices", [])),
                tuple((str(n), int(b)) for n, b in d.get("assign", [])),
                tuple(d.get("caches", [])),
                frozenset(d.get("want", [])),
                frozenset(d.get("stop", [])),
                d.get("check"),
                dict(d.get("args", {})),
                tuple(d.get("clauses", [])),
                dict(d.get("found", {})),
            )
        except KeyError as exc:
            raise ValueError(f"not a graph vector (a JSON object with leafs, nodes and outputs): missing key {exc}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a graph vector (a JSON object with leafs, nodes and outputs): {type(exc).__name__}: "
                             f"{exc}") from None

    @staticmethod
    def load(path: str | Path) -> Vector:
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{path}: no such vector file")
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: cannot read it: {exc}") from None
        try:
            return Vector.from_json(text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None


# --- from a check's example, and back ------------------------------------------------------------


def _hints(check_name: str) -> dict[str, Any]:
    from ..engine.registry import CHECKS
    from ..engine.runner import load_checks

    load_checks()
    if check_name not in CHECKS:
        raise ValueError(f"no check {check_name!r}")
    hints = typing.get_type_hints(CHECKS[check_name].scenario)
    return {name: hints.get(name, Any) for name in CHECKS[check_name].strategies}


def _plain(value: Any) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return False


def from_example(check_name: str, clauses: Sequence[str], args: dict[str, Any], found: dict[str, Any]) -> Vector | None:
    """The vector of one example of a check, or None when an argument does not fit a vector
    (only a graph, a scheduler case or set-up, a device and plain values do) or there is no graph."""
    graph: GraphSpec | None = None
    devices: tuple[VDevParams, ...] | None = None
    extra: dict[str, Any] = {}
    case: SchedCase | None = None
    for name, value in args.items():
        if isinstance(value, SchedCase):
            case = value
        elif isinstance(value, GraphSpec):
            graph = value
        elif isinstance(value, SchedSetup):
            devices = value.devices
        elif isinstance(value, VDevParams):
            devices = (value,)
        elif _plain(value):
            extra[name] = list(value) if isinstance(value, tuple) else value
        else:
            return None
    if case is not None:
        if graph is not None:
            return None
        return Vector(case.graph.spec, case.setup.devices, case.graph.assign, case.graph.caches, case.want, case.stop,
                      check_name, extra, tuple(clauses), found)
    if graph is None:
        return None
    return Vector(graph, devices if devices is not None else (), check=check_name, args=extra, clauses=tuple(clauses),
                  found=found)


def check_args(vector: Vector, check_name: str) -> dict[str, Any]:
    """The arguments of `check_name` rebuilt from `vector` (by each parameter's type)."""
    out: dict[str, Any] = {}
    for name, hint in _hints(check_name).items():
        if hint is SchedCase:
            out[name] = vector.sched_case()
        elif hint is GraphSpec:
            out[name] = vector.graph
        elif hint is SchedSetup:
            out[name] = SchedSetup(vector.devices)
        elif hint is VDevParams:
            out[name] = vector.devices[0] if vector.devices else VDevParams()
        elif name in vector.args:
            value = vector.args[name]
            origin = typing.get_origin(hint)
            out[name] = tuple(value) if origin is tuple and isinstance(value, list) else value
        else:
            raise ValueError(f"the vector has no value for argument {name!r} of {check_name}")
    return out


# --- replay --------------------------------------------------------------------------------------


@dataclass
class Replayed:
    check: str
    agree: bool
    text: str


def replay(vector: Vector, target: str, profile: Profile) -> list[Replayed]:
    """Run the vector's check (or DEFAULT_CHECKS) on the reference and on `target`."""
    from ..engine.differential import differential
    from ..engine.registry import CHECKS
    from ..errors import Mismatch

    names = [vector.check] if vector.check else list(DEFAULT_CHECKS)
    out = []
    for name in names:
        args = check_args(vector, name)
        try:
            ex = differential(CHECKS[name], args, target, profile)
        except Mismatch as exc:
            out.append(Replayed(name, False, str(exc)))
            continue
        lines = [f"reference {ex.expected.ending}, {target} {ex.actual.ending}: agree"]
        lines += [f"  {label}" for label, _ in ex.expected.observations]
        lines += [f"  note: {n}" for n in ex.notes]
        out.append(Replayed(name, True, "\n".join(lines)))
    return out


def main(path: str, target: str, profile: Profile) -> int:
    """`ggspec replay VECTOR --target T`: 0 when every check agrees, 1 otherwise."""
    vector = Vector.load(path)
    results = replay(vector, target, profile)
    for r in results:
        print(f"{r.check}: {r.text}")
    bad = [r.check for r in results if not r.agree]
    print(f"{path}: {len(results) - len(bad)} of {len(results)} check(s) agree on {target} ({profile.value})"
          + (f"; differing: {' '.join(bad)}" if bad else ""))
    return 1 if bad else 0


# --- saving the shrunk failure of a run ----------------------------------------------------------


def vector_dir(repro_dir: str | None) -> Path:
    """Where a run saves vectors: <repro dir>/vectors (the run's folder: --repro-dir, else
    $GGSPEC_REPRO_DIR), else the cache's vectors/ folder (one folder, each file named by its
    content's hash: nothing piles up, nothing goes to the temporary folder)."""
    base = repro_dir or os.environ.get("GGSPEC_REPRO_DIR")
    if base:
        return Path(base) / "vectors"
    from ..adapters.external import cache_dir

    return cache_dir() / "vectors"


def note_for(exc: BaseException, repro_dir: str | None, seed: int | None = None) -> str:
    """For a differential.Mismatch whose example fits a vector: save it, return the line to print."""
    ex = getattr(exc, "example", None)
    target_name = getattr(exc, "target_name", None)
    profile = getattr(exc, "profile", None)
    if ex is None or target_name is None or profile is None:
        return ""
    first = str(exc).splitlines()[0] if str(exc) else ""
    found = {"target": target_name, "profile": profile.value, "seed": seed, "failure": first}
    try:
        vector = from_example(ex.check.name, ex.check.clauses, ex.args, found)
        if vector is None:
            return ""
        directory = vector_dir(repro_dir)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{ex.check.name}-{hashlib.sha256(vector.to_json().encode()).hexdigest()[:12]}.json"
        path.write_text(vector.to_json(), encoding="utf-8")
    except Exception as err:  # noqa: BLE001 - a vector that cannot be saved must not hide the failure
        return f"\nvector: could not be saved ({type(err).__name__}: {err})"
    return f"\nvector: {path}\n  ggspec replay {path} --target {target_name} --profile {profile.value}"
