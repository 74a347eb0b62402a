"""The rc.8 builds the kernel benchmark compares with, and the figures' formatting: the part of the
first graph-compute benchmark that bench/run_all.py still uses.

- `rc8_o3_library`: rc.8's sources (fetched by the rc8 adapter) built with -O3 -march=native
  (`O3_FLAGS`), cached in the user's cache as `rc8-O3-native/`;
- `make_target(impl)`: a Target for `native`, `rc8 -O2` (the rc8 target as its adapter builds
  it) or `rc8 -O3 native`;
- `machine`, `_ms`, `_deviation`: the machine line, milliseconds, the largest deviation from a
  reference sample (relative to its largest value).

Its own runner (wall-clock medians, F32 and Q4_0 only) made the table in bench/RESULTS.md, "Before
issue 12"; bench/run_all.py replaced it (CPU time for 1 thread, best wall for 2, more cases), and
the runner is in git history (`git show d3bd432:bench/graph_compute.py`).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

O3_FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-std=c11", "-D_GNU_SOURCE", "-DNDEBUG")


# --- the rc.8 builds -------------------------------------------------------------------------------


def rc8_o3_library() -> tuple[Path, Path]:
    """rc.8's sources (fetched by the rc8 adapter) built with -O3 -march=native, cached."""
    from ggspec.conformance.adapters.external import cache_dir
    from ggspec.conformance.adapters.rc8 import LIBS, SOURCES, ensure_rc8

    cpp, _ = ensure_rc8()
    lib = cache_dir() / "rc8-O3-native" / "libwsp_ggml_rc8_O3.so"
    stamp = lib.with_suffix(".cmd")
    cmd = ["gcc", *O3_FLAGS, *(str(cpp / s) for s in SOURCES), "-o", str(lib), *LIBS]
    if not lib.is_file() or not stamp.is_file() or stamp.read_text() != " ".join(cmd):
        lib.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(cmd, check=True, capture_output=True)
        stamp.write_text(" ".join(cmd))
    return cpp, lib


def make_target(impl: str) -> Any:
    from ggspec.conformance.adapters import make_target as make
    from ggspec.reference.clauses import Profile

    if impl == "native":
        return make("native")
    if impl == "rc8 -O2":
        return make("rc8", Profile.RC8)
    from ggspec.conformance.adapters.external import build_external
    from ggspec.conformance.adapters.rc8 import PREFIX, spellings

    cpp, lib = rc8_o3_library()
    return build_external(cpp, lib, PREFIX, "rc8-O3", Profile.RC8, spellings)()


def _ms(s: float) -> str:
    return f"{s * 1e3:.3f}" if s < 0.01 else f"{s * 1e3:.1f}"


def _deviation(sample: list[float], truth: list[float]) -> float:
    scale = max((abs(v) for v in truth), default=1.0) or 1.0
    return max((abs(a - b) for a, b in zip(sample, truth, strict=False)), default=0.0) / scale


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gcc = "?"
    if shutil.which("gcc"):
        gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    import numpy as np

    return (f"{cpu}, {os.cpu_count()} logical CPUs, Linux {platform.release()}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, {gcc}")
