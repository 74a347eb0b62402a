"""One defect, one block: failing checks grouped by their first difference.

A port with one defect fails many clauses: every check whose scenario goes through the broken
code shows it, most of them as a consequence (a scheduler that lists an input twice copies it
twice, which the device call log of every scheduler check records). The report prints such a
group once, naming the clause most likely at fault first and the others as consequences.

The first difference of a failing check (`first_difference`), in words that do not depend on
the example:

- the target aborted at an assert: the assert's file (its base name), line and condition;
- the devices' entry logs part where the target makes again the calls it had just made (the
  entries after the common part repeat its last ones): "repeats device calls"; where the
  reference's do: "leaves out a repeated device call"; else the two entries' names;
- the target finished where the reference asserts: the assert's message;
- an observation differs: its label;
- anything else: the difference's first line, numbers left out.

The clause most likely at fault (`Group.culprit`): for an assert, a clause of the group whose
message the assert's condition holds; else the clause that most failing checks of its own
(checks of that clause alone) show, ties broken by the spec's order (the scheduler's passes in
the order they run: the earliest is upstream of the others).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ggspec.reference.clauses import catalogue

from ..engine.results import FAILING, CheckResult

_ASSERT = re.compile(r"GGML_ASSERT:\s*(\S+?):(\d+):\s*(.+)")
_PREFIX = re.compile(r"^\S+ \[[^\]]*\]: ")
_NO_ABORT = re.compile(r"requires an abort with GGML_ASSERT '([^']*)'; the target finished normally")
_OBSERVATION = re.compile(r"observation \d+:? (?:the reference recorded )?'([^']+)'")


def _entries(line: str, label: str) -> list[str]:
    return [e.strip() for e in line.split(label, 1)[1].split(" | ")] if label in line else []


def _entry_name(entry: str) -> str:
    words = entry.split()
    return words[1] if len(words) > 1 else entry


def _entry_log_difference(lines: list[str]) -> str | None:
    head = next((ln for ln in lines if "entry logs part at entry" in ln), None)
    if head is None:
        return None
    before = next((_entries(ln, "before, in both:") for ln in lines if "before, in both:" in ln), [])
    ref = next((_entries(ln, "reference next:") for ln in lines if "reference next:" in ln), [])
    tgt = next((_entries(ln, "target next:") for ln in lines if "target next:" in ln), [])

    def repeats(nxt: list[str]) -> bool:
        return any(before[-k:] == nxt[:k] for k in range(1, min(len(before), len(nxt)) + 1))

    if tgt and repeats(tgt):
        return "the target repeats device calls it has just made"
    if ref and repeats(ref):
        return "the target leaves out a repeated device call"
    if ref and tgt:
        return f"the device logs part: the reference calls {_entry_name(ref[0])}, the target {_entry_name(tgt[0])}"
    return "the device logs part"


def first_difference(detail: str) -> str:
    """What a failing check's detail shows first, in words that do not depend on the example
    (see the module's docstring)."""
    lines = [ln for ln in detail.split("\nreproducer:", 1)[0].splitlines() if not ln.startswith(("replay: ", "C reproducer:"))]
    text = "\n".join(lines)
    found = _ASSERT.search(text)
    if found:
        where = found.group(1).rsplit("/", 1)[-1]
        return f"the target aborts at {where}:{found.group(2)}: {found.group(3).strip()}"
    log = _entry_log_difference(lines)
    if log is not None:
        return log
    found = _NO_ABORT.search(text)
    if found:
        return f"the target does not abort where the reference asserts '{found.group(1)}'"
    found = _OBSERVATION.search(text)
    if found:
        return f"observation '{found.group(1)}' differs"
    first = _PREFIX.sub("", lines[0]) if lines else ""
    return re.sub(r"\d+", "N", first.split(": ", 1)[-1] if first.startswith(("before", "the target")) else first)


@dataclass(frozen=True)
class Group:
    """Failing checks that share their first difference."""

    difference: str
    #: the checks, the culprit's own first
    results: tuple[CheckResult, ...]
    #: the clause most likely at fault, and why it is named
    culprit: str
    why: str
    #: every clause the checks fail, the culprit first, then in the spec's order
    clauses: tuple[str, ...]


def _order() -> dict[str, int]:
    return {cid: i for i, cid in enumerate(catalogue())}


def _culprit(difference: str, results: list[CheckResult], clauses: list[str]) -> tuple[str, str]:
    cat = catalogue()
    if difference.startswith("the target aborts at "):
        condition = difference.split(": ", 1)[-1]
        named = [c for c in clauses if (cat[c].message or "\0") in condition]
        if named:
            return named[0], f"the assert that fired is its own ('{cat[named[0]].message}')"
    own = Counter(r.clauses[0] for r in results if len(r.clauses) == 1)
    if own:
        best = max(own.values())
        pick = next(c for c in clauses if own.get(c) == best)
        return pick, f"{best} failing check(s) of its own; the earliest in the spec of the clauses with the most"
    covered = Counter(c for r in results for c in r.clauses)
    best = max(covered.values())
    pick = next(c for c in clauses if covered.get(c) == best)
    return pick, f"named by {best} of the failing checks; the earliest in the spec of the clauses with the most"


def group_failures(results: list[CheckResult], failing: set[str] | None = None) -> list[Group]:
    """The failing checks (status fail, crash or timeout; with `failing`, only those failing one
    of these clauses) grouped by `first_difference`, largest group first, each with its culprit."""
    order = _order()
    by_difference: dict[str, list[CheckResult]] = {}
    for r in results:
        if r.status in FAILING and (failing is None or set(r.clauses) & failing):
            by_difference.setdefault(first_difference(r.detail), []).append(r)
    groups = []
    for difference, members in by_difference.items():
        clauses = sorted({c for r in members for c in r.clauses if failing is None or c in failing},
                         key=lambda c: order.get(c, len(order)))
        culprit, why = _culprit(difference, members, clauses)
        members.sort(key=lambda r: (culprit not in r.clauses, len(r.clauses), r.check))
        groups.append(Group(difference, tuple(members), culprit, why,
                            (culprit, *(c for c in clauses if c != culprit))))
    groups.sort(key=lambda g: (-len(g.results), order.get(g.culprit, len(order))))
    return groups
