"""Which checks `--select` and `--deselect` pick: the one place of the matching rule.

A pattern picks checks by, in this order:

- a clause ID (`TDATA-3`, in any case: `tdata-3`): every check that covers that clause;
- an area (`SCHED`, the part of a clause ID before the dash): every check covering a clause of
  that area;
- an exact check name (`copy.copy_between_buffers`, as `ggspec list --checks` prints them);
- a glob (`fnmatch`, with `*`, `?` or `[...]`): every check whose name matches it, and every
  check covering a clause whose ID matches it (`copy.*`, `sched.split_*`, `CPU-1?`; a glob with a
  dash, as every clause ID has and no check name, matches clause IDs in any case: `cpu-1?`).

Nothing else: no substrings (`copy` is neither a check nor an area — areas are upper case —
so it selects nothing; `copy.*` selects the checks of conformance/checks/copy.py and `COPY` the
checks of the COPY clauses). One option may carry several patterns separated by commas
(`--select TDATA-3,TDATA-4`; a comma inside a glob's `[...]` stays in the glob). The selection
is `--select`'s union (every check when there is no `--select`) minus `--deselect`'s union. A
pattern that matches nothing, or a selection left empty, is a usage error (`SelectionError`,
exit code 2) raised before any check runs; its line names the nearest valid pattern (the one
rule of conformance/names.py).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence

from ggspec.reference.clauses import catalogue

from ..engine.registry import Check
from ..errors import SelectionError
from ..names import clause_id, did_you_mean, split_patterns

_GLOB = set("*?[")


def is_glob(pattern: str) -> bool:
    return any(ch in _GLOB for ch in pattern)


def matching(pattern: str, checks: Mapping[str, Check]) -> set[str]:
    """The names of the checks one pattern picks (see the module's docstring)."""
    cat = catalogue()
    cid = clause_id(pattern) if "-" in pattern and not is_glob(pattern) else None
    if cid is not None:
        return {n for n, c in checks.items() if cid in c.clauses}
    areas = {c.area for c in cat.values()}
    if pattern in areas:
        return {n for n, c in checks.items() if any(cid.split("-")[0] == pattern for cid in c.clauses)}
    if pattern in checks:
        return {pattern}
    if is_glob(pattern):  # a glob with a dash is a clause-ID glob, in any case (`cpu-1?`); check names have none
        ids = pattern.upper() if "-" in pattern else pattern
        return {n for n, c in checks.items()
                if fnmatch.fnmatchcase(n, pattern) or any(fnmatch.fnmatchcase(cid, ids) for cid in c.clauses)}
    return set()


def _union(patterns: Iterable[str], checks: Mapping[str, Check], option: str) -> set[str]:
    out: set[str] = set()
    try:
        split = split_patterns(patterns)
    except ValueError as exc:
        raise SelectionError(f"{option} {exc}") from None
    for p in split:
        found = matching(p, checks)
        if not found:
            areas = {c.area for c in catalogue().values()}
            hint = ""
            if not is_glob(p) and any(n.startswith(p + ".") for n in checks):
                hint = f" (the checks of {p}.py: {p}.*)"
            elif p.upper() != p and p.upper() in areas:
                hint = f" (the area is {p.upper()})"
            elif not is_glob(p):
                hint = did_you_mean(p, [*catalogue(), *sorted(areas), *checks])
            raise SelectionError(f"{option} {p!r} matches no clause ID, area, check name or glob{hint}; "
                                 "see ggspec list")
        out |= found
    return out


def select(checks: Mapping[str, Check], select: Sequence[str] | None, deselect: Sequence[str] | None) -> list[str]:
    """The check names to run, sorted; SelectionError when a pattern or the selection is empty."""
    chosen = _union(select, checks, "--select") if select else set(checks)
    if deselect:
        chosen -= _union(deselect, checks, "--deselect")
    if not chosen:
        raise SelectionError("the selection is empty: --deselect removed every check --select picked")
    return sorted(chosen)
