"""The one rule for the names a user types: clause IDs, selection patterns, target names,
fixtures. `ggspec check`, `compare`, `clause`, `explain` and the known-failures files all go
through it, so they accept and refuse alike:

- a clause ID is case-insensitive everywhere (`tdata-3` is `TDATA-3`): `clause_id`;
- a name that is not one of the valid ones is answered with the nearest valid one, in the same
  line (`(did you mean TDATA-3?)`): `did_you_mean`, difflib's closest match, case-insensitively;
- `--select TDATA-3,TDATA-4` is two patterns: `split_patterns`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from ggspec.reference.clauses import catalogue

#: a comma outside a glob's [...] separates two patterns
_COMMA = re.compile(r",(?![^\[]*\])")


def nearest(value: str, choices: Iterable[str]) -> str | None:
    """The valid choice closest to `value` (compared case-insensitively), or None when none is close."""
    by_lower: dict[str, str] = {}
    for c in choices:
        by_lower.setdefault(c.lower(), c)
    near = difflib.get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[near[0]] if near else None


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """` (did you mean X?)` naming the nearest valid choice, or "" when none is close."""
    near = nearest(value, choices)
    return f" (did you mean {near}?)" if near is not None and near != value else ""


def case_insensitive(value: str, choices: Iterable[str]) -> str | None:
    """The choice that `value` spells in another case (or exactly), else None."""
    lower = value.lower()
    for c in choices:
        if c.lower() == lower:
            return c
    return None


def clause_id(value: str) -> str | None:
    """The clause ID `value` names, in any case (`tdata-3` -> `TDATA-3`); None when no clause has it."""
    canonical = value.strip().upper()
    return canonical if canonical in catalogue() else None


def unknown_clause(value: str) -> str:
    """The one-line message for a clause ID that is not in the spec."""
    return f"no clause {value} in the spec{did_you_mean(value, catalogue())}; ggspec list --clauses lists them"


def split_patterns(values: Iterable[str]) -> list[str]:
    """`--select A,B --select C` -> [A, B, C] (a comma inside a glob's [...] stays); empty pieces
    are a ValueError."""
    out: list[str] = []
    for value in values:
        pieces = [p.strip() for p in _COMMA.split(value)]
        if not all(pieces):
            raise ValueError(f"{value!r}: an empty pattern (patterns are separated by commas or repeated options)")
        out.extend(pieces)
    return out


def target(name: str, targets: Iterable[str]) -> str:
    """A plain target name (`rc8`, `native`, ...; not `native:DIR:MODULE` or `external:...`)
    in any case; an unknown one is a ValueError naming the nearest (`ggspec list --targets`
    lists them all)."""
    names = list(targets)
    if ":" in name or name in names:
        return name
    same = case_insensitive(name, names)
    if same is not None:
        return same
    hint = did_you_mean(name, names)
    raise ValueError(f"unknown target {name!r}{hint}; ggspec list --targets lists the targets and the forms "
                     "native:DIR:MODULE and external:PREFIX:INCLUDE_DIR:LIBRARY")
