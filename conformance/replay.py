"""Replaying one example of a check, as printed in a failure's reproducer."""

from __future__ import annotations

from typing import Any

from ggspec.reference.clauses import Profile

from .harness import CHECKS, differential
from .runner import load_checks


def replay(check_name: str, target: str, profile: str, args: dict[str, Any]) -> None:
    """Run the example again, print both outcomes, and raise if they still disagree."""
    load_checks()
    chk = CHECKS[check_name]
    ex = differential(chk, args, target, Profile(profile))
    print(f"{check_name}: reference {ex.expected.ending}, {target} {ex.actual.ending}: agree")
    for label, value in ex.expected.observations:
        print(f"  {label} = {value!r}")
