"""Reports of a run (conformance/reports/report.py): each failing clause's labelled difference and
reproducer on the terminal and in JUnit, a progress line that never says pass for a check whose
erratum clause fails, and the JSON report's summary, versions, target and times."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

from ggspec.conformance.adapters import describe_target
from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
from ggspec.conformance.reports import report
from ggspec.reference.clauses import Profile, catalogue

REPRO = ("reproducer:\npython - <<'EOF'\nfrom ggspec.conformance.tools.replay import replay; "
         "replay('tdata.get_reads_the_range', target='native', profile='fixed', args={'n': 1})\nEOF")
DIFF = "\n".join(["tdata.get_reads_the_range [TDATA-8]: observation 0 'got': 1 of 4 bytes differ, first at byte 2",
                  *(f"  line {i}" for i in range(30))])


def _results() -> list[CheckResult]:
    failing = CheckResult("tdata.get_reads_the_range", ("TDATA-8",), "fail", 3, DIFF + "\n" + REPRO, 1.25)
    blamed = CheckResult("tdata.set_offset_wraps", ("TDATA-3",), "pass", 2, "", 0.5,
                         errata={"TDATA-4": ("crash", "erratum TDATA-4 (fixed profile): killed by SIGSEGV\n" + REPRO)})
    return [failing, blamed, CheckResult("tdata.set_writes_the_range", ("TDATA-4",), "pass", 3, "", 0.25)]


def _cfg() -> RunConfig:
    return RunConfig("native", Profile.FIXED, max_examples=3, seed=5)


def _found() -> list[report.ClauseVerdict]:
    return [v for v in verdicts(_results()) if v.status != "uncovered"]


def test_split_detail_separates_the_reproducer() -> None:
    diff, repro = report.split_detail(DIFF + "\n" + REPRO + "\nC reproducer: /x.c\n  gcc x.c && ./x")
    assert diff == DIFF.splitlines()
    assert repro[0] == "python - <<'EOF'" and repro[2] == "EOF" and repro[3:] == ["C reproducer: /x.c", "  gcc x.c && ./x"]


def test_terminal_shows_each_failing_clause_bounded_unless_verbose() -> None:
    text = report.table(_found(), _cfg(), _results(), seconds=2.5)
    assert "FAIL TDATA-8: tensor_get reads through the resolved buffer" in text
    assert "observation 0 'got': 1 of 4 bytes differ, first at byte 2" in text
    assert "CRASH TDATA-4" in text and "killed by SIGSEGV" in text
    assert text.count("replay('tdata.get_reads_the_range'") == 2  # the failing check's and the erratum's
    assert "line 29" not in text and "more lines (-v shows all" in text
    assert text.splitlines()[-1].endswith("3 checks in 2.5s")
    verbose = report.table(_found(), _cfg(), _results(), verbose=True)
    assert "line 29" in verbose and "more lines" not in verbose


def test_progress_never_says_pass_for_a_check_blaming_an_erratum() -> None:
    lines = [report.progress_line(i, 3, r) for i, r in enumerate(_results(), 1)]
    assert lines[0].startswith("[  1/3] FAIL  tdata.get_reads_the_range")
    assert lines[1].startswith("[  2/3] CRASH tdata.set_offset_wraps") and lines[1].endswith("[erratum TDATA-4]")
    assert lines[2].startswith("[  3/3] pass  tdata.set_writes_the_range")


def test_junit_has_times_short_names_and_the_whole_failure(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    report.write_junit(path, _found(), _cfg(), _results(), seconds=2.0)
    suite = ET.parse(path).getroot()
    assert suite.get("name") == "ggspec.native.fixed" and suite.get("time") == "2.000"
    cases = {c.get("name", "").split()[0]: c for c in suite.iter("testcase")}
    assert cases["TDATA-8"].get("time") == "1.250"
    failure = cases["TDATA-8"].find("failure")
    assert failure is not None and failure.text is not None
    assert "line 29" in failure.text and "replay('tdata.get_reads_the_range'" in failure.text
    assert cases["TDATA-3"].find("failure") is None
    assert report.suite_name("external:wsp_ggml_:/inc:/lib/libx.so", "rc8") == "ggspec.external.wsp_ggml.libx.so.rc8"


def test_json_has_summary_versions_target_and_times(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    started = datetime(2026, 12, 1, 11, 0, tzinfo=timezone.utc)
    report.write_json(path, _found(), _results(), _cfg(), started=started, seconds=2.0,
                      target=describe_target("native"))
    data = json.loads(path.read_text())
    assert data["summary"]["verdict"] == "fail"
    assert (data["summary"]["fail"], data["summary"]["crash"], data["summary"]["clauses"]) == (1, 1, len(_found()))
    assert data["versions"]["specifies"].endswith("0.4.0-rc.8") and data["versions"]["tool"]
    assert data["started"] == "2026-12-01T11:00:00+00:00" and data["seconds"] == 2.0
    assert [c["seconds"] for c in data["checks"]] == [1.25, 0.5, 0.25]
    desc = data["target_description"]
    assert desc["name"] == "native" and Path(desc["library"]).is_file() and len(desc["sha256"]) == 64


def test_an_external_targets_description_names_its_library(tmp_path: Path) -> None:
    lib = tmp_path / "libx.so"
    lib.write_bytes(b"not really a library")
    desc = describe_target(f"external:ggml_:{tmp_path}:{lib}")
    assert desc["library"] == str(lib) and desc["prefix"] == "ggml_"
    assert desc["sha256"] == hashlib.sha256(b"not really a library").hexdigest()


# --- the verdict rules: not run, partial, timeout, interrupted ------------------------------------


def _two_check_clause() -> tuple[str, dict[str, tuple[str, ...]]]:
    """A clause of the catalogue and two made-up checks of it, one also covering another clause."""
    ids = sorted(catalogue())
    return ids[0], {"a.one": (ids[0],), "a.two": (ids[0], ids[1])}


def test_a_clause_is_judged_only_on_all_of_its_checks() -> None:
    cid, every = _two_check_clause()
    only_one = [CheckResult("a.one", every["a.one"], "pass", 3)]
    got = {v.id: v for v in verdicts(only_one, {"a.one": every["a.one"]}, every)}
    assert got[cid].status == "partial" and "a.two" in got[cid].detail
    assert got[sorted(catalogue())[1]].status == "not selected"  # reports leave it out
    both = only_one + [CheckResult("a.two", every["a.two"], "pass", 3)]
    assert {v.id: v for v in verdicts(both, every, every)}[cid].status == "pass"
    failing = [CheckResult("a.one", every["a.one"], "fail", 1, "differs")]
    assert {v.id: v for v in verdicts(failing, {"a.one": every["a.one"]}, every)}[cid].status == "fail"


def test_checks_an_interrupted_run_did_not_reach_are_not_run_not_uncovered() -> None:
    cid, every = _two_check_clause()
    got = {v.id: v for v in verdicts([], every, every)}
    assert got[cid].status == "not run" and "a.one" in got[cid].detail
    half = {v.id: v for v in verdicts([CheckResult("a.one", every["a.one"], "pass", 3)], every, every)}
    assert half[cid].status == "not run" and "a.two" in half[cid].detail
    assert report.run_verdict(list(got.values()), "SIGINT") == "interrupted"


def test_a_timeout_is_the_clause_verdict_over_a_failure() -> None:
    cid, every = _two_check_clause()
    results = [CheckResult("a.one", every["a.one"], "fail", 1, "differs"),
               CheckResult("a.two", every["a.two"], "timeout", 1, "ggml_backend_graph_compute hung for 10 s")]
    v = {v.id: v for v in verdicts(results, every, every)}[cid]
    assert v.status == "timeout" and "graph_compute hung" in v.detail


def test_an_interrupted_run_is_interrupted_in_json_junit_and_terminal(tmp_path: Path) -> None:
    cid, every = _two_check_clause()
    cfg = _cfg()
    results = [CheckResult("a.one", every["a.one"], "pass", 3)]
    found = [v for v in verdicts(results, every, every) if v.status != "not selected"]
    assert report.to_json(found, results, cfg, interrupted="SIGTERM")["summary"]["verdict"] == "interrupted"  # type: ignore[index]
    report.write_junit(tmp_path / "j.xml", found, cfg, results, interrupted="SIGTERM")
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.get("errors") == "1" and root.find("testcase/error").get("type") == "interrupted"  # type: ignore[union-attr]
    assert report.verdict_line(found, "SIGTERM").startswith("verdict: INTERRUPTED by SIGTERM")
