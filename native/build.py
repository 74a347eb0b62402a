"""cffi build script for ggspec's native implementation (out-of-line API mode).

`ffibuilder` is what setuptools builds (``ggspec.native._native``, see setup.py). `build_variant`
compiles the same sources under another module name, with extra defines and flags, into a
directory of its own: the defect variants and sanitizer builds the tests use.

All paths are derived from this file's location, never from the working directory. The
module-level `ffibuilder` gives setuptools its paths relative to the project root (the
directory of setup.py, where setuptools always runs and which is this file's parent), since
setuptools refuses absolute source paths; everything else uses absolute paths.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(HERE)
INCLUDE_DIR = os.path.join(HERE, "include")
SRC_DIR = os.path.join(HERE, "src")
CDEF_DIR = os.path.join(HERE, "cdef")

# one cdef file per API area, in dependency order
CDEF_AREAS: tuple[str, ...] = (
    "core", "buffer", "tdata", "copy", "backend", "registry", "cpu", "vdev", "webgpu",
    "graph", "ops", "quants", "alloc", "sched", "graph_copy",
)

# one C module per API area, named like the reference model's modules
SOURCES: tuple[str, ...] = (
    "types.c",
    "tensor.c",
    "buffer.c",
    "tdata.c",
    "copy.c",
    "backend.c",
    "registry.c",
    "cpu.c",
    "vdev.c",
    "webgpu.c",     # the WebGPU device (a stub when the wgpu package's headers are absent)
    "graph.c",
    "ops.c",        # the operations' constructors
    "kernels.c",    # computing one node on the CPU
    "executor.c",   # computing a graph on the CPU: plan, then node by node
    "quants.c",
    "simd.c",       # the kernels with a machine-specific form, chosen at run time
    "simd_avx2.c",  # their AVX2 + FMA + F16C form (gcc target attributes, no -march)
    "simd_avx512.c",  # their AVX-512 F/BW/VL form (the same way), the same bits as AVX2's
    "threads.c",    # the CPU backend's worker pool and barrier
    "alloc.c",
    "sched.c",
    "graph_copy.c",
)

DEFAULT_CFLAGS: tuple[str, ...] = ("-O2", "-std=c11", "-Wall", "-Wextra")

PREAMBLE = """
#include "ggspec.h"
#include "ggspec-backend-impl.h"
#include "ggspec-vdev.h"
#include "ggspec-webgpu.h"
#include "ggspec-alloc.h"
"""


def wgpu_include_dir() -> str | None:
    """The directory holding webgpu.h and wgpu.h of wgpu-native: $GGSPEC_WGPU_INCLUDE, else the
    installed `wgpu` package's resources/ (found without importing it), else None (webgpu.c then
    builds as a stub whose init says so)."""
    env = os.environ.get("GGSPEC_WGPU_INCLUDE")
    candidates = [env] if env else []
    try:
        import importlib.util

        spec = importlib.util.find_spec("wgpu")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        candidates.append(os.path.join(os.path.dirname(spec.origin), "resources"))
    for d in candidates:
        if d and os.path.isfile(os.path.join(d, "webgpu.h")) and os.path.isfile(os.path.join(d, "wgpu.h")):
            return os.path.abspath(d)
    return None


WGSL_SOURCE = os.path.join(SRC_DIR, "webgpu.wgsl")
WGSL_HEADER = os.path.join(SRC_DIR, "webgpu_wgsl.h")


def wgsl_header_text() -> str:
    """native/src/webgpu_wgsl.h: webgpu.wgsl as one C string literal (kept in the tree, so that a
    shim build of webgpu.c needs nothing generated; tests/native/test_webgpu.py checks it is current)."""
    with open(WGSL_SOURCE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    body = "\n".join('    "' + ln.replace("\\", "\\\\").replace('"', '\\"') + '\\n"' for ln in lines)
    return ("/* generated from webgpu.wgsl by native/build.py (wgsl_header_text): do not edit */\n"
            "static const char webgpu_wgsl[] =\n" + body + ";\n")


def write_wgsl_header() -> None:
    """Regenerate webgpu_wgsl.h when webgpu.wgsl changed (a tree without the .wgsl keeps its header)."""
    if not os.path.isfile(WGSL_SOURCE):
        return
    text = wgsl_header_text()
    try:
        with open(WGSL_HEADER, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(WGSL_HEADER, "w", encoding="utf-8") as f:
        f.write(text)


def read_cdef() -> str:
    """The cdef text of all areas, concatenated in order."""
    parts: list[str] = []
    for area in CDEF_AREAS:
        with open(os.path.join(CDEF_DIR, f"{area}.h"), encoding="utf-8") as f:
            parts.append(f.read())
    return "\n".join(parts)


def _define_macros(defines: Sequence[str]) -> list[tuple[str, str | None]]:
    """``NAME`` or ``NAME=VALUE`` strings as setuptools define_macros."""
    macros: list[tuple[str, str | None]] = []
    for d in defines:
        name, sep, value = d.partition("=")
        macros.append((name, value if sep else None))
    return macros


def _builder(
    module_name: str,
    defines: Sequence[str],
    extra_cflags: Sequence[str],
    extra_ldflags: Sequence[str],
    root_relative: bool,
) -> cffi.FFI:
    def path(p: str) -> str:
        return os.path.relpath(p, PROJECT_ROOT).replace(os.sep, "/") if root_relative else p

    write_wgsl_header()
    include_dirs = [path(INCLUDE_DIR)]
    macros = _define_macros(defines)
    wgpu = wgpu_include_dir()
    if wgpu is not None:  # an absolute path: setuptools refuses only absolute *source* paths
        include_dirs.append(wgpu)
        macros.append(("GGSPEC_HAVE_WGPU", None))
    ffi = cffi.FFI()
    ffi.cdef(read_cdef())
    ffi.set_source(
        module_name,
        PREAMBLE,
        sources=[path(os.path.join(SRC_DIR, s)) for s in SOURCES],
        include_dirs=include_dirs,
        define_macros=macros,
        libraries=["m", "pthread", "dl"],
        extra_compile_args=[*DEFAULT_CFLAGS, *extra_cflags],
        extra_link_args=list(extra_ldflags),
    )
    return ffi


def make_ffibuilder(
    module_name: str = "ggspec.native._native",
    defines: Sequence[str] = (),
    extra_cflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
) -> cffi.FFI:
    """An FFI builder for the native module under `module_name` (absolute paths)."""
    return _builder(module_name, defines, extra_cflags, extra_ldflags, root_relative=False)


def build_variant(
    module_name: str,
    tmpdir: str,
    defines: Sequence[str] = (),
    extra_cflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
) -> str:
    """Compile a variant module into `tmpdir`; returns the path of the shared library.

    Import it with ``sys.path`` holding `tmpdir`, or through ``native.load_lib`` with
    ``GGSPEC_NATIVE_MODULE=<tmpdir>:<module_name>``. The flags it was built with are recorded in
    ``<tmpdir>/<module_name>.build.json`` (see `variant_flags`): a C reproducer needs them.
    """
    ffi = make_ffibuilder(module_name, defines, extra_cflags, extra_ldflags)
    path: str = ffi.compile(tmpdir=tmpdir, verbose=False)
    import json

    with open(os.path.join(tmpdir, f"{module_name}.build.json"), "w", encoding="utf-8") as f:
        json.dump({"module": module_name, "defines": list(defines), "cflags": [*DEFAULT_CFLAGS, *extra_cflags],
                   "ldflags": list(extra_ldflags)}, f, indent=1)
    return path


def variant_flags(tmpdir: str, module_name: str) -> dict[str, list[str]] | None:
    """The defines, cflags and ldflags a variant was built with (`build_variant`), or None."""
    import json

    try:
        with open(os.path.join(tmpdir, f"{module_name}.build.json"), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return {k: [str(x) for x in data.get(k, [])] for k in ("defines", "cflags", "ldflags")}


# what setup.py's cffi_modules builds: ggspec.native._native, paths relative to the project root
ffibuilder = _builder("ggspec.native._native", (), (), (), root_relative=True)

if __name__ == "__main__":
    # `python -m ggspec.native.build`: rebuild native/_native.*.so in place after a C change
    # (run it as a module: run as a script, native/copy.py would shadow the stdlib's copy)
    import glob
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        built = make_ffibuilder().compile(tmpdir=work, verbose=False)
        for stale in glob.glob(os.path.join(HERE, "_native.*.so")):
            os.remove(stale)
        shutil.copy2(built, os.path.join(HERE, os.path.basename(built)))
        print(os.path.join(HERE, os.path.basename(built)))
