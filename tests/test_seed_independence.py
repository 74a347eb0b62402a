"""Verdicts that do not depend on the seed: every erratum has deterministic examples
(conformance/checks/deterministic.py), so the rc.8 build held to profile fixed fails the same
clauses, exactly the errata, under every seed.

The rc8 tests skip only when npm or the network to the npm registry is missing (`CannotFetch`).
"""

from __future__ import annotations

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.adapters.rc8 import CannotFetch
from ggspec.conformance.checks.deterministic import EXAMPLES
from ggspec.conformance.engine.differential import run_on_reference
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig, ub_clauses, verdicts
from ggspec.conformance.engine.runner import load_checks, run_all
from ggspec.reference.clauses import Profile, catalogue

SEEDS = (1, 2, 3, 20261130, 4294967295)


def _errata() -> set[str]:
    return {cid for cid, c in catalogue().items() if c.erratum}


def _erratum_checks() -> list[str]:
    """The checks that cover an erratum clause or carry one of the deterministic examples."""
    load_checks()
    errata = _errata()
    names = {name for name, chk in CHECKS.items() if chk.machine is None and errata & set(chk.clauses)}
    return sorted(names | {name for name, _, _ in EXAMPLES})


@pytest.mark.parametrize("name, reaches, args", EXAMPLES, ids=[f"{n}:{r[1]}" for n, r, _ in EXAMPLES])
def test_each_example_reaches_its_erratum_on_the_reference(name: str, reaches: tuple[str, str], args: dict[str, object]) -> None:
    """Under rc8 the example stops at the erratum (ub / violation) or, for a behaviour erratum,
    records something else than profile fixed does."""
    load_checks()
    chk = CHECKS[name]
    assert args in chk.examples
    rc8, fixed = run_on_reference(chk, args, Profile.RC8), run_on_reference(chk, args, Profile.FIXED)
    ending, clause_id = reaches
    assert clause_id in _errata() or (ending == "ub" and clause_id in ub_clauses())
    assert rc8.ending == ending
    if ending == "ok":
        assert (fixed.ending, fixed.observations) != ("ok", rc8.observations)
    else:
        assert rc8.clause_id == clause_id
        if clause_id in _errata():  # the correction changes what happens there
            assert (fixed.ending, fixed.clause_id, fixed.observations) != (rc8.ending, rc8.clause_id, rc8.observations)


def _reached_by(name: str, args: dict[str, object]) -> set[str]:
    """The errata one explicit example reaches on the reference: the clause profile rc8 stops at,
    or, where the two profiles record different things, the check's erratum clauses."""
    chk = CHECKS[name]
    rc8, fixed = run_on_reference(chk, args, Profile.RC8), run_on_reference(chk, args, Profile.FIXED)
    if rc8.ending in ("ub", "violation") and rc8.clause_id in _errata():
        return {rc8.clause_id}
    if (rc8.ending, rc8.clause_id, rc8.observations) != (fixed.ending, fixed.clause_id, fixed.observations):
        return ({fixed.clause_id} if fixed.clause_id else set()) | (set(chk.clauses) & _errata())
    return set()


def test_every_erratum_has_an_example() -> None:
    """Each erratum is reached by an explicit example (deterministic.py's, or a check's own
    `@example`), so every seed reaches it."""
    load_checks()
    reached: set[str] = set()
    for name, chk in CHECKS.items():
        if _errata() & set(chk.clauses) or name in {n for n, _, _ in EXAMPLES}:
            for args in chk.examples:
                reached |= _reached_by(name, args)
    assert _errata() - reached == set()


@pytest.fixture(scope="module")
def rc8_available() -> None:
    try:
        make_target("rc8")
    except CannotFetch as exc:
        pytest.skip(f"rc.8 cannot be fetched here: {exc}")


def test_rc8_under_fixed_fails_exactly_the_errata_under_five_seeds(rc8_available: None) -> None:
    names = _erratum_checks()
    failing: dict[int, set[str]] = {}
    for s in SEEDS:
        cfg = RunConfig("rc8", Profile.FIXED, max_examples=2, seed=s, c_reproducers=False)
        failing[s] = {v.id for v in verdicts(run_all(cfg, names)) if v.status in ("fail", "crash")}
    first = failing[SEEDS[0]]
    assert all(f == first for f in failing.values()), failing
    assert first == _errata(), sorted(first ^ _errata())
