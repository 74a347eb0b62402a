"""ggspec's own native sources presented as a port would be: the tests that build them as a plain
shared library (tests/adapters/test_external.py, test_load_crash.py) lay them out with this."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NATIVE_INCLUDE = ROOT / "native" / "include"
#: ggml's header file names -> ours, which declare the same API under the ggspec_ prefix
GGML_HEADERS = {"ggml.h": "ggspec.h", "ggml-alloc.h": "ggspec-alloc.h", "ggml-backend.h": "ggspec-backend.h",
                "ggml-backend-impl.h": "ggspec-backend-impl.h"}


def ggml_named_include(root: Path) -> Path:
    """root/include: links to our public headers under ggml's file names (a port's include folder)."""
    inc = root / "include"
    inc.mkdir()
    for ggml, ours in GGML_HEADERS.items():
        (inc / ggml).symlink_to(NATIVE_INCLUDE / ours)
    return inc


def native_sources() -> list[str]:
    """Every C source of native/src, sorted."""
    return sorted(str(p) for p in (ROOT / "native" / "src").glob("*.c"))
