"""Known failures: a TOML file of accepted differences of some targets, each with its reason.

    [[known]]
    clause = "CPU-19"                 # or: check = "graphcompute.plans_and_changed_graphs"
    reason = "our port copies the node list into the plan (CPU-19's correction); held to profile rc8 here"
    targets = ["myport-*"]            # fnmatch patterns against the target name; default ["*"]
    flaky = true                      # optional: the difference shows in some runs only (see below)

A reason that several entries give can be written once, in a `[reasons]` table (`key = "text"`),
and the entries give its key (`reason = "key"`); the shipped files share theirs in
known/_reasons.toml (written by tools/known_files.py, which writes the shipped files).

Each entry names exactly one of `clause` (an ID), `check` (a check name) or `area` (`SCHED`).
An entry applies to a clause verdict when the target name matches one of its `targets` and it
names the clause, the clause's area, or one of the checks behind the verdict (of a failing
verdict: one of the checks that failed it). A failing, crashing or timed-out clause becomes
`xfail`, with the reason of an entry that applies, when an entry names the clause or its area, or
when the file's `check` entries name every check that failed it (a failing check no entry names
keeps the clause failing, whatever other checks of it the file lists); when every clause an
entry applies to passed, those clauses become `xpass` (the known failure is gone: reported, an
error under `--strict`). An entry with `flaky = true` is a difference that no pinned example can
make every run show (it depends on where malloc puts a buffer, say; its reason says on what):
its clauses become xfail when they fail and stay `pass` when they pass, never xpass. A
malformed file is a `KnownFileError` (exit code 2), raised before
any check runs.

Shipped files live in conformance/known/ (package data); `default_for(target)` names the one a
target uses when `--known` is not given.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import catalogue

from ..engine.results import FAILING, ClauseVerdict, Status
from ..errors import KnownFileError
from ..names import clause_id, did_you_mean, unknown_clause

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KNOWN_DIR = Path(__file__).resolve().parents[1] / "known"  # the shipped files: conformance/known/

#: target name -> the shipped known-failures file it uses by default (`known/<target>.toml`)
DEFAULTS = {p.stem: p.name for p in sorted(KNOWN_DIR.glob("*.toml")) if not p.name.startswith("_")}
#: the reasons several shipped entries give, written once (`[reasons]`, key -> text; tools/known_files.py)
REASONS_FILE = "_reasons.toml"
_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

_KEYS = {"clause", "check", "area", "reason", "targets", "flaky"}

#: what a known entry turns into xfail: a failing status, or one already xfail (by another entry)
_BECOMES_XFAIL: tuple[Status, ...] = (*FAILING, "xfail")


@dataclass(frozen=True)
class Known:
    kind: str  # "clause" | "check" | "area"
    name: str
    reason: str
    targets: tuple[str, ...]
    #: the difference shows in some runs only: a pass is not an xpass (the module's docstring)
    flaky: bool = False

    def for_target(self, target: str) -> bool:
        return any(fnmatch.fnmatchcase(target, p) for p in self.targets)

    def applies(self, v: ClauseVerdict) -> bool:
        """The entry names the clause, its area, or one of the checks behind the verdict (of a
        failing verdict: one of the checks that failed it)."""
        if self.kind == "clause":
            return v.id == self.name
        if self.kind == "area":
            return v.id.split("-")[0] == self.name
        return self.name in (failing_checks(v) if v.status in FAILING else v.checks)

    def label(self) -> str:
        return f"{self.kind} {self.name}{' (flaky)' if self.flaky else ''}"


def default_for(target: str) -> Path | None:
    name = DEFAULTS.get(target)
    return KNOWN_DIR / name if name else None


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KnownFileError(f"known-failures file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KnownFileError(f"known-failures file {path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise KnownFileError(f"known-failures file {path}: not valid TOML ({exc})") from None


def _reason_table(path: Path, table: Any, where: str) -> dict[str, str]:
    if not isinstance(table, dict) or not all(isinstance(k, str) and _KEY.match(k) and isinstance(v, str) and v.strip()
                                              for k, v in table.items()):
        raise KnownFileError(f"{where}: [reasons] must map keys (lowercase letters, digits, . _ -) to non-empty strings")
    return dict(table)


def raw_entries(path: Path, names: Callable[[dict[str, Any], str], None] | None = None) -> list[dict[str, Any]]:
    """The file's [[known]] tables as written, each `reason` resolved to its text: a key of the
    file's own `[reasons]` table or of the folder's shared `_reasons.toml`, else the text itself.
    `names(entry, where)` checks what an entry names before its reason is looked up (a misspelt
    clause is reported as that, not as its one-word reason)."""
    data = _read(path)
    extra = set(data) - {"known", "reasons"}
    if extra:
        raise KnownFileError(f"known-failures file {path}: unknown top-level key(s) {', '.join(sorted(extra))} "
                             "(entries go in [[known]] tables, shared reasons in [reasons])")
    shared_path = path.parent / REASONS_FILE
    shared = (_reason_table(shared_path, _read(shared_path).get("reasons", {}), f"{shared_path}")
              if shared_path.is_file() and path.name != REASONS_FILE else {})
    own = _reason_table(path, data.get("reasons", {}), f"known-failures file {path}")
    reasons = {**shared, **own}
    entries = data.get("known", [])
    if not isinstance(entries, list):
        raise KnownFileError(f"known-failures file {path}: 'known' must be an array of tables ([[known]])")
    out = []
    used: set[str] = set()
    for i, e in enumerate(entries, 1):
        where = f"known-failures file {path}, entry {i}"
        if not isinstance(e, dict):
            raise KnownFileError(f"{where}: not a table")
        if names is not None:
            names(e, where)
        reason = e.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise KnownFileError(f"{where}: needs a reason (a non-empty string, or a key of [reasons])")
        if reason in reasons:
            used.add(reason)
            reason = reasons[reason]
        elif _KEY.match(reason):
            raise KnownFileError(f"{where}: no reason named {reason!r} (in [reasons] or {REASONS_FILE}; a reason of "
                                 "one word is read as the key of one: write a sentence)")
        out.append({**e, "reason": reason.strip()})
    unused = sorted(set(own) - used)
    if unused:
        raise KnownFileError(f"known-failures file {path}: [reasons] no entry gives: {', '.join(unused)}")
    return out


def _named(e: dict[str, Any], where: str, checks: Mapping[str, object], areas: set[str]) -> None:
    """What an entry names (one clause, check or area, known to the catalogue or the registry),
    and its keys."""
    bad = set(e) - _KEYS
    if bad:
        raise KnownFileError(f"{where}: unknown key(s) {', '.join(sorted(bad))}")
    named = [k for k in ("clause", "check", "area") if k in e]
    if len(named) != 1:
        raise KnownFileError(f"{where}: needs exactly one of clause, check or area (has {len(named)})")
    kind = named[0]
    name = e[kind]
    if not isinstance(name, str):
        raise KnownFileError(f"{where}: {kind} must be a string")
    if kind == "clause" and clause_id(name) is None:  # any case, as everywhere (names.py)
        raise KnownFileError(f"{where}: {unknown_clause(name)}")
    if kind == "area" and name not in areas:
        raise KnownFileError(f"{where}: no area {name} (areas: {' '.join(sorted(areas))})")
    if kind == "check" and name not in checks:
        raise KnownFileError(f"{where}: no check {name}{did_you_mean(name, checks)}; see ggspec list --checks")


def load(path: Path, checks: Mapping[str, object]) -> list[Known]:
    """Read and validate a known-failures file against the clause catalogue and the checks (by
    name: `checks` is the registry, engine.registry.CHECKS)."""
    areas = {c.area for c in catalogue().values()}
    entries = raw_entries(path, lambda e, where: _named(e, where, checks, areas))
    out = []
    for i, e in enumerate(entries, 1):
        where = f"known-failures file {path}, entry {i}"
        kind = next(k for k in ("clause", "check", "area") if k in e)
        name = str(clause_id(e[kind])) if kind == "clause" else e[kind]
        reason = e["reason"]
        targets = e.get("targets", ["*"])
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            raise KnownFileError(f"{where}: targets must be a non-empty list of strings (fnmatch patterns)")
        flaky = e.get("flaky", False)
        if not isinstance(flaky, bool):
            raise KnownFileError(f"{where}: flaky must be true or false")
        out.append(Known(kind, name, reason, tuple(targets), flaky))
    return out


def failing_checks(v: ClauseVerdict) -> list[str]:
    """The checks that failed a failing verdict (a report written before they were recorded:
    every check behind it)."""
    return v.failing or v.checks


def explained(v: ClauseVerdict, entries: list[Known]) -> bool:
    """A failing verdict is a known failure when an entry names its clause or area, or when
    `check` entries name every check that failed it: one failing check that no entry names is a
    failure, whatever other checks of the clause the file lists."""
    if any(k.kind != "check" and k.applies(v) for k in entries):
        return True
    named = {k.name for k in entries if k.kind == "check"}
    return bool(named) and set(failing_checks(v)) <= named


def apply(verdicts: list[ClauseVerdict], known: list[Known], target: str) -> list[ClauseVerdict]:
    """Turn the failing clauses a known entry applies to into xfail, and the clauses of an entry
    whose clauses all passed into xpass unless it is flaky (see the module's docstring)."""
    mine = [k for k in known if k.for_target(target)]
    out = list(verdicts)
    for k in mine:
        hit = [i for i, v in enumerate(out) if k.applies(v) and v.status not in ("uncovered", "unsupported", "skipped")]
        failing = [i for i in hit if out[i].status in _BECOMES_XFAIL and (out[i].status == "xfail" or explained(out[i], mine))]
        for i in failing:
            v = out[i]
            if v.status != "xfail":
                out[i] = replace(v, status="xfail", detail=f"known failure ({k.label()}): {k.reason} — was {v.status}: "
                                                           f"{v.detail}")
        if not failing and not k.flaky:
            for i in hit:
                v = out[i]
                if v.status == "pass":
                    out[i] = replace(v, status="xpass", detail=f"known failure ({k.label()}) passed: {k.reason}")
    return out
