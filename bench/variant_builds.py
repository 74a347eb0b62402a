"""What the test suite's native variant builds cost: `python bench/variant_builds.py [--mode M]`.

The suite builds native/ again under other defines and flags (tests/test_*defect*.py,
test_vectors.py, test_faults.py, test_sched_*.py, tests/native/test_alloc_failure.py, ...). This
script builds that same list of variants, one after the other, in a fresh temporary folder:

- ``--mode ffi-compile``: each with ``ffi.compile`` (what build_variant did before issue 22: the
  C files one after the other, nothing reused), under the names the tests used then;
- ``--mode cached``: each with ``build_variant(..., cache_dir=<one fresh folder>)`` (C files in
  parallel, objects reused by compiler command and preprocessed text), under the names the tests
  use now (variants with the same flags share a name, so their cffi module file is reused too) —
  what a test run does with tests/conftest.py's $GGSPEC_BUILD_CACHE.

Prints, per mode, the builds, wall seconds, CPU seconds (user + system of this process and of the
compilers it waited for) and the load average before and after; `--markdown` one table row.
Not a test: nothing asserts on these figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

WRAPPED = ("malloc", "calloc", "realloc", "aligned_alloc", "free")


def variants() -> list[tuple[str, str, list[str], list[str], list[str]]]:
    """(name before, name now, defines, extra cflags, extra ldflags) of each build a test run makes."""
    from ggspec.native.build import SRC_DIR

    sched = [(d, "ggspec_native_" + d.lower()) for d in
             ("GGSPEC_DEFECT_SCHED_DEDUP", "GGSPEC_DEFECT_SCHED_EVAL_BATCH", "GGSPEC_DEFECT_SCHED_PASS2")]
    out: list[tuple[str, str, list[str], list[str], list[str]]] = [
        ("ggspec_native_defect", "ggspec_native_defect", ["GGSPEC_DEFECT_BOUNDS", "GGSPEC_DEFECT_COPY_VIEW_OFFSET"], [], []),
    ]
    out += [(name, name, [d], [], []) for d, name in sched]  # tests/checks/test_sched_defects.py
    out += [(name, name, [d], [], []) for d, name in sched]  # tests/native/test_sched_native.py
    out += [
        ("ggspec_native_scope_pass2", "ggspec_native_ggspec_defect_sched_pass2", ["GGSPEC_DEFECT_SCHED_PASS2"], [], []),
        ("ggspec_native_vectors_dedup", "ggspec_native_ggspec_defect_sched_dedup", ["GGSPEC_DEFECT_SCHED_DEDUP"], [], []),
        ("ggspec_native_permute_defect", "ggspec_native_permute_defect", ["GGSPEC_DEFECT_PERMUTE_STRIDES"], [], []),
        ("_ggspec_defect_permute", "ggspec_native_permute_defect", ["GGSPEC_DEFECT_PERMUTE_STRIDES"], [], []),
        ("_ggspec_defect_bounds", "_ggspec_defect_bounds", ["GGSPEC_DEFECT_BOUNDS"], [], []),
        ("_ggspec_defect_copy", "_ggspec_defect_copy", ["GGSPEC_DEFECT_COPY_VIEW_OFFSET"], [], []),
        ("ggspec_native_fault", "ggspec_native_fault", ["GGSPEC_FAULT_INJECTION"], ["-O0"], []),
        ("ggspec_native_alloc_failure", "ggspec_native_alloc_failure", [],
         ["-include", os.path.join(SRC_DIR, "alloc_failure.h")], ["-Wl," + ",".join(f"--wrap={f}" for f in WRAPPED)]),
    ]
    return out


def cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def load() -> str:
    with open("/proc/loadavg", encoding="utf-8") as f:
        return " ".join(f.read().split()[:3])


def run(mode: str) -> dict[str, object]:
    from ggspec.native.build import build_variant, make_ffibuilder

    todo = variants()
    before, c0, t0 = load(), cpu(), time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ggspec-variant-builds-") as work:
        for i, (old, new, defines, cflags, ldflags) in enumerate(todo):
            out = os.path.join(work, f"v{i}")
            if mode == "ffi-compile":
                make_ffibuilder(old, defines, cflags, ldflags).compile(tmpdir=out, verbose=False)
            else:
                build_variant(new, out, defines, cflags, ldflags, cache_dir=os.path.join(work, "cache"))
    return {"mode": mode, "builds": len(todo), "wall": time.monotonic() - t0, "cpu": cpu() - c0,
            "load_before": before, "load_after": load()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("ffi-compile", "cached", "both"), default="both")
    ap.add_argument("--markdown", action="store_true", help="one table row per mode")
    args = ap.parse_args(argv)
    for mode in (("ffi-compile", "cached") if args.mode == "both" else (args.mode,)):
        r = run(mode)
        if args.markdown:
            print(f"| {r['mode']} | {r['builds']} | {r['wall']:.1f} s | {r['cpu']:.1f} "
                  f"| {r['load_before']} → {r['load_after']} |")
        else:
            print(f"{r['mode']}: {r['builds']} builds, {r['wall']:.1f} s wall, {r['cpu']:.1f} CPU-s, "
                  f"load {r['load_before']} -> {r['load_after']}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
