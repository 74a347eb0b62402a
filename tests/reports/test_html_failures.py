"""The HTML report (reports/html.py) puts the failures before the clause table, shows a group of
checks that fail with one first difference under one heading naming the clause most likely at
fault, and each check's difference once (the other clauses of the check link to it)."""

from __future__ import annotations

from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
from ggspec.conformance.reports import report
from ggspec.conformance.reports.html import page
from ggspec.reference.clauses import Profile

ABORT = ("{check} [{clauses}]: the reference finished, the target ended with abort: killed by SIGABRT\n"
         "stderr:\n  WSP_GGML_ASSERT: /x/ggml-backend.c:199: offset + size < wsp_ggml_nbytes(tensor) && "
         "\"tensor write out of bounds\"")


def result(check: str, *clauses: str) -> CheckResult:
    return CheckResult(check, clauses, "crash", 1, ABORT.format(check=check, clauses=", ".join(clauses))
                       + "\nreproducer:\npython - <<'EOF'\nreplay(...)\nEOF")


def test_failures_first_each_difference_once() -> None:
    results = [result("tdata.set_to_the_edge", "TDATA-3", "TDATA-4"), result("tdata.set_writes_the_range", "TDATA-4"),
               CheckResult("tdata.set_unallocated", ("TDATA-1",), "pass", 5)]
    found = [v for v in verdicts(results) if v.status not in ("uncovered", "not selected")]
    text = page(report.to_json(found, results, RunConfig("external:x", Profile.RC8, seed=1)))
    assert text.index('id="failures"') < text.index('id="clauses"')
    assert text.count('<pre class="difference">') == 2  # two checks, each difference once
    assert "the same difference as under" in text
    group = text[text.index('class="group"'):]
    assert "one first difference" in group and 'most likely at fault: <a href="#fail-TDATA-3">' in group
