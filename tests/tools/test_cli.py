"""`ggspec check`: exit codes, the JSON report's schema, JUnit XML, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ggspec.conformance.engine.results import ALL_STATUSES as STATUSES

ROOT = Path(__file__).resolve().parents[2]


def ggspec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_check_writes_json_and_junit(tmp_path: Path) -> None:
    out, xml = tmp_path / "r.json", tmp_path / "r.xml"
    proc = ggspec("check", "--target", "native", "--select", "tdata.set_*", "--max-examples", "5", "--seed", "7",
                  "--json", str(out), "--junit", str(xml))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "seed 7" in proc.stderr and "TDATA-3" in proc.stdout
    report = json.loads(out.read_text())
    assert report["target"] == "native" and report["profile"] == "fixed"
    assert report["clauses"], "no clause in the report"
    for c in report["clauses"]:
        assert set(c) >= {"id", "status", "examples", "detail"}
        assert c["status"] in STATUSES
        assert isinstance(c["examples"], int)
    suite = ET.parse(xml).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests", "0")) == len(report["clauses"])


def test_profile_defaults_to_the_targets_and_can_be_set(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = ggspec("check", "--target", "reference", "--profile", "rc8", "--select", "tdata.get_view*", "--max-examples", "3",
                  "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["profile"] == "rc8"


def test_unknown_target_is_one_clear_line() -> None:
    proc = ggspec("check", "--target", "nope")
    assert proc.returncode == 2
    assert "unknown target 'nope'" in proc.stderr


# --- version, clause, list ---------------------------------------------------------------------


def test_version_names_the_tool_the_api_and_the_commit() -> None:
    proc = ggspec("--version")
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert line.startswith("ggspec 0.") and "whisper.rn 0.4.0-rc.8" in line and "commit" in line


def test_clause_prints_head_and_prose() -> None:
    proc = ggspec("clause", "TDATA-3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("### TDATA-3: tensor_set stays inside the tensor")
    assert "- message: tensor write out of bounds" in proc.stdout and "**Why.**" in proc.stdout
    assert "TDATA-4" not in proc.stdout.split("**Why.**")[0]  # stops at the next clause


def test_list_prints_clauses_with_checks_and_checks_with_clauses() -> None:
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.reference.clauses import catalogue

    proc = ggspec("list", "--clauses")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(catalogue())
    tdata3 = next(ln for ln in lines if ln.startswith("TDATA-3 "))
    assert "assert" in tdata3 and "tdata.set_out_of_bounds" in tdata3
    proc = ggspec("list", "--checks")
    assert len(proc.stdout.splitlines()) == len(load_checks())
    assert any(ln.split() == ["tdata.set_out_of_bounds", "TDATA-3"] for ln in proc.stdout.splitlines())


# --- selection ---------------------------------------------------------------------------------


def test_selection_by_clause_area_name_and_glob_not_substring() -> None:
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.run.select import SelectionError, matching, select

    checks = load_checks()
    assert matching("TDATA-3", checks) == {n for n, c in checks.items() if "TDATA-3" in c.clauses} != set()
    assert matching("SCHED", checks) == {n for n, c in checks.items() if any(x.startswith("SCHED-") for x in c.clauses)}
    assert matching("tdata.set_out_of_bounds", checks) == {"tdata.set_out_of_bounds"}
    copies = matching("copy.*", checks)
    assert copies and all(n.startswith("copy.") for n in copies)
    assert not any(n.startswith(("gcopy.", "ops.")) for n in copies)
    assert matching("copy", checks) == set()  # no substrings
    assert matching("CPU-1?", checks) >= matching("CPU-15", checks)
    assert select(checks, ["TDATA-*"], ["TDATA-3"]) == sorted(
        n for n, c in checks.items() if any(x.startswith("TDATA-") for x in c.clauses) and "TDATA-3" not in c.clauses)
    for sel, desel in ((["copy"], None), (["tdata.set_out_of_bounds"], ["TDATA-3"]), (None, ["nothing*"])):
        try:
            select(checks, sel, desel)
        except SelectionError:
            continue
        raise AssertionError(f"--select {sel} --deselect {desel} did not fail")


def test_clause_ids_are_case_insensitive_and_patterns_comma_separated(tmp_path: Path) -> None:
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.reports import known
    from ggspec.conformance.run.select import matching, select

    checks = load_checks()
    assert matching("tdata-3", checks) == matching("TDATA-3", checks) != set()
    assert matching("cpu-1?", checks) == matching("CPU-1?", checks) != set()
    assert matching("c*", checks) == {n for n in checks if n.startswith("c")}  # no dash: check names only
    assert select(checks, ["TDATA-3,TDATA-4"], None) == select(checks, ["TDATA-3", "TDATA-4"], None)
    assert select(checks, ["TDATA-3, tdata-4"], ["CPU-[1,2]"]) == select(checks, ["TDATA-3", "TDATA-4"], ["CPU-[12]"])
    lower, upper = ggspec("clause", "tdata-3"), ggspec("clause", "TDATA-3")
    assert lower.returncode == 0 and lower.stdout == upper.stdout and lower.stdout.startswith("### TDATA-3:")
    f = tmp_path / "k.toml"
    f.write_text('[[known]]\nclause = "cpu-19"\nreason = "a reason in words"\n')
    assert [e.name for e in known.load(f, checks)] == ["CPU-19"]


def test_deselect_runs_the_rest() -> None:
    proc = ggspec("check", "--target", "reference", "--select", "TDATA-3", "--deselect", "tdata.set_offset_wraps",
                  "--max-examples", "2", "--quiet")
    assert proc.returncode == 0, proc.stderr
    from ggspec.conformance.engine.runner import load_checks

    rest = [n for n, c in load_checks().items() if "TDATA-3" in c.clauses and n != "tdata.set_offset_wraps"]
    assert rest and f", {len(rest)} of " in proc.stderr and "TDATA-3" in proc.stdout


# --- statuses and known failures -----------------------------------------------------------------


def _verdict(cid: str, status: str, checks: list[str]) -> object:
    from ggspec.conformance.engine.results import ClauseVerdict

    return ClauseVerdict(cid, "t", "behaviour", status, 1, "d", checks)


def test_known_failures_become_xfail_and_passing_ones_xpass(tmp_path: Path) -> None:
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.reports import known

    f = tmp_path / "k.toml"
    f.write_text('[[known]]\nclause = "CPU-19"\nreason = "plan copies nodes"\ntargets = ["rc8*"]\n'
                 '[[known]]\narea = "SCHED"\nreason = "later scheduler"\n'
                 '[[known]]\ncheck = "tdata.set_out_of_bounds"\nreason = "no assert"\ntargets = ["other"]\n')
    entries = known.load(f, load_checks())
    vs = [_verdict("CPU-19", "fail", ["x"]), _verdict("SCHED-1", "pass", ["y"]), _verdict("SCHED-2", "crash", ["y"]),
          _verdict("TDATA-3", "fail", ["tdata.set_out_of_bounds"])]
    got = {v.id: v for v in known.apply(vs, entries, "rc8")}  # type: ignore[arg-type]
    assert got["CPU-19"].status == "xfail" and "plan copies nodes" in got["CPU-19"].detail
    assert got["SCHED-2"].status == "xfail" and got["SCHED-1"].status == "pass"  # the area still fails somewhere
    assert got["TDATA-3"].status == "fail"  # that entry is for another target
    vs = [_verdict("CPU-19", "pass", ["x"]), _verdict("SCHED-1", "pass", ["y"])]
    got = {v.id: v for v in known.apply(vs, entries, "rc8-debug")}  # type: ignore[arg-type]
    assert got["CPU-19"].status == "xpass" and got["SCHED-1"].status == "xpass"
    assert known.apply(vs, entries, "native")[0].status == "pass"  # type: ignore[arg-type]


def test_an_xpass_is_reported_and_fails_only_under_strict(tmp_path: Path) -> None:
    f = tmp_path / "k.toml"
    f.write_text('[[known]]\nclause = "TDATA-3"\nreason = "pretend it fails"\n')
    # every check of TDATA-3, so that it is judged (one of them alone leaves it partial, never an xpass)
    args = ("check", "--target", "reference", "--select", "TDATA-3", "--max-examples", "2", "--known", str(f))
    proc = ggspec(*args)
    assert proc.returncode == 0, proc.stderr
    assert "XPASS" in proc.stdout and "known failure(s) passed" in proc.stderr
    assert ggspec(*args, "--strict").returncode == 1


def test_a_missing_symbol_is_unsupported_not_a_failure() -> None:
    import ggspec.conformance.engine.differential as harness
    from ggspec.conformance.engine.results import RunConfig, verdicts
    from ggspec.conformance.engine.runner import load_checks, run_check_here
    from ggspec.conformance.target import MissingSymbol
    from ggspec.reference.clauses import Profile

    chk = load_checks()["graphcompute.work_buffer_grows_and_is_reused"]

    class Lacking:  # a target without CPU-17's hook (the reference model, in its place)
        def __init__(self, real: object) -> None:
            self.real = real

        def __getattr__(self, name: str) -> object:
            if name == "cpu_work_size":
                raise MissingSymbol("lacking", "ggspec_backend_cpu_work_size")
            return getattr(self.real, name)

    real_make = harness.make_target

    def make(name: str, profile: Profile | None = None) -> object:
        return real_make(name, profile) if name == "reference" else Lacking(real_make("reference", profile))

    harness.make_target = make  # type: ignore[assignment]
    try:
        result = run_check_here(chk, RunConfig("lacking", Profile.FIXED, max_examples=2, c_reproducers=False))
    finally:
        harness.make_target = real_make
    assert result.status == "unsupported" and "lacks ggspec_backend_cpu_work_size" in result.detail, result
    (v,) = [v for v in verdicts([result]) if v.id == "CPU-17"]
    assert v.status == "unsupported"


def test_shipped_known_files_are_valid_and_the_default_of_their_target() -> None:
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.reports import known

    for target, name in known.DEFAULTS.items():
        path = known.default_for(target)
        assert path is not None and path.name == name and path.is_file()
        entries = known.load(path, load_checks())
        assert entries and all(e.reason and e.for_target(target) for e in entries)
    assert known.default_for("native") is None


@pytest.mark.parametrize(("argv", "line"), [
    (["check", "--seed", "abc"], "ggspec check: argument --seed: invalid int value: 'abc'"),
    (["check", "--profile", "strict"], "ggspec check: argument --profile: invalid choice: 'strict'"),
    (["check", "--size", "huge"], "ggspec check: argument --size: invalid choice: 'huge'"),
    (["check", "--target", "rc9"], "ggspec check: unknown target 'rc9' (did you mean rc8?)"),
    (["check", "--known", "k.toml", "--no-known"], "ggspec check: --known FILE and --no-known conflict: give one of them"),
    (["compare", "native@strict"], "ggspec compare: native@strict: no profile 'strict' (the profiles are rc8 and fixed)"),
])
def test_a_bad_value_is_one_line_and_exit_2(argv: list[str], line: str, capsys: pytest.CaptureFixture[str]) -> None:
    from ggspec.conformance.tools.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors exit from inside the parser
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(line), err


def test_a_target_name_is_case_insensitive() -> None:
    from ggspec.conformance.tools.cli import _target_name

    assert _target_name("RC8", None, None, None) == "rc8"


def test_device_is_set_for_the_run_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """`--device webgpu` reaches the workers through $GGSPEC_DEVICE; an in-process caller (a test,
    a notebook) must not find it still set afterwards, or its later targets would get WebGPU."""
    from ggspec.conformance.tools.cli import main

    monkeypatch.delenv("GGSPEC_DEVICE", raising=False)
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))
    code = main(["check", "--target", "reference", "--device", "webgpu", "--select", "buft.buft_alignment",
                 "--max-examples", "1", "--no-cache", "--quiet", "--json", str(tmp_path / "r.json")])
    capsys.readouterr()
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text())["target_description"]["device"] == "webgpu"
    assert "GGSPEC_DEVICE" not in os.environ


def test_list_targets_names_each_target_its_profile_and_known_file_and_the_forms() -> None:
    from ggspec.conformance.adapters import TARGETS, default_profile
    from ggspec.conformance.reports.known import DEFAULTS

    proc = ggspec("list", "--targets")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.startswith("  ") and
            not line.startswith("      ")}
    for name in TARGETS:
        if name == "external":
            continue
        assert name in rows, f"{name} not listed:\n{proc.stdout}"
        *_, profile, known = rows[name]
        assert profile == default_profile(name).value and known == DEFAULTS.get(name, "-"), rows[name]
    assert "native:DIR:MODULE" in rows and "external:PREFIX:INCLUDE_DIR:LIBRARY" in rows
    assert ggspec("list", "--targets", "--clauses").returncode == 2


def test_check_help_is_short_and_states_the_exit_codes_once() -> None:
    """No list of target names or known files in --help (ggspec list --targets has them), no name
    cut at a hyphen, and one statement of exit codes 0 to 3."""
    import os

    from ggspec.conformance.adapters import SDIST_TARGETS

    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--help"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "COLUMNS": "80"})
    out = proc.stdout
    lines = out.splitlines()
    assert proc.returncode == 0 and len(lines) <= 80, len(lines)
    assert max(len(line) for line in lines) <= 80
    assert not [line for line in lines if line.rstrip().endswith("-") and not line.rstrip().endswith(" -")], out
    assert sum(name in out for name in SDIST_TARGETS) <= 1 and ".toml" not in out
    assert out.count("exit codes:") == 1 and "ggspec list --targets" in out
    for code in "0123":
        assert len([line for line in lines if line.startswith(f"  {code}  ")]) == 1, code


def test_files_without_a_run_folder_go_under_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Vectors and C reproducers of a run that names no folder (compare, the pytest plugin) go
    under GGSPEC_CACHE, never into the temporary folder."""
    from ggspec.conformance.adapters.creproducer import default_dir
    from ggspec.conformance.tools.vectors import vector_dir

    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("GGSPEC_REPRO_DIR", raising=False)
    assert vector_dir(None) == vector_dir(None) == tmp_path / "cache" / "vectors"
    assert default_dir() == tmp_path / "cache" / "repro"
    assert vector_dir(str(tmp_path / "run")) == tmp_path / "run" / "vectors"

