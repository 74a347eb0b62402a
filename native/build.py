"""cffi build script for ggspec's native implementation (out-of-line API mode).

`ffibuilder` is what setuptools builds (``ggspec.native._native``, see setup.py). `build_variant`
compiles the same sources under another module name, with extra defines and flags, into a
directory of its own: the defect variants and sanitizer builds the tests use.

All paths are derived from this file's location, never from the working directory. The
module-level `ffibuilder` gives setuptools its paths relative to the project root (the
directory of setup.py, where setuptools always runs and which is this file's parent), since
setuptools refuses absolute source paths; everything else uses absolute paths.

The cdef is not written by hand: `read_cdef` runs the public headers (native/include) through
the C compiler's preprocessor at build time and gives cffi what they declare, in include order,
plus cdef/callbacks.h, the only hand-written part (the functions implemented in Python, which no
header declares). The external targets read their ABI from the same text, renamed
(conformance/adapters/external.py). ``python -m ggspec.native.build --cdef`` prints it;
tests/native/test_cdef.py fails on any drift between the headers and the built module.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(HERE)
INCLUDE_DIR = os.path.join(HERE, "include")
SRC_DIR = os.path.join(HERE, "src")
#: the hand-written part of the cdef: what the headers cannot give (functions implemented in Python)
CALLBACKS_CDEF = os.path.join(HERE, "cdef", "callbacks.h")

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

# the public headers, in the order a user includes them: the module is compiled with this
# preamble, and the cdef is what it declares (`read_cdef`)
PREAMBLE = """
#include "ggspec.h"
#include "ggspec-backend-impl.h"
#include "ggspec-vdev.h"
#include "ggspec-webgpu.h"
#include "ggspec-alloc.h"
"""

# headers the public ones include: left empty for the preprocessor, since cffi knows their types
# (bool, size_t, int64_t...) and the system's versions would bring declarations of their own
_STD_HEADERS: tuple[str, ...] = ("stdbool.h", "stddef.h", "stdint.h")


class CdefError(Exception):
    """The public headers could not be turned into a cdef (no C compiler, or a construct the
    generator does not handle)."""


def _c_preprocessor() -> list[str]:
    """The C compiler setuptools builds with (``$CC``, else Python's configured one, else cc), run as
    a preprocessor."""
    import shlex
    import sysconfig

    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return [*shlex.split(cc), "-E", "-dD"]


def preprocess_headers(include_dir: str = INCLUDE_DIR) -> list[tuple[str, str]]:
    """The preamble's headers through the C preprocessor: (header file name, line) for each line
    that comes from a file of `include_dir`, macro definitions included (``-dD``) in place."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for name in _STD_HEADERS:
            open(os.path.join(tmp, name), "w").close()
        main = os.path.join(tmp, "cdef.c")
        with open(main, "w", encoding="utf-8") as f:
            f.write(PREAMBLE)
        cmd = [*_c_preprocessor(), "-nostdinc", f"-I{tmp}", f"-I{os.path.abspath(include_dir)}", main]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            raise CdefError(f"cannot run the C preprocessor {cmd[0]!r}: {e}") from e
    if out.returncode != 0:
        raise CdefError(f"{' '.join(cmd)} failed:\n{out.stderr.strip()}")
    ours = os.path.realpath(include_dir)
    lines: list[tuple[str, str]] = []
    current: str | None = None
    for line in out.stdout.splitlines():
        marker = re.match(r'#\s*(?:line\s+)?\d+\s+"([^"]*)"', line)
        if marker:
            path = marker.group(1)  # "<built-in>", the stand-in std headers, or ours
            inside = not path.startswith("<") and os.path.dirname(os.path.realpath(path)) == ours
            current = os.path.basename(path) if inside else None
        elif current is not None:
            lines.append((current, line))
    return lines


_INT_LITERAL = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|\d+)")
_OBJECT_MACRO = re.compile(r"#\s*define\s+(\w+)(?:\s+(.*))?$")
_SIZEOF = re.compile(r"\bsizeof\s*\(([^()]*)\)")


def _cdef_line(line: str) -> str | None:
    """One preprocessed line as cffi takes it, or None to leave it out.

    - ``#define NAME <integer>`` stays; another value (``((size_t)-1)``) becomes ``#define NAME ...``,
      for the compiler to fill in (API mode); a function-like or empty macro is left out;
    - ``sizeof(T)`` in a constant (an array length) becomes its value: cffi's parser evaluates
      only arithmetic on numbers;
    - any other directive is an error, so that nothing is dropped unseen.
    """
    stripped = line.strip()
    if stripped.startswith("#"):
        if re.match(r"#\s*undef\b", stripped):
            return None
        m = _OBJECT_MACRO.match(stripped)
        if m is None:
            if re.match(r"#\s*define\s+\w+\(", stripped):
                return None  # a function-like macro (VD(x) in ggspec-vdev.h): already expanded
            raise CdefError(f"a directive the cdef generator does not handle: {stripped}")
        name, value = m.group(1), (m.group(2) or "").strip()
        if not value:
            return None
        return f"#define {name} {value if _INT_LITERAL.fullmatch(value) else '...'}"

    def size_of(m: re.Match[str]) -> str:
        try:
            return str(cffi.FFI().sizeof(m.group(1).strip()))
        except (cffi.FFIError, cffi.CDefError, TypeError) as e:
            raise CdefError(f"cannot evaluate {m.group(0)} for the cdef: {e}") from e

    return _SIZEOF.sub(size_of, line)


@functools.cache
def generated_cdef(include_dir: str = INCLUDE_DIR) -> str:
    """What the public headers declare, as a cdef: every line of theirs after the C preprocessor
    (comments gone, macros expanded, ``extern "C"`` guards off), in include order, each header's
    part headed by its name (see `_cdef_line` for the few lines cffi cannot take as they are)."""
    out: list[str] = []
    header: str | None = None
    for name, line in preprocess_headers(include_dir):
        converted = _cdef_line(line)
        if converted is None or not converted.strip():
            if converted is not None and out and out[-1].strip():
                out.append("")  # one blank line at most
            continue
        if name != header:
            header = name
            out.append(f"\n/* ---- {name} ---- */")
        out.append(converted.rstrip())
    return "\n".join(out).strip() + "\n"


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
    """The cdef the module is built with: what the public headers declare (`generated_cdef`),
    then the hand-written declarations of the functions implemented in Python (cdef/callbacks.h)."""
    with open(CALLBACKS_CDEF, encoding="utf-8") as f:
        callbacks = f.read()
    return generated_cdef() + "\n" + callbacks


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
    replaced: Mapping[str, str] | None = None,
) -> cffi.FFI:
    def path(p: str) -> str:
        return os.path.relpath(p, PROJECT_ROOT).replace(os.sep, "/") if root_relative else p

    write_wgsl_header()
    replaced = replaced or {}
    # a replaced source (a defect variant's patched copy) lives elsewhere: its quoted includes are
    # found in native/src (-iquote: not <assert.h>, which native/src has one of its own)
    quote = ["-iquote", path(SRC_DIR)] if replaced else []
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
        sources=[replaced.get(s) or path(os.path.join(SRC_DIR, s)) for s in SOURCES],
        include_dirs=include_dirs,
        define_macros=macros,
        libraries=["m", "pthread", "dl"],
        extra_compile_args=[*DEFAULT_CFLAGS, *quote, *extra_cflags],
        extra_link_args=list(extra_ldflags),
    )
    return ffi


def make_ffibuilder(
    module_name: str = "ggspec.native._native",
    defines: Sequence[str] = (),
    extra_cflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
    replaced: Mapping[str, str] | None = None,
) -> cffi.FFI:
    """An FFI builder for the native module under `module_name` (absolute paths); `replaced`:
    source file name -> the path of the file compiled instead (a defect variant's)."""
    return _builder(module_name, defines, extra_cflags, extra_ldflags, root_relative=False, replaced=replaced)


def defect_sources(defines: Sequence[str], out_dir: str) -> dict[str, str]:
    """The sources a `GGSPEC_DEFECT_*` define replaces, patched into `out_dir`
    (native/testing/defects.py, which a checkout has and a wheel does not); {} without one."""
    if not any(d.startswith("GGSPEC_DEFECT_") for d in defines):
        return {}
    import importlib.util

    where = os.path.join(HERE, "testing", "defects.py")
    if not os.path.isfile(where):
        raise ValueError("a defect variant is built from a checkout: native/testing/defects.py is not here")
    spec = importlib.util.spec_from_file_location("_ggspec_native_defects", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    out: dict[str, str] = module.patched_sources(tuple(defines), out_dir)
    return out


def build_variant(
    module_name: str,
    tmpdir: str,
    defines: Sequence[str] = (),
    extra_cflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
    cache_dir: str | None = None,
) -> str:
    """Compile a variant module into `tmpdir`; returns the path of the shared library.

    The C files are compiled in parallel (`compile_module`); with `cache_dir` (default:
    ``$GGSPEC_BUILD_CACHE``, which the test suite sets to one folder per test run) an object whose
    compiler command and preprocessed text were compiled before is reused from there, so variants
    that differ in one define recompile only the files that define reaches.

    A `GGSPEC_DEFECT_*` define plants that defect (native/testing/defects.py): the source it
    touches is compiled from a patched copy under `tmpdir`; native/src/ has no trace of it.

    Import it with ``sys.path`` holding `tmpdir`, or through ``native.load_lib`` with
    ``GGSPEC_NATIVE_MODULE=<tmpdir>:<module_name>``. The flags it was built with are recorded in
    ``<tmpdir>/<module_name>.build.json`` (see `variant_flags`): a C reproducer needs them.
    """
    replaced = defect_sources(defines, os.path.join(tmpdir, f"{module_name}.defect-src"))
    ffi = make_ffibuilder(module_name, defines, extra_cflags, extra_ldflags, replaced)
    path = compile_module(ffi, tmpdir, cache_dir if cache_dir is not None else os.environ.get(BUILD_CACHE_ENV) or None)
    import json

    with open(os.path.join(tmpdir, f"{module_name}.build.json"), "w", encoding="utf-8") as f:
        json.dump({"module": module_name, "defines": list(defines), "cflags": [*DEFAULT_CFLAGS, *extra_cflags],
                   "ldflags": list(extra_ldflags), "replaced": replaced}, f, indent=1)
    return path


#: a folder of compiled objects `build_variant` reuses (see `compile_module`); unset: none
BUILD_CACHE_ENV = "GGSPEC_BUILD_CACHE"


@functools.cache
def _compiler_identity(exe: str) -> str:
    """What `exe --version` prints (part of an object's cache key), or the bare name."""
    import subprocess

    try:
        return subprocess.run([exe, "--version"], capture_output=True, text=True, check=False, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return exe


class _Lock:
    """An exclusive lock on a file (fcntl.flock; no lock where fcntl is missing): two processes
    that need the same object compile it once, the second waits and reuses it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> _Lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def _cached_compile(compiler: Any, cache_dir: str) -> Any:
    """`compiler._compile` (one source to one object, distutils' UnixCCompiler) through a cache.

    The key is the sha256 of the compiler's identity, the full command (the source's path as a
    placeholder) and the source as the same command preprocesses it (``-E``: every header, define
    and flag that reaches it), like ccache's preprocessor mode."""
    import hashlib
    import shutil
    import subprocess

    original = compiler._compile
    objects = os.path.join(cache_dir, "objects")
    os.makedirs(objects, exist_ok=True)

    def _compile(obj: str, src: str, ext: str, cc_args: list[str], extra_postargs: list[str], pp_opts: list[str]) -> None:
        command = [*compiler.compiler_so, *cc_args, src, *extra_postargs]
        pre = subprocess.run([*compiler.compiler_so, *[a for a in cc_args if a != "-c"], "-E", src, *extra_postargs],
                             capture_output=True, check=False)
        if pre.returncode != 0:  # the compile itself says what is wrong
            original(obj, src, ext, cc_args, extra_postargs, pp_opts)
            return
        h = hashlib.sha256(_compiler_identity(compiler.compiler_so[0]).encode())
        # the preprocessor's options (-D, -U, -I) are in the preprocessed text: a define that reaches
        # no line of this source leaves its object's key as it is
        h.update("\0".join("<source>" if a == src else a for a in command if a not in pp_opts).encode())
        h.update(pre.stdout.replace(os.fsencode(src), b"<source>"))
        cached = os.path.join(objects, h.hexdigest() + ".o")
        with _Lock(cached + ".lock"):
            if os.path.isfile(cached):
                shutil.copyfile(cached, obj)
                return
            original(obj, src, ext, cc_args, extra_postargs, pp_opts)
            partial = f"{cached}.{os.getpid()}.tmp"
            shutil.copyfile(obj, partial)
            os.replace(partial, cached)

    return _compile


def _parallel_compile(compiler: Any) -> Any:
    """`compiler.compile` with its sources compiled by a pool of threads (distutils compiles one
    after the other); the same commands, the same objects."""
    from concurrent.futures import ThreadPoolExecutor

    def compile(sources: list[str], output_dir: str | None = None, macros: Any = None, include_dirs: Any = None,
                debug: int = 0, extra_preargs: Any = None, extra_postargs: Any = None, depends: Any = None) -> list[str]:
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
        todo = [(obj, *build[obj]) for obj in objects if obj in build]
        with ThreadPoolExecutor(max_workers=max(1, min(len(todo), os.cpu_count() or 1))) as pool:
            for f in [pool.submit(compiler._compile, obj, src, ext, cc_args, extra_postargs, pp_opts)
                      for obj, src, ext in todo]:
                f.result()
        return list(objects)

    return compile


def compile_module(ffi: cffi.FFI, tmpdir: str, cache_dir: str | None = None) -> str:
    """Compile `ffi`'s module into `tmpdir` (what ``ffi.compile(tmpdir=tmpdir)`` does: the same
    distutils build_ext, the same commands), its C files in parallel, and with `cache_dir`
    through an object cache (`_cached_compile`); returns the shared library's path. Where the
    distutils it needs cannot be had, or the compiler is not distutils' Unix one, it is
    ``ffi.compile`` itself."""
    try:
        from cffi._shimmed_dist_utils import CompileError, Distribution, LinkError, build_ext  # ffi.compile's
    except Exception:  # pragma: no cover - no usable distutils
        return str(ffi.compile(tmpdir=tmpdir, verbose=False))

    class _BuildExt(build_ext):  # type: ignore[misc]
        def build_extension(self, ext: Any) -> Any:
            cc = self.compiler
            if all(hasattr(cc, a) for a in ("_compile", "_setup_compile", "_get_cc_args", "compiler_so")):
                if cache_dir:
                    cc._compile = _cached_compile(cc, cache_dir)
                cc.compile = _parallel_compile(cc)
            return super().build_extension(ext)

    tmpdir = os.path.abspath(tmpdir)
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating <file>.c"
        ext = ffi.distutils_extension(tmpdir, verbose=False)
    dist = Distribution({"ext_modules": [ext], "cmdclass": {"build_ext": _BuildExt}})
    options = dist.get_option_dict("build_ext")
    options["debug"] = ("ggspec", bool(sys.flags.debug))
    options["force"] = ("ggspec", True)
    options["build_lib"] = ("ggspec", tmpdir)
    options["build_temp"] = ("ggspec", tmpdir)
    saved = os.environ.copy()
    try:
        dist.run_command("build_ext")
    except (CompileError, LinkError) as e:  # as ffi.compile reports them
        raise cffi.VerificationError(f"{e.__class__.__name__}: {e}") from e
    finally:
        if os.environ != saved:  # as ffi.compile: distutils may set variables (on Windows)
            os.environ.clear()
            os.environ.update(saved)
    (so,) = dist.get_command_obj("build_ext").get_outputs()
    return os.path.abspath(str(so))


def variant_flags(tmpdir: str, module_name: str) -> dict[str, list[str]] | None:
    """The defines, cflags and ldflags a variant was built with (`build_variant`), and the
    patched sources it compiled instead of native/src's ("replaced": a defect variant's), or None."""
    import json

    try:
        with open(os.path.join(tmpdir, f"{module_name}.build.json"), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    out = {k: [str(x) for x in data.get(k, [])] for k in ("defines", "cflags", "ldflags")}
    out["replaced"] = [str(x) for x in (data.get("replaced") or {}).values()]
    return out


# what setup.py's cffi_modules builds: ggspec.native._native, paths relative to the project root
ffibuilder = _builder("ggspec.native._native", (), (), (), root_relative=True)

if __name__ == "__main__":
    # `python -m ggspec.native.build`: rebuild native/_native.*.so in place after a C change
    # (run it as a module: run as a script, native/copy.py would shadow the stdlib's copy);
    # `python -m ggspec.native.build --cdef`: print the cdef cffi is given
    import glob

    if sys.argv[1:] == ["--cdef"]:
        sys.stdout.write(read_cdef())
        sys.exit(0)
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        built = make_ffibuilder().compile(tmpdir=work, verbose=False)
        for stale in glob.glob(os.path.join(HERE, "_native.*.so")):
            os.remove(stale)
        shutil.copy2(built, os.path.join(HERE, os.path.basename(built)))
        print(os.path.join(HERE, os.path.basename(built)))
