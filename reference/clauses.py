"""Clauses: the catalogue read from spec/, and the two ways the model enforces them.

A clause head in `spec/*.md` looks like::

    ### TDATA-3: tensor_set stays inside the tensor
    - kind: assert
    - message: tensor write out of bounds
    - rc8: ggml-backend.c ggml_backend_tensor_set

`require(cond, "TDATA-3")` raises `SpecViolation` (carrying the ID and rc.8's message) when an
assert-kind clause is broken; rc.8 aborts there. `undefined(...)` raises `UndefinedBehaviour`
where rc.8 would crash or corrupt memory without an assert. `@implements("ID")` marks the
function that carries a behaviour clause, so the traceability matrix can find it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NoReturn, TypeVar

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"

_HEAD = re.compile(r"^### ([A-Z]+-\d+): (.+)$")
_KEY = re.compile(r"^- (kind|message|erratum|rc8|rc8-reviewed): (.+)$")


class Profile(enum.Enum):
    """Which semantics the model follows.

    RC8 is what rc.8's code does, errata included; FIXED is RC8 with each erratum's correction.
    """

    RC8 = "rc8"
    FIXED = "fixed"


@dataclass(frozen=True)
class Clause:
    id: str
    title: str
    kind: str  # "behaviour" | "assert" | "limit"
    message: str | None
    erratum: str | None
    chapter: str
    #: where rc.8's C says this (`- rc8:` head line: file + function or `fragment` anchors, or
    #: `none — reason`); conformance/tools/rc8lines.py resolves it to line ranges
    rc8: str | None = None
    #: when a person checked the `- rc8:` anchors against rc.8's lines (`- rc8-reviewed: DATE`);
    #: None: proposed by a script, not reviewed yet
    rc8_reviewed: str | None = None

    @property
    def area(self) -> str:
        return self.id.split("-")[0]


def parse_chapter(text: str, chapter: str) -> list[Clause]:
    """Read the clause heads of one spec chapter (code fences are skipped)."""
    for name, value in (("text", text), ("chapter", chapter)):
        if not isinstance(value, str):
            raise TypeError(f"parse_chapter: {name} must be a str, got {type(value).__name__}")
    clauses: list[Clause] = []
    lines = text.splitlines()
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_fence = not in_fence
        m = None if in_fence else _HEAD.match(line)
        if m is None:
            i += 1
            continue
        keys: dict[str, str] = {}
        i += 1
        while i < len(lines) and (k := _KEY.match(lines[i])):
            keys[k.group(1)] = k.group(2).strip()
            i += 1
        kind = keys.get("kind")
        if kind not in ("behaviour", "assert", "limit"):
            raise ValueError(f"spec/{chapter}: clause {m.group(1)} has no valid kind: {kind!r}")
        if kind == "assert" and "message" not in keys:
            raise ValueError(f"spec/{chapter}: assert clause {m.group(1)} has no message")
        clauses.append(
            Clause(m.group(1), m.group(2).strip(), kind, keys.get("message"), keys.get("erratum"), chapter,
                   keys.get("rc8"), keys.get("rc8-reviewed"))
        )
    return clauses


@cache
def catalogue() -> dict[str, Clause]:
    """Every clause of spec/, by ID."""
    found: dict[str, Clause] = {}
    for path in sorted(SPEC_DIR.glob("*.md")):
        if path.name == "README.md":
            continue
        for clause in parse_chapter(path.read_text(encoding="utf-8"), path.name):
            if clause.id in found:
                raise ValueError(f"clause {clause.id} is defined twice ({found[clause.id].chapter}, {path.name})")
            found[clause.id] = clause
    return found


def clause(clause_id: str) -> Clause:
    """The clause `clause_id` of spec/; UnknownClause (a LookupError) when spec/ has none."""
    found = catalogue().get(clause_id) if isinstance(clause_id, str) else None
    if found is None:
        raise UnknownClause(clause_id)
    return found


def _nearest_clause(clause_id: str) -> str | None:
    """The real clause ID nearest `clause_id` (difflib's closest match, case-insensitively)."""
    import difflib

    by_upper = {cid.upper(): cid for cid in catalogue()}
    near = difflib.get_close_matches(clause_id.upper(), list(by_upper), n=1, cutoff=0.5)
    return by_upper[near[0]] if near else None


T = TypeVar("T")


class SpecError(Exception):
    """Base of the model's errors; `clause_id` names the clause concerned."""

    def __init__(self, clause_id: str, text: str) -> None:
        super().__init__(f"[{clause_id}] {text}")
        self.clause_id = clause_id

    def __reduce__(self) -> tuple[object, ...]:
        """Picklable whatever a subclass's __init__ takes (errors cross from forked workers)."""
        return (_rebuild_error, (type(self), self.args, self.__dict__))


def _rebuild_error(cls: type[SpecError], args: tuple[object, ...], state: dict[str, object]) -> SpecError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class SpecViolation(SpecError):
    """An assert-kind clause is broken: rc.8 aborts with `message`."""

    def __init__(self, clause_id: str) -> None:
        c = clause(clause_id)
        if c.message is None:  # an explicit check, kept under python -O
            raise ValueError(f"SpecViolation({clause_id!r}): {clause_id} is not an assert-kind clause")
        super().__init__(clause_id, f"{c.title}: GGML_ASSERT: {c.message}")
        self.message = c.message


class UndefinedBehaviour(SpecError):
    """rc.8 would crash or corrupt memory here without an assert (a NULL call, say)."""


class NotBinding(UndefinedBehaviour):
    """An assert of rc.8's CPU code reached while a device with kernels of its own computes a
    node: the clause binds the CPU code (the CPU backend, and devices that compute with it), not
    that device, which may refuse the node or compute it otherwise (spec/core.md, "Devices with
    kernels of their own"); what it does is not judged."""


class UnknownClause(SpecError, LookupError):
    """A clause ID that spec/ does not define: the message names it and the nearest real one."""

    def __init__(self, clause_id: object) -> None:
        shown = repr(clause_id) if len(repr(clause_id)) <= 60 else repr(clause_id)[:57] + "..."
        if not isinstance(clause_id, str):
            text = f"clause_id must be a clause ID (a str such as 'TDATA-3'), not a {type(clause_id).__name__}: {shown}"
        else:
            near = _nearest_clause(clause_id)
            text = f"no clause {shown} in spec/" + (f" (the nearest is {near})" if near else "")
        Exception.__init__(self, text)
        self.clause_id = clause_id if isinstance(clause_id, str) else ""


class ModelOutOfMemory(MemoryError):
    """The reference itself could not get the memory to model a call (a huge buffer's bytes, a
    huge tensor's values): ggspec's own limit (its process's memory, `ulimit -v`), never a
    verdict on the program it models."""


class UsageError(SpecError, TypeError):
    """The caller passed something the C API cannot even express (a wrong Python type)."""


class UseAfterFree(UndefinedBehaviour):
    """An object is used after it was freed, or after what it depends on was (a context's
    tensors, a buffer's tensors). rc.8 reads freed memory here; the reference and native/'s
    wrapper raise this instead."""


def require(cond: bool, clause_id: str) -> None:
    """Enforce the assert-kind clause `clause_id`: raise SpecViolation when `cond` is false.

    (The model calls this millions of times a run: an ordinary call costs two identity tests.)"""
    if cond is True and type(clause_id) is str:
        return
    if not isinstance(cond, (bool, int)) and type(cond).__module__ != "numpy":  # numpy's bool_ too
        raise TypeError(f"require: cond must be a bool, got {type(cond).__name__}")
    if type(clause_id) is not str:
        raise UnknownClause(clause_id)
    if not cond:
        raise SpecViolation(clause_id)


def required(value: T | None, clause_id: str) -> T:
    """`value`, which the assert-kind clause `clause_id` requires to be set: SpecViolation when
    it is None (`require(value is not None, clause_id)` that also hands the value on)."""
    if type(clause_id) is not str:
        raise UnknownClause(clause_id)
    if value is None:
        raise SpecViolation(clause_id)
    return value


def undefined(clause_id: str, what: str) -> NoReturn:
    """rc.8 has no assert here and would crash: report it against `clause_id`."""
    raise UndefinedBehaviour(clause_id, f"undefined behaviour in rc.8: {what}")


F = TypeVar("F", bound=Callable[..., object])

#: clause ID -> qualified names of the functions marked as implementing it
IMPLEMENTERS: dict[str, list[str]] = {}


def implements(*clause_ids: str) -> Callable[[F], F]:
    """Mark the function that carries behaviour clause(s) `clause_ids`."""

    def mark(fn: F) -> F:
        for cid in clause_ids:
            clause(cid)  # unknown IDs fail at import time
            IMPLEMENTERS.setdefault(cid, []).append(f"{fn.__module__}.{fn.__qualname__}")
        return fn

    return mark
