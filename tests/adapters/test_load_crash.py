"""A target library that aborts, segfaults or hangs as it is loaded (its constructor runs at
dlopen) ends the run with exit 3 and a report, never ggspec itself: nothing of the target runs
in ggspec's own process (the adapter reads the library's exported symbols from its ELF symbol
tables, conformance/adapters/elfsyms.py), the target is first loaded in a forked worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.conformance.adapters.elfsyms import resolvable_symbols
from nativeport import NATIVE_INCLUDE, ggml_named_include, native_sources

#: a constructor for each way a library can go wrong as it loads
CONSTRUCTORS = {
    "abort": "#include <stdlib.h>\n__attribute__((constructor)) static void bad(void) { abort(); }\n",
    "segfault": "__attribute__((constructor)) static void bad(void) { *(volatile int *)0 = 1; }\n",
    "hang": "#include <unistd.h>\n__attribute__((constructor)) static void bad(void) { for (;;) pause(); }\n",
}


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three broken ports: ggspec's native sources as a shared library (its headers under ggml's
    file names, include/) with one bad constructor each (lib{abort,segfault,hang}.so); and
    libneeds.so, which exports nothing of the API itself but needs libggspec.so (the native
    sources alone), as a split build's umbrella library does."""
    root = tmp_path_factory.mktemp("load-crash")
    ggml_named_include(root)
    objs = root / "obj"
    objs.mkdir()
    subprocess.run(["gcc", "-c", "-O0", "-fPIC", "-std=c11", f"-I{NATIVE_INCLUDE}", *native_sources()],
                   cwd=objs, check=True, capture_output=True)
    native = sorted(str(p) for p in objs.glob("*.o"))

    def link(out: str, *inputs: str) -> None:
        subprocess.run(["gcc", "-shared", "-fPIC", *inputs, "-o", str(root / out), "-lm", "-lpthread"], check=True,
                       capture_output=True)

    for how, code in CONSTRUCTORS.items():
        (root / f"{how}.c").write_text(code)
        link(f"lib{how}.so", str(root / f"{how}.c"), *native)
    link("libggspec.so", *native)
    link("libneeds.so", str(root / "abort.c"), f"-L{root}", "-Wl,--no-as-needed", "-l:libggspec.so",
         "-Wl,-rpath,$ORIGIN")
    return root


def test_symbols_come_from_the_table_and_the_needed_library(port: Path) -> None:
    """The symbols are read without loading the library (its constructor would abort this
    process), the needed library's too (DT_NEEDED, found through the run path)."""
    assert "ggspec_backend_cpu_init" in resolvable_symbols(port / "libabort.so")
    assert {"ggspec_backend_cpu_init", "ggspec_backend_tensor_set"} <= resolvable_symbols(port / "libneeds.so")


@pytest.mark.parametrize("how, status", [("abort", "crash"), ("segfault", "crash"), ("hang", "timeout")])
def test_a_library_that_dies_as_it_loads_exits_3_with_a_report(port: Path, tmp_path: Path, how: str,
                                                                   status: str) -> None:
    out = tmp_path / "run.json"
    env_cache = {"GGSPEC_CACHE": str(port / "cache")}  # the adapter modules: a throwaway cache
    proc = subprocess.run(
        [sys.executable, "-m", "ggspec.conformance", "check", "--target", "external", "--include", str(port / "include"),
         "--lib", str(port / f"lib{how}.so"), "--prefix", "ggspec_", "--select", "TDATA-1", "--max-examples", "1",
         "--timeout", "2", "--json", str(out), "--quiet"],
        capture_output=True, text=True, timeout=600, env={**os.environ, **env_cache})
    assert proc.returncode == 3, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    report = json.loads(out.read_text())
    assert "could not be loaded" in report["load_error"], report["load_error"]
    statuses = {c["id"]: c["status"] for c in report["clauses"]}
    assert statuses and set(statuses.values()) == {status}, statuses
    assert "could not be loaded" in proc.stdout + proc.stderr

