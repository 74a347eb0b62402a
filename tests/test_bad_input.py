"""Every user mistake is one line on stderr naming the problem, exit code 2, no traceback, and
it is found before any check runs (these cases finish in a second or two, nothing is built)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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


# --- known-failures files --------------------------------------------------------------------


@pytest.mark.parametrize("text,words", [
    ("[[known]\nclause = 1", ["not valid TOML"]),
    ('[[known]]\nclause = "NOPE-1"\nreason = "a reason in words"\n', ["entry 1", "no clause NOPE-1"]),
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
