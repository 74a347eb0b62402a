"""The strength examples are what they claim: each bounds example sits exactly at its boundary
and ends as declared on the reference under both profiles, and each copy-layout pair differs
from its source in exactly the one field it names."""

from __future__ import annotations

import pytest
from ggspec.conformance.adapters.reference import ReferenceTarget
from ggspec.conformance.checks.copy import ONE_FIELD, _one_field_pair
from ggspec.conformance.checks.deterministic import BOUNDARIES
from ggspec.conformance.engine.differential import run_on_reference
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.inputs.strategies import Placement
from ggspec.reference.clauses import Profile


@pytest.mark.parametrize("name, ending, args", BOUNDARIES, ids=[f"{n}:{e}" for n, e, _ in BOUNDARIES])
@pytest.mark.parametrize("profile", [Profile.RC8, Profile.FIXED])
def test_boundary_example_ends_as_declared(name: str, ending: str, args: dict[str, object], profile: Profile) -> None:
    load_checks()
    assert args in CHECKS[name].examples
    out = run_on_reference(CHECKS[name], args, profile)
    assert (out.ending if out.ending == "ok" else out.clause_id) == ending, out.detail


def test_in_bounds_examples_end_at_the_last_byte() -> None:
    """tdata's `rng` (a, b) means offset a % (n + 1), size b % (n - offset + 1): every in-bounds
    example ends at byte n = 16, every out-of-bounds one at 17."""
    for name, _, args in BOUNDARIES:
        if "rng" in args:
            a, b = args["rng"]  # type: ignore[misc]
            offset = a % 17
            assert offset + b % (17 - offset) == 16, (name, args)
        if "excess" in args:
            assert args["excess"] == 1


@pytest.mark.parametrize("field", sorted(ONE_FIELD))
def test_copy_pairs_differ_in_exactly_one_field(field: str) -> None:
    t = ReferenceTarget()
    _, src, dst = _one_field_pair(t, Placement("cpu"), field)
    a, b = t.tensor_info(src), t.tensor_info(dst)
    differs = [f"ne{i}" for i in range(4) if a.ne[i] != b.ne[i]] + [f"nb{i}" for i in range(4) if a.nb[i] != b.nb[i]]
    assert differs == [field] and a.type == b.type
