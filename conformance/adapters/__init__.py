"""Adapters: `reference` (the model itself) and `native` (our C build through cffi).

`make_target(name, profile)` is the one place that turns a target name into a Target.
"""

from __future__ import annotations

from reference.clauses import Profile

from ..target import Target

TARGETS = ("reference", "native")


def make_target(name: str, profile: Profile | None = None) -> Target:
    """A fresh target. `profile` matters to the reference only (native implements `fixed`)."""
    if name == "reference":
        from .reference import ReferenceTarget

        return ReferenceTarget(profile or Profile.FIXED)
    if name == "native" or name.startswith("native:"):
        from .native import NativeTarget

        return NativeTarget(module=name.partition(":")[2] or None)
    raise ValueError(f"unknown target {name!r}; known: {', '.join(TARGETS)} (native:DIR:MODULE for a variant build)")


def default_profile(name: str) -> Profile:
    """Each target's default profile (DESIGN.md): native and the reference claim `fixed`."""
    return Profile.FIXED
