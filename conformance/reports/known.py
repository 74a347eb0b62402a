"""Known failures: a TOML file of accepted differences of some targets, each with its reason.

    [[known]]
    clause = "CPU-19"                 # or: check = "graphcompute.plans_and_changed_graphs"
    reason = "our port copies the node list into the plan (CPU-19's correction); held to profile rc8 here"
    targets = ["myport-*"]            # fnmatch patterns against the target name; default ["*"]

Each entry names exactly one of `clause` (an ID), `check` (a check name) or `area` (`SCHED`).
An entry applies to a clause verdict when the target name matches one of its `targets` and it
names the clause, the clause's area, or one of the checks behind the verdict. A failing,
crashing or timed-out clause it applies to becomes `xfail`, with the entry's reason; when every clause an
entry applies to passed, those clauses become `xpass` (the known failure is gone: reported, an
error under `--strict`). A malformed file is a `KnownFileError` (exit code 2), raised before
any check runs.

Shipped files live in conformance/known/ (package data); `default_for(target)` names the one a
target uses when `--known` is not given.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ggspec.reference.clauses import catalogue

from ..engine.results import FAILING, ClauseVerdict, Status
from ..errors import KnownFileError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KNOWN_DIR = Path(__file__).resolve().parents[1] / "known"  # the shipped files: conformance/known/

#: target name -> the shipped known-failures file it uses by default (`known/<target>.toml`)
DEFAULTS = {p.stem: p.name for p in sorted(KNOWN_DIR.glob("*.toml"))}

_KEYS = {"clause", "check", "area", "reason", "targets"}

#: what a known entry turns into xfail: a failing status, or one already xfail (by another entry)
_BECOMES_XFAIL: tuple[Status, ...] = (*FAILING, "xfail")


@dataclass(frozen=True)
class Known:
    kind: str  # "clause" | "check" | "area"
    name: str
    reason: str
    targets: tuple[str, ...]

    def for_target(self, target: str) -> bool:
        return any(fnmatch.fnmatchcase(target, p) for p in self.targets)

    def applies(self, v: ClauseVerdict) -> bool:
        if self.kind == "clause":
            return v.id == self.name
        if self.kind == "area":
            return v.id.split("-")[0] == self.name
        return self.name in v.checks

    def label(self) -> str:
        return f"{self.kind} {self.name}"


def default_for(target: str) -> Path | None:
    name = DEFAULTS.get(target)
    return KNOWN_DIR / name if name else None


def load(path: Path, checks: Mapping[str, object]) -> list[Known]:
    """Read and validate a known-failures file against the clause catalogue and the checks (by
    name: `checks` is the registry, engine.registry.CHECKS)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KnownFileError(f"known-failures file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KnownFileError(f"known-failures file {path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise KnownFileError(f"known-failures file {path}: not valid TOML ({exc})") from None
    extra = set(data) - {"known"}
    if extra:
        raise KnownFileError(f"known-failures file {path}: unknown top-level key(s) {', '.join(sorted(extra))} "
                             "(entries go in [[known]] tables)")
    entries = data.get("known", [])
    if not isinstance(entries, list):
        raise KnownFileError(f"known-failures file {path}: 'known' must be an array of tables ([[known]])")
    cat = catalogue()
    areas = {c.area for c in cat.values()}
    out = []
    for i, e in enumerate(entries, 1):
        where = f"known-failures file {path}, entry {i}"
        if not isinstance(e, dict):
            raise KnownFileError(f"{where}: not a table")
        bad = set(e) - _KEYS
        if bad:
            raise KnownFileError(f"{where}: unknown key(s) {', '.join(sorted(bad))}")
        named = [k for k in ("clause", "check", "area") if k in e]
        if len(named) != 1:
            raise KnownFileError(f"{where}: needs exactly one of clause, check or area (has {len(named)})")
        kind = named[0]
        name = e[kind]
        reason = e.get("reason")
        targets = e.get("targets", ["*"])
        if not isinstance(name, str):
            raise KnownFileError(f"{where}: {kind} must be a string")
        if not isinstance(reason, str) or not reason.strip():
            raise KnownFileError(f"{where}: needs a reason (a non-empty string)")
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            raise KnownFileError(f"{where}: targets must be a non-empty list of strings (fnmatch patterns)")
        if kind == "clause" and name not in cat:
            raise KnownFileError(f"{where}: no clause {name} in the spec")
        if kind == "area" and name not in areas:
            raise KnownFileError(f"{where}: no area {name} (areas: {' '.join(sorted(areas))})")
        if kind == "check" and name not in checks:
            raise KnownFileError(f"{where}: no check {name} (see ggspec list --checks)")
        out.append(Known(kind, name, reason.strip(), tuple(targets)))
    return out


def apply(verdicts: list[ClauseVerdict], known: list[Known], target: str) -> list[ClauseVerdict]:
    """Turn the failing clauses a known entry applies to into xfail, and the clauses of an entry
    whose clauses all passed into xpass (see the module's docstring)."""
    mine = [k for k in known if k.for_target(target)]
    out = list(verdicts)
    for k in mine:
        hit = [i for i, v in enumerate(out) if k.applies(v) and v.status not in ("uncovered", "unsupported")]
        failing = [i for i in hit if out[i].status in _BECOMES_XFAIL]
        for i in failing:
            v = out[i]
            if v.status != "xfail":
                out[i] = replace(v, status="xfail", detail=f"known failure ({k.label()}): {k.reason} — was {v.status}: "
                                                           f"{v.detail}")
        if not failing:
            for i in hit:
                v = out[i]
                if v.status == "pass":
                    out[i] = replace(v, status="xpass", detail=f"known failure ({k.label()}) passed: {k.reason}")
    return out
