"""The suite's own machinery: forked workers, judging, crash verdicts, honest checks."""

from __future__ import annotations

import ctypes
import os
import signal
from typing import Any

import pytest
from ggspec.conformance.engine import isolate
from ggspec.conformance.engine.differential import Example, Mismatch, Outcome, assert_message_seen, judge
from ggspec.conformance.engine.registry import CHECKS, Check
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import run_check
from ggspec.reference.clauses import Profile
from hypothesis import strategies as st


def _segfault() -> None:
    ctypes.string_at(0)


def test_forked_worker_survives_a_segfault_and_keeps_reports() -> None:
    def work() -> None:
        isolate.report("before")
        _segfault()

    res = isolate.run_forked(work)
    assert res.status == "signal" and res.signum == signal.SIGSEGV
    assert res.reports == ["before"]


def test_forked_worker_returns_values_and_stderr() -> None:
    def work() -> int:
        os.write(2, b"hello on stderr\n")
        return 42

    res = isolate.run_forked(work)
    assert (res.status, res.value) == ("ok", 42)
    assert "hello on stderr" in res.stderr


def test_forked_worker_times_out() -> None:
    import time

    res = isolate.run_forked(lambda: time.sleep(30), timeout=0.5)
    assert res.status == "timeout"


def test_rc8_assert_lines_are_recognised() -> None:
    line = 'WSP_GGML_ASSERT: /x/ggml-backend.c:198: buf != NULL && "tensor buffer not set"\n'
    assert assert_message_seen(line, "tensor buffer not set")
    reg = "WSP_GGML_ASSERT: ggml-backend.c:348: wsp_ggml_backend_registry_count < WSP_GGML_MAX_BACKENDS_REG"
    assert assert_message_seen(reg, "ggml_backend_registry_count < GGML_MAX_BACKENDS_REG")
    assert not assert_message_seen("tensor buffer not set", "tensor buffer not set")  # no GGML_ASSERT
    assert not assert_message_seen("GGML_ASSERT: a.c:1: tensor not allocated", "tensor buffer not set")


def _example(expected: Outcome, actual: Outcome) -> Example:
    chk = Check("x.y", ("TDATA-3",), lambda t, rec: None, {}, "x")
    return Example(chk, {}, expected, actual)


def test_judge_requires_the_abort_and_its_message() -> None:
    exp = Outcome([("a", 1)], "violation", "TDATA-3")
    judge(_example(exp, Outcome([("a", 1)], "abort", stderr="GGML_ASSERT: f.c:2: tensor write out of bounds")))
    with pytest.raises(Mismatch, match="finished normally"):
        judge(_example(exp, Outcome([("a", 1)], "ok")))
    with pytest.raises(Mismatch, match="without"):
        judge(_example(exp, Outcome([("a", 1)], "abort", stderr="GGML_ASSERT: f.c:2: something else")))
    with pytest.raises(Mismatch, match="before the expected"):
        judge(_example(exp, Outcome([("a", 2)], "abort", stderr="GGML_ASSERT: f.c:2: tensor write out of bounds")))


def test_judge_compares_observations() -> None:
    judge(_example(Outcome([("n", 1)], "ok"), Outcome([("n", 1)], "ok")))
    with pytest.raises(Mismatch, match="observation 0 'n': reference 1 vs target 2"):
        judge(_example(Outcome([("n", 1)], "ok"), Outcome([("n", 2)], "ok")))


def test_undefined_behaviour_accepts_anything_after_it() -> None:
    ex = _example(Outcome([("n", 1)], "ub", "TDATA-4", "NULL call"), Outcome([("n", 1)], "crash", detail="killed by SIGSEGV"))
    judge(ex)
    assert ex.notes and "undefined behaviour" in ex.notes[0]


def _run_temporary_check(name: str, clauses: tuple[str, ...], fn: Any, target: str) -> Any:
    """A check registered for one run (3 examples, seed 1, fixed profile) against `target`, then removed."""
    chk = Check(name, clauses, fn, {"n": st.integers(0, 3)}, "tests")
    CHECKS[name] = chk
    try:
        return run_check(chk, RunConfig(target, Profile.FIXED, max_examples=3, seed=1))
    finally:
        del CHECKS[name]


def test_a_crashing_target_is_a_crash_verdict_and_the_run_goes_on() -> None:
    def scenario(t: Any, rec: Any, n: int) -> None:
        rec("n", n)
        if t.name != "reference":
            _segfault()

    res = _run_temporary_check("tests.crashes", ("BUF-6",), scenario, "native")
    assert res.status == "crash"
    assert "SIGSEGV" in res.detail


def test_an_assert_check_that_misses_its_clause_fails() -> None:
    def scenario(t: Any, rec: Any, n: int) -> None:
        rec("n", n)  # never breaks TDATA-3

    res = _run_temporary_check("tests.vacuous", ("TDATA-3",), scenario, "reference")
    assert res.status == "fail"
    assert "did not reach its clause" in res.detail
