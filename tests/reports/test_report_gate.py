"""Gates a CI job can use: `ggspec check --baseline OLD.json` exits 0 on an unchanged run and 1 on a
planted regression; `ggspec compare` exits 1 when a column fails unless --no-gate; two shards
merged (`ggspec merge`) give the verdicts of one run on the same seed.

The failing runs are native held to the rc8 profile: native implements `fixed`, so the erratum
clause TDATA-3 (tensor_set with an offset that wraps) fails there, deterministically.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ERRATUM_CHECK = "tdata.set_offset_wraps"  # TDATA-3: passes under fixed, fails under rc8 on native
SMALL = ["--max-examples", "3", "--seed", "11", "--quiet", "--no-c-reproducers"]


def ggspec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_baseline_passes_an_unchanged_run_and_catches_a_regression(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    first = ggspec("check", "--profile", "rc8", "--select", ERRATUM_CHECK, "--select", "tdata.set_writes_the_range",
                   *SMALL, "--json", str(old))
    assert first.returncode == 1, first.stderr[-2000:]  # TDATA-3 fails: a run without a baseline fails
    statuses = {c["id"]: c["status"] for c in json.loads(old.read_text())["clauses"]}
    # TDATA-4 has other checks, not selected: not judged (partial), never a pass on part of them
    assert statuses["TDATA-3"] in ("fail", "crash") and statuses["TDATA-4"] == "partial"

    again = ggspec("check", "--profile", "rc8", "--select", ERRATUM_CHECK, "--select", "tdata.set_writes_the_range",
                   *SMALL, "--baseline", str(old), "--json", str(tmp_path / "again.json"))
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "no clause changed" in again.stdout and "no regression" in again.stdout
    assert json.loads((tmp_path / "again.json").read_text())["baseline"]["regressed"] is False

    planted = json.loads(old.read_text())  # the baseline says TDATA-3 passed: now it is a regression
    for c in planted["clauses"]:
        if c["id"] == "TDATA-3":
            c["status"] = "pass"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(planted))
    regressed = ggspec("check", "--profile", "rc8", "--select", ERRATUM_CHECK, "--select", "tdata.set_writes_the_range",
                       *SMALL, "--baseline", str(edited))
    assert regressed.returncode == 1, regressed.stdout[-2000:]
    assert "newly failing (1): TDATA-3 (pass -> " in regressed.stdout and "REGRESSION" in regressed.stdout

    fixed = ggspec("check", "--select", "TDATA-3", *SMALL, "--baseline", str(old))  # native under fixed passes
    assert fixed.returncode == 0, fixed.stdout[-2000:]
    assert "newly passing (1): TDATA-3 (" in fixed.stdout and "note: profile was 'rc8'" in fixed.stdout


def test_a_bad_baseline_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = ggspec("check", "--select", ERRATUM_CHECK, *SMALL, "--baseline", str(bad))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "bad.json: not JSON" in proc.stderr


def test_compare_gates_names_its_targets_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    proc = ggspec("compare", "native", "native@rc8", "--select", "TDATA-3", "--select", "tdata.set_writes_the_range",
                  "--max-examples", "3", "--seed", "11", "--json", str(out), "--only-differences")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # native@rc8 fails TDATA-3
    assert "column 2/2: native@rc8" in proc.stderr and "native@rc8: [  1/" in proc.stderr
    rows = [line.split()[0] for line in proc.stdout.splitlines() if line[:1].isupper() and "-" in line.split()[0]]
    assert rows == ["TDATA-3"], proc.stdout  # TDATA-4 is partial in both columns: left out
    data = json.loads(out.read_text())
    assert data["verdict"] == "fail" and [c["label"] for c in data["columns"]] == ["native@fixed", "native@rc8"]
    assert data["clauses"][0]["statuses"]["native@fixed"] == "pass"
    assert data["clauses"][0]["statuses"]["native@rc8"] in ("fail", "crash")
    assert data["clauses"][0]["details"]["native@rc8"].startswith("tdata.set_offset_wraps: ")
    assert [c["status"] for c in data["columns"][1]["checks"] if c["name"] == ERRATUM_CHECK] in (["fail"], ["crash"])
    quiet = ggspec("compare", "native", "native@rc8", "--select", ERRATUM_CHECK, "--max-examples", "3", "--seed", "11",
                   "--quiet", "--no-gate")
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    same = ggspec("compare", "native", "reference", "--select", "tdata.set_writes_the_range", "--max-examples", "3",
                  "--seed", "11", "--quiet")
    assert same.returncode == 0, same.stderr[-2000:]


def test_two_shards_merged_equal_one_run(tmp_path: Path) -> None:
    selection = ["--select", "tdata.set_writes_the_range", "--select", "tdata.get_reads_the_range",
                 "--select", "tdata.views_use_the_roots_buffer", "--select", ERRATUM_CHECK]
    one = ggspec("check", "--profile", "rc8", *selection, *SMALL, "--json", str(tmp_path / "one.json"))
    shards = [ggspec("check", "--profile", "rc8", *selection, *SMALL, "--shard", f"{k}/2", "--json", str(tmp_path / f"s{k}.json"))
              for k in (1, 2)]
    assert one.returncode == 1 and {s.returncode for s in shards} <= {0, 1}
    names = [{c["name"] for c in json.loads((tmp_path / f"s{k}.json").read_text())["checks"]} for k in (1, 2)]
    assert names[0] and names[1] and not names[0] & names[1]
    merged = ggspec("merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"), "--json", str(tmp_path / "m.json"))
    assert merged.returncode == 1, merged.stderr[-2000:]  # TDATA-3 fails in the merged run as in one run
    a, b = json.loads((tmp_path / "one.json").read_text()), json.loads((tmp_path / "m.json").read_text())
    assert [(c["id"], c["status"], c["examples"]) for c in a["clauses"]] == [(c["id"], c["status"], c["examples"])
                                                                           for c in b["clauses"]]
    assert sorted(c["name"] for c in a["checks"]) == [c["name"] for c in b["checks"]]
    assert a["summary"] == b["summary"]
    overlap = ggspec("merge", str(tmp_path / "s1.json"), str(tmp_path / "s1.json"))
    assert overlap.returncode == 2 and "in two reports" in overlap.stderr
    bad = ggspec("check", "--select", ERRATUM_CHECK, "--shard", "3/2")
    assert bad.returncode == 2 and "expected K/N with 1 <= K <= N" in bad.stderr


def test_merging_shards_of_a_whole_run_adds_back_the_uncovered_clauses() -> None:
    from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
    from ggspec.conformance.reports import report
    from ggspec.conformance.reports.merge import merge
    from ggspec.reference.clauses import Profile

    cfg = RunConfig("native", Profile.FIXED, max_examples=3, seed=1)
    a = [CheckResult("tdata.a", ("TDATA-4",), "pass", 3)]
    b = [CheckResult("tdata.b", ("TDATA-4", "TDATA-8"), "fail", 2, "why"), CheckResult("tdata.c", ("TDATA-8",), "pass", 3)]
    whole = {"select": [], "deselect": []}
    shards = [report.to_json([v for v in verdicts(r) if v.status != "uncovered"], r, cfg, shard=f"{k}/2", selection=whole)
              for k, r in ((1, a), (2, b))]
    one = report.to_json(verdicts(a + b), a + b, cfg, selection=whole)
    merged = merge(shards)
    assert [(c["id"], c["status"], c["examples"]) for c in merged["clauses"]] == [
        (c["id"], c["status"], c["examples"]) for c in one["clauses"]]
    assert merged["summary"] == one["summary"] and merged["summary"]["uncovered"] > 0


def test_a_clause_split_over_shards_is_judged_once_they_are_merged() -> None:
    """Each shard sees only some of a clause's checks (`partial`); merged, the shards ran them
    all, so the clause is judged as one run judges it — and stays partial for a check no shard ran."""
    from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
    from ggspec.conformance.reports import report
    from ggspec.conformance.reports.merge import merge
    from ggspec.reference.clauses import Profile

    cfg = RunConfig("native", Profile.FIXED, max_examples=3, seed=1)
    existing = {"tdata.a": ("TDATA-4",), "tdata.b": ("TDATA-4", "TDATA-8"), "tdata.c": ("TDATA-8",),
                "tdata.d": ("TDATA-8",)}
    a = [CheckResult("tdata.a", ("TDATA-4",), "pass", 3)]
    b = [CheckResult("tdata.b", ("TDATA-4", "TDATA-8"), "pass", 2), CheckResult("tdata.c", ("TDATA-8",), "pass", 3)]
    sel = {"select": ["tdata.a", "tdata.b", "tdata.c"], "deselect": []}
    shards = []
    for k, r in ((1, a), (2, b)):
        planned = {x.check: x.clauses for x in r}
        vs = [v for v in verdicts(r, planned, existing) if v.status != "not selected"]
        assert {v.id: v.status for v in vs}.get("TDATA-4") == "partial"
        shards.append(report.to_json(vs, r, cfg, shard=f"{k}/2", selection=sel))
    merged = {c["id"]: c for c in merge(shards)["clauses"]}
    one = {v.id: v for v in verdicts(a + b, {x.check: x.clauses for x in a + b}, existing)}
    assert merged["TDATA-4"]["status"] == one["TDATA-4"].status == "pass"
    assert merged["TDATA-8"]["status"] == one["TDATA-8"].status == "partial"  # tdata.d ran nowhere
    assert merged["TDATA-8"]["left_out"] == ["tdata.d"] and merged["TDATA-4"]["examples"] == 5
