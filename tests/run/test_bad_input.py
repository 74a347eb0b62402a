"""Every user mistake is one line on stderr naming the problem, exit code 2, no traceback, and
it is found before any check runs (these cases finish in a second or two, nothing is built)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ggspec(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def one_line_exit_2(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    """The run ended with exit code 2 and one stderr line holding every word; no traceback, and
    no check ran (no table on stdout)."""
    err = proc.stderr.strip()
    assert proc.returncode == 2, f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {err[-2000:]}"
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(err.splitlines()) == 1, f"more than one line:\n{err}"
    assert "clauses" not in proc.stdout and "[  1/" not in proc.stderr, "checks ran before the mistake was reported"
    for w in words:
        assert w in err, f"{w!r} not in {err!r}"
    return err


@pytest.mark.parametrize("option", ["--json", "--junit"])
def test_report_into_a_missing_folder(tmp_path: Path, option: str) -> None:
    where = tmp_path / "no" / "such" / "r.out"
    one_line_exit_2(ggspec("check", "--target", "reference", option, str(where)), option, "does not exist")


def test_report_onto_a_folder(tmp_path: Path) -> None:
    one_line_exit_2(ggspec("check", "--target", "reference", "--json", str(tmp_path)), "--json", "is a directory")


def test_html_report_into_a_missing_folder(tmp_path: Path) -> None:
    if "--html" not in ggspec("check", "--help").stdout:
        pytest.skip("ggspec check has no --html option in this tree")
    one_line_exit_2(ggspec("check", "--target", "reference", "--html", str(tmp_path / "no" / "r.html")), "--html")


@pytest.mark.parametrize("args,words", [
    (["--select", "nothing"], ["--select 'nothing'", "matches no"]),
    (["--select", "copy"], ["--select 'copy'", "copy.*"]),
    (["--select", "TDATA-999"], ["TDATA-999"]),
    (["--deselect", "nothing*"], ["--deselect 'nothing*'"]),
    (["--select", "TDATA-3", "--deselect", "TDATA-*"], ["selection is empty"]),
])
def test_selection_matching_nothing(args: list[str], words: list[str]) -> None:
    one_line_exit_2(ggspec("check", "--target", "reference", *args), *words)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_max_examples_below_one(value: str) -> None:
    one_line_exit_2(ggspec("check", "--target", "reference", "--max-examples", value), "--max-examples", value)
    one_line_exit_2(ggspec("compare", "reference", "--max-examples", value), "--max-examples")


def test_negative_seed() -> None:
    one_line_exit_2(ggspec("check", "--target", "reference", "--seed", "-1"), "--seed", "-1")


def test_unknown_clause() -> None:
    one_line_exit_2(ggspec("clause", "TDATA-999"), "TDATA-999")


@pytest.mark.parametrize("args,words", [
    (["check", "--target", "reference", "--select", "TDAT-3"], ["--select 'TDAT-3'", "(did you mean TDATA-3?)"]),
    (["check", "--target", "reference", "--deselect", "TDAT-3"], ["--deselect 'TDAT-3'", "(did you mean TDATA-3?)"]),
    (["check", "--target", "reference", "--select", "tdata.set_out_of_bound"],
     ["(did you mean tdata.set_out_of_bounds?)"]),
    (["compare", "reference", "--select", "TDAT-3"], ["--select 'TDAT-3'", "(did you mean TDATA-3?)"]),
    (["clause", "TDAT-3"], ["no clause TDAT-3", "(did you mean TDATA-3?)"]),
    (["check", "--target", "RC9"], ["unknown target 'RC9'", "(did you mean rc8?)", "ggspec list --targets"]),
    (["compare", "nativ"], ["unknown target 'nativ'", "(did you mean native?)"]),
    (["compare", "nativ@rc8"], ["unknown target 'nativ'", "(did you mean native?)"]),
    (["explain", "encodr"], ["'encodr' is neither a fixture", "(did you mean encoder?)"]),
    (["check", "--target", "reference", "--select", "TDATA-3,"], ["--select 'TDATA-3,'", "an empty pattern"]),
])
def test_a_near_miss_names_the_nearest_valid_value(args: list[str], words: list[str]) -> None:
    """One rule (conformance/names.py) for every command: the line names what was probably meant."""
    one_line_exit_2(ggspec(*args), *words)


def test_nothing_near_names_nothing() -> None:
    err = one_line_exit_2(ggspec("check", "--target", "reference", "--select", "zzzzzz"), "--select 'zzzzzz'")
    assert "did you mean" not in err


# --- known-failures files --------------------------------------------------------------------


@pytest.mark.parametrize("text,words", [
    ("[[known]\nclause = 1", ["not valid TOML"]),
    ('[[known]]\nclause = "NOPE-1"\nreason = "a reason in words"\n', ["entry 1", "no clause NOPE-1"]),
    ('[[known]]\nclause = "CPU-199"\nreason = "a reason in words"\n', ["no clause CPU-199", "did you mean CPU-19"]),
    ("[[known]]\ncheck = 'cpu.host_memry'\nreason = 'a reason in words'\n",
     ["no check cpu.host_memry", "did you mean cpu.host_memory?"]),
    ('[[known]]\narea = "NOPE"\nreason = "a reason in words"\n', ["no area NOPE"]),
    ('[[known]]\ncheck = "no.such"\nreason = "a reason in words"\n', ["no check no.such"]),
    ('[[known]]\nclause = "CPU-19"\n', ["needs a reason"]),
    ('[[known]]\nclause = "CPU-19"\ncheck = "x"\nreason = "a reason in words"\n', ["exactly one of"]),
    ('[[known]]\nclause = "CPU-19"\nreason = "a reason in words"\ntargets = "rc8"\n', ["targets must be"]),
    ('[[known]]\nclause = "CPU-19"\nreason = "a reason in words"\nwhy = 2\n', ["unknown key(s) why"]),
    ('[[known]]\nclause = "CPU-19"\nreason = "no-such-key"\n', ["no reason named 'no-such-key'"]),
])
def test_malformed_known_file(tmp_path: Path, text: str, words: list[str]) -> None:
    f = tmp_path / "known.toml"
    f.write_text(text)
    one_line_exit_2(ggspec("check", "--target", "reference", "--known", str(f)), str(f), *words)


def test_missing_known_file(tmp_path: Path) -> None:
    f = tmp_path / "none.toml"
    one_line_exit_2(ggspec("check", "--target", "reference", "--known", str(f)), str(f), "no such file")


# --- explain -----------------------------------------------------------------------------------


def test_explain_missing_file(tmp_path: Path) -> None:
    one_line_exit_2(ggspec("explain", str(tmp_path / "nope.json")), "nope.json", "neither a fixture")


@pytest.mark.parametrize("text,words", [
    ("{not json", ["not valid JSON"]),
    ('{"nodes": []}', ["not a graph vector", "missing key 'leafs'"]),
    ("[1, 2]", ["not a graph vector"]),
])
def test_explain_malformed_or_wrong_shape(tmp_path: Path, text: str, words: list[str]) -> None:
    f = tmp_path / "graph.json"
    f.write_text(text)
    one_line_exit_2(ggspec("explain", str(f), "--svg", str(tmp_path / "g.svg")), str(f), *words)


def test_explain_python_file_that_fails(tmp_path: Path) -> None:
    f = tmp_path / "graph.py"
    f.write_text("raise RuntimeError('oops')\n")
    one_line_exit_2(ggspec("explain", str(f), "--svg", str(tmp_path / "g.svg")), str(f), "RuntimeError", "oops")


@pytest.mark.parametrize("n", ["0", "17", "40"])
def test_explain_backends_out_of_range(tmp_path: Path, n: str) -> None:
    one_line_exit_2(ggspec("explain", "encoder", "--backends", n, "--svg", str(tmp_path / "e.svg")), "--backends", n,
                    "between 1 and 16")


def test_explain_svg_into_a_missing_folder(tmp_path: Path) -> None:
    one_line_exit_2(ggspec("explain", "encoder", "--svg", str(tmp_path / "no" / "e.svg")), "--svg", "does not exist")


# --- targets built at test time ------------------------------------------------------------------


def test_unwritable_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = blocker / "cache"
    one_line_exit_2(ggspec("check", "--target", "rc8", env={"GGSPEC_CACHE": str(cache)}), f"GGSPEC_CACHE={cache}",
                    "cannot be created")
    one_line_exit_2(ggspec("check", "--target", "rc8", env={"GGSPEC_CACHE": str(blocker)}), "is not a folder")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to make a small shared library")
def test_wrong_prefix_names_the_exported_ones(tmp_path: Path) -> None:
    include = tmp_path / "include"
    include.mkdir()
    for h in ("ggml.h", "ggml-alloc.h", "ggml-backend.h", "ggml-backend-impl.h"):
        (include / h).write_text("/* a stand-in */\n")
    src = tmp_path / "lib.c"
    src.write_text("void * myggml_backend_cpu_init(void) { return 0; }\nint myggml_other(void) { return 1; }\n")
    lib = tmp_path / "libmy.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    err = one_line_exit_2(ggspec("check", "--target", "external", "--include", str(include), "--lib", str(lib),
                                 "--prefix", "ggml_", env={"GGSPEC_CACHE": str(tmp_path / "cache")}),
                          "wrong --prefix 'ggml_'", "myggml_")
    assert "try --prefix myggml_" in err


def test_external_needs_all_three_options() -> None:
    one_line_exit_2(ggspec("check", "--target", "external", "--prefix", "ggml_"), "--include", "--lib")


def test_exit_codes_are_in_help() -> None:
    for args in (["--help"], ["check", "--help"]):
        out = ggspec(*args).stdout
        assert "exit codes:" in out and "  2  a usage error" in out and "  1  a clause failed" in out


# --- a fetching tool that fails: its own words, the network blamed only when it says so --------------


NPM_SAYS = {
    "forbidden": ("echo 'npm error code E403' >&2\n"
                  "echo 'npm error 403 Forbidden - GET https://registry.npmjs.org/whisper.rn - blocked by policy' >&2\n"
                  "echo 'npm error A complete log of this run can be found in: /nowhere/x.log' >&2\nexit 1\n"),
    "offline": ("echo 'npm error code ENOTFOUND' >&2\n"
                "echo 'npm error network request failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org' >&2\nexit 1\n"),
    "wrong file": ('while [ $# -gt 0 ]; do [ "$1" = --pack-destination ] && dest=$2; shift; done\n'
                   'echo not-the-tarball > "$dest/whisper.rn-0.4.0-rc.8.tgz"\nexit 0\n'),
}


@pytest.mark.parametrize("case,words,absent", [
    ("forbidden", ["npm pack whisper.rn@0.4.0-rc.8 failed (exit 1): code E403 / 403 Forbidden - GET",
                   "blocked by policy"], ["cannot be reached", "network", "complete log"]),
    ("offline", ["npm pack whisper.rn@0.4.0-rc.8 failed (exit 1)", "getaddrinfo ENOTFOUND registry.npmjs.org",
                 "(the npm registry cannot be reached from here)"], []),
    ("wrong file", ["whisper.rn-0.4.0-rc.8.tgz has sha256", "refusing to build it"], ["failed", "network"]),
])
def test_a_failing_npm_is_reported_in_its_own_words(tmp_path: Path, case: str, words: list[str],
                                                    absent: list[str]) -> None:
    """A stand-in npm first on PATH, and a relative GGSPEC_CACHE (resolved once, against the folder
    ggspec starts in: the tarball npm writes is found where it was told to write it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\n" + NPM_SAYS[case])
    npm.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "GGSPEC_RC8_TARBALL"}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", GGSPEC_CACHE="cache")
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "rc8"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    *progress, err = proc.stderr.strip().splitlines()  # the fetch step's progress lines, then the one line
    assert all(line.startswith("ggspec: fetching ") for line in progress), proc.stderr
    assert err.startswith("ggspec check: "), err
    for w in words:
        assert w in err, err
    for w in absent:
        assert w not in err, err
    assert (tmp_path / "cache" / "rc8").is_dir()


@pytest.mark.parametrize("stderr,words,absent", [
    ("ERROR: HTTP error 403 while getting https://files.pythonhosted.org/x.tar.gz\n"
     "ERROR: Could not install requirement ggml-python==0.0.26 because of HTTP error 403\n",
     ["pip download ggml-python==0.0.26 failed (exit 1): ERROR: HTTP error 403 while getting",
      "because of HTTP error 403", "GGSPEC_SDIST_DIR"], ["cannot be reached"]),
    ("WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(...)': /simple/ggml-python/\n"
     "ERROR: Could not find a version that satisfies the requirement ggml-python==0.0.26 (from versions: none)\n"
     "ERROR: No matching distribution found for ggml-python==0.0.26\n",
     ["No matching distribution found", "(PyPI cannot be reached from here)"], []),
])
def test_a_failing_pip_is_reported_in_its_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: str,
                                                    words: list[str], absent: list[str]) -> None:
    from ggspec.conformance.adapters import ggml_python
    from ggspec.conformance.errors import CannotFetch

    monkeypatch.delenv("GGSPEC_SDIST_DIR", raising=False)
    monkeypatch.delenv("GGSPEC_GGML_PYTHON_SDIST", raising=False)
    monkeypatch.setattr(ggml_python.subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, stdout="", stderr=stderr))
    with pytest.raises(CannotFetch) as info:
        ggml_python._fetch(ggml_python.SDISTS["ggml-python-0.0.26"], tmp_path / "sdist.tar.gz")
    text = str(info.value)
    assert "\n" not in text
    for w in words:
        assert w in text, text
    for w in absent:
        assert w not in text, text
