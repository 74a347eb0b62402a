"""`ggspec clause ID` and `ggspec list`: what the spec says and what the suite checks.

The text comes from the installed spec/*.md (package data `ggspec.spec`), the same files the
reference model reads its clause catalogue from.
"""

from __future__ import annotations

from ggspec.reference.clauses import SPEC_DIR, catalogue

from ..engine.registry import Check


def clause_text(clause_id: str) -> str:
    """The clause's section of its chapter: the head (ID, title, kind, message, erratum) and its
    prose, up to the next heading. KeyError for an unknown ID."""
    c = catalogue().get(clause_id)
    if c is None:
        raise KeyError(clause_id)
    lines = (SPEC_DIR / c.chapter).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"### {clause_id}:"))
    out = [lines[start]]
    in_fence = False
    for line in lines[start + 1:]:
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith(("# ", "## ", "### ")):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + f"\n\n(spec/{c.chapter})"


def clause_lines(checks: dict[str, Check]) -> list[str]:
    """One line a clause: ID, kind, title, and the checks that cover it."""
    covering: dict[str, list[str]] = {}
    for name in sorted(checks):
        for cid in checks[name].clauses:
            covering.setdefault(cid, []).append(name)
    cat = catalogue()
    width = max(len(cid) for cid in cat)
    lines = []
    for cid, c in cat.items():
        names = covering.get(cid, [])
        lines.append(f"{cid:{width}s}  {c.kind:9s}  {c.title}  [{', '.join(names) if names else 'no check'}]")
    return lines


def check_lines(checks: dict[str, Check]) -> list[str]:
    """One line a check: its name and the clauses it covers."""
    width = max(len(n) for n in checks)
    return [f"{name:{width}s}  {' '.join(checks[name].clauses)}" for name in sorted(checks)]
