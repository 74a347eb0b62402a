"""The `rc8-asan` target and `--sanitize address` (conformance/engine/sanitizer.py): rc.8 built with
AddressSanitizer and UBSan, where a memory error inside rc.8 that the suite cannot observe
otherwise becomes the verdict of the check that was running, naming its clauses and the report's
first frame in rc.8.

The planted defect: a copy of rc.8's sources, patched here in tmp_path (nothing of rc.8 is in
the repository), whose graph allocator allocates its hash values one entry short; the memset
that clears them then writes past the table. Nothing the suite observes changes on a release
build (the heap's slack absorbs it); under ASan the check's worker dies with a report. The same
check passes on the unpatched `rc8-asan`.

Skips where rc.8 cannot be fetched (except under CI=true) or gcc has no libasan.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.engine import sanitizer
from ggspec.conformance.tools.cli import main

#: the check run on the planted build, and its clauses as the verdict must name them
CHECK, CLAUSES = "alloc.legacy_allocr", "[ALLOC-22, ALLOC-7]"
#: the one line of rc.8's ggml-alloc.c the plant changes (gallocr_alloc_graph's table of hash values)
LINE = "        galloc->hash_values = malloc(sizeof(struct hash_node) * hash_size);\n"
SHORT = "        galloc->hash_values = malloc(sizeof(struct hash_node) * (hash_size - 1));\n"

needs_libasan = pytest.mark.skipif(sanitizer.runtime_library() is None, reason="gcc has no libasan here")


def _ggspec(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ggspec command in a child (it runs itself again with libasan preloaded)."""
    return subprocess.run([sys.executable, "-m", "ggspec.conformance.tools.cli", *args], capture_output=True,
                          text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def planted(rc8_or_skip: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the patched sources' folder, their ASan build)."""
    from ggspec.conformance.adapters.rc8 import CFLAGS_ASAN, LIBS_ASAN, build_library

    cpp, _ = rc8_or_skip.sources()
    root = tmp_path_factory.mktemp("rc8-planted")
    copy = root / "cpp"
    shutil.copytree(cpp, copy)
    alloc_c = copy / "ggml-alloc.c"
    text = alloc_c.read_text()
    assert text.count(LINE) == 1, "rc.8's ggml-alloc.c is not the one this test patches"
    alloc_c.write_text(text.replace(LINE, SHORT))
    lib = root / "lib" / "libwsp_ggml_planted_asan.so"
    lib.parent.mkdir()
    build_library(copy, lib, CFLAGS_ASAN, LIBS_ASAN)
    return copy, lib


@needs_libasan
def test_a_heap_overflow_in_rc8_is_a_crash_naming_the_clause_and_the_first_frame(planted: tuple[Path, Path],
                                                                                   tmp_path: Path) -> None:
    cpp, lib = planted
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", sanitizer.REEXEC_ENV)}
    run = _ggspec("check", "--target", "external", "--include", str(cpp), "--lib", str(lib), "--prefix", "wsp_ggml_",
                  "--sanitize", "address", "--profile", "rc8", "--select", CHECK, "--max-examples", "2", "--seed", "1",
                  "--quiet", "--json", str(report), "--repro-dir", str(tmp_path / "files"), env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "running again with LD_PRELOAD=" in run.stderr  # the one line saying why it ran itself again
    assert "verdict: FAIL" in run.stdout
    data = json.loads(report.read_text())
    (result,) = [r for r in data["checks"] if r["name"] == CHECK]
    assert result["status"] == "crash", result
    detail = result["detail"]
    assert f"{CHECK} {CLAUSES}: " in detail, detail
    assert "AddressSanitizer: heap-buffer-overflow, WRITE of size" in detail, detail
    assert "first frame: wsp_ggml_gallocr_alloc_graph at ggml-alloc.c:" in detail, detail
    assert "sanitizer report (stderr):" in detail and "SUMMARY: AddressSanitizer: heap-buffer-overflow" in detail
    # its C reproducer links the sanitized library (with -fsanitize=...) and makes the same report
    lines = detail.splitlines()
    (at,) = [i for i, ln in enumerate(lines) if ln.strip().startswith("C reproducer:")]
    command = lines[at + 1].strip()
    assert command.startswith("gcc ") and "-fsanitize=address,undefined" in command, command
    c = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300, env=env)
    assert c.returncode != 0 and "ERROR: AddressSanitizer: heap-buffer-overflow" in c.stderr, c.stdout + c.stderr
    got = sanitizer.find(c.stderr)
    assert got is not None and got.frame.startswith("wsp_ggml_gallocr_alloc_graph at ggml-alloc.c:"), c.stderr


@needs_libasan
def test_the_same_check_passes_on_the_unpatched_rc8_asan(rc8_or_skip: Any, tmp_path: Path) -> None:
    rc8_or_skip.sources()  # fetched (or skipped) here; the child builds rc8-asan in the cache as needed
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", sanitizer.REEXEC_ENV)}
    run = _ggspec("check", "--target", "rc8-asan", "--select", CHECK, "--max-examples", "2", "--seed", "1",
                  "--quiet", "--json", str(report), env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(report.read_text())
    assert data["target"] == "rc8-asan" and data["target_description"]["library"].endswith("libwsp_ggml_rc8_asan.so")
    assert [r["status"] for r in data["checks"] if r["name"] == CHECK] == ["pass"]


def test_in_process_without_the_runtime_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    if sanitizer.runtime_loaded():
        pytest.skip("this process has libasan loaded")
    assert main(["check", "--target", "rc8-asan", "--select", CHECK]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rc8-asan is built with AddressSanitizer" in err and "LD_PRELOAD=" in err, err


@pytest.mark.parametrize("target", ["native", "rc8-asserts", "reference"])
def test_sanitize_is_for_rc8_and_external_builds(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--target", target, "--sanitize", "address"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--sanitize address is for rc8" in err and target in err, err


# --- reading reports -------------------------------------------------------------------------

ASAN = """\
some output of the check before
=================================================================
==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6060000a1b58 at pc 0x7f00 bp 0x7f10 sp 0x7f20
WRITE of size 48 at 0x6060000a1b58 thread T0
    #0 0x7f8e4 in __interceptor_memset ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:799
    #1 0x7f8e5 in wsp_ggml_gallocr_alloc_graph /cache/rc8/package/cpp/ggml-alloc.c:661
    #2 0x7f8e6 in _cffi_f_wsp_ggml_gallocr_alloc_graph /cache/build/_ggspec_ext.c:100

0x6060000a1b58 is located 0 bytes to the right of 40-byte region [0x6060000a1b30,0x6060000a1b58)
allocated by thread T0 here:
    #0 0x7f8e7 in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f8e8 in wsp_ggml_gallocr_alloc_graph /cache/rc8/package/cpp/ggml-alloc.c:656

SUMMARY: AddressSanitizer: heap-buffer-overflow /cache/rc8/package/cpp/ggml-alloc.c:661 in wsp_ggml_gallocr_alloc_graph
Shadow bytes around the buggy address:
  0x0c0c80014310: fa fa fa fa 00 00 00 00 00 fa fa fa fa fa fa fa
==4242==ABORTING
"""

UBSAN = """\
/cache/rc8/package/cpp/ggml.c:1234:9: runtime error: index 4 out of bounds for type 'int [4]'
    #0 0x7f01 in wsp_ggml_visit_parents /cache/rc8/package/cpp/ggml.c:1234
    #1 0x7f02 in wsp_ggml_build_forward_expand /cache/rc8/package/cpp/ggml.c:1300
SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /cache/rc8/package/cpp/ggml.c:1234:9 in
"""


def test_an_asan_report_is_read_past_the_interceptor() -> None:
    got = sanitizer.find(ASAN)
    assert got is not None
    assert (got.tool, got.kind, got.access) == ("AddressSanitizer", "heap-buffer-overflow", "WRITE of size 48")
    assert got.frame == "wsp_ggml_gallocr_alloc_graph at ggml-alloc.c:661"  # not the memset interceptor, not line 656
    assert got.excerpt[0].startswith("==4242==ERROR: AddressSanitizer") and got.excerpt[-1].startswith("SUMMARY:")
    assert not any("Shadow" in ln or "allocated by" in ln for ln in got.excerpt)
    assert sanitizer.tail(ASAN).startswith("sanitizer report (stderr):\n  ==4242==ERROR")


def test_a_ubsan_report_names_its_kind_and_frame() -> None:
    got = sanitizer.find(UBSAN)
    assert got is not None
    assert got.tool == "UndefinedBehaviorSanitizer" and got.kind == "index 4 out of bounds for type 'int [4]'"
    assert got.frame == "wsp_ggml_visit_parents at ggml.c:1234"
    without_stack = sanitizer.find(UBSAN.splitlines()[0])
    assert without_stack is not None and without_stack.frame == "ggml.c:1234"


def test_a_segv_report_and_no_report() -> None:
    segv = ("==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010 (pc 0x7f1 bp 0x7f2 sp 0x7f3 T0)\n"
            "==7==The signal is caused by a READ memory access.\n"
            "    #0 0x7f1 in wsp_ggml_backend_tensor_get /cache/cpp/ggml-backend.c:200\n")
    got = sanitizer.find(segv)
    assert got is not None and got.kind == "SEGV on unknown address 0x000000000010"
    assert got.frame == "wsp_ggml_backend_tensor_get at ggml-backend.c:200"
    plain = "GGML_ASSERT: ggml.c:10: x\nAborted\n"
    assert sanitizer.find(plain) is None
    assert sanitizer.tail(plain) == "stderr:\n  GGML_ASSERT: ggml.c:10: x\n  Aborted"
    assert sanitizer.ending(plain, "exited with code 1") == "exited with code 1"
    assert sanitizer.ending(ASAN, "exited with code 1").startswith("made a sanitizer report, AddressSanitizer: ")


def test_the_environment_preloads_libasan_first_and_keeps_the_users_options() -> None:
    if sanitizer.runtime_library() is None:
        pytest.skip("gcc has no libasan here")
    env = sanitizer.reexec_environment({"LD_PRELOAD": "/x/libother.so", "ASAN_OPTIONS": "quarantine_size_mb=8"})
    assert env["LD_PRELOAD"].split()[0].endswith("libasan.so") and env["LD_PRELOAD"].split()[1] == "/x/libother.so"
    assert env["ASAN_OPTIONS"].startswith("detect_leaks=0:") and env["ASAN_OPTIONS"].endswith(":quarantine_size_mb=8")
    assert env["UBSAN_OPTIONS"] == sanitizer.UBSAN_DEFAULTS and env[sanitizer.REEXEC_ENV] == "1"
