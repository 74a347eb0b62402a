"""The `external` adapter: the C API adapter over any build of ggml-backend, given its headers,
its shared library and its symbol prefix (`ggml_`, `wsp_ggml_`).

`build_external(include_dir, lib_path, prefix, name)` compiles a cffi API-mode module at test
time against the target's own headers (ggml.h, ggml-alloc.h, ggml-backend.h,
ggml-backend-impl.h), so a signature or layout that drifted from ours fails at compile or import
time, by name. The module holds:

- our cdef (`read_cdef` of native/build.py: what native/include/*.h declares, generated from
  the headers as for the native build, and the Python callbacks) with `ggspec_` renamed to the
  prefix and `GGSPEC_` to its upper case, except the virtual device's own names
  (`ggspec_vdev_*`, `ggspec_backend_is_vdev`, `struct ggspec_vdev_params`, as ggspec-vdev.h
  spells them) and the `extern "Python"` init function `ggspec_py_init_fn`. Every function
  declaration the target's headers or library lack is dropped (so is our test hook
  `*_backend_reg_reset_for_tests`): the method that needs it raises `MissingSymbol`, only the
  checks using it report `unsupported`;
- the virtual device (native/src/vdev.c) compiled as a shim against the target's impl header.

The module links the target library with an rpath, and is cached outside the repository in
`$GGSPEC_CACHE` (default `$XDG_CACHE_HOME/ggspec`, else `~/.cache/ggspec`) under
`build/<sha256 of headers, library, our cdef and shim sources, prefix, Python and cffi>/`.

rc.8's GGML_ASSERT forks and execs `gdb` to print a backtrace before it aborts. Loading an
external target puts a `gdb` that exits at once first on PATH (`<cache>/bin`), so death tests
stay fast and their stderr holds only the assert line.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile

from ..engine.isolate import traced_call
from ..errors import CompileFailed as _CompileFailed
from ..errors import TargetUnavailable
from .capi import CApiTarget, python_init_fn
from .steps import step

__all__ = ["HEADERS", "ExternalBuild", "ExternalTarget", "TargetUnavailable", "build_external", "cache_dir"]

#: the target's headers the module is compiled against, in include order
HEADERS: tuple[str, ...] = ("ggml.h", "ggml-alloc.h", "ggml-backend.h", "ggml-backend-impl.h")
#: internal headers that declare functions some checks use (hash sets, quantization rows):
#: included too when the target's include dir has them
OPTIONAL_HEADERS: tuple[str, ...] = ("ggml-impl.h", "ggml-quants.h")

#: a declaration of ours that disagrees with the target's in these ways fails the build
_DRIFT_IS_AN_ERROR = ("-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
                      "-Werror=int-conversion")

#: bump when the way the module is generated changes (part of the cache key)
BUILD_FORMAT = "1"

_NATIVE = Path(__file__).resolve().parent.parent.parent / "native"
_SHIM_SOURCES = (_NATIVE / "src" / "vdev.c", _NATIVE / "src" / "vdev-prefix.h", _NATIVE / "src" / "versions.h",
                 _NATIVE / "include" / "ggspec-vdev.h",
                 _NATIVE / "src" / "webgpu.c", _NATIVE / "src" / "webgpu_wgsl.h", _NATIVE / "include" / "ggspec-webgpu.h")
#: the headers whose `ggspec_` names the shim keeps (the virtual device's and the WebGPU backend's)
_SHIM_HEADERS = ("ggspec-vdev.h", "ggspec-webgpu.h")


def cache_dir() -> Path:
    """Where downloads and builds of external targets live: never inside the repository."""
    env = os.environ.get("GGSPEC_CACHE")
    if env:  # absolute once, here: a relative GGSPEC_CACHE names the same folder after any chdir
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return ((Path(xdg) if xdg else Path.home() / ".cache") / "ggspec").resolve()


def install_quiet_gdb() -> Path:
    """Put a `gdb` that exits 0 at once first on PATH (this process and its children)."""
    bindir = cache_dir() / "bin"
    gdb = bindir / "gdb"
    if not gdb.exists():
        bindir.mkdir(parents=True, exist_ok=True)
        tmp = bindir / f".gdb.{os.getpid()}"
        tmp.write_text("#!/bin/sh\n# ggspec: stands in for gdb so that GGML_ASSERT's backtrace is skipped\nexit 0\n")
        tmp.chmod(0o755)
        os.replace(tmp, gdb)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != str(bindir):
        os.environ["PATH"] = str(bindir) + os.pathsep + path
    return gdb


# --- the cdef --------------------------------------------------------------------------------

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _keep_names() -> set[str]:
    """Identifiers that keep their `ggspec_` spelling: the shim's own (ggspec-vdev.h) and the
    Python-implemented registry init function."""
    text = "\n".join((_NATIVE / "include" / h).read_text(encoding="utf-8") for h in _SHIM_HEADERS)
    return set(re.findall(r"\bggspec_\w+", _COMMENT.sub(" ", text))) | {"ggspec_py_init_fn"}


def rename(text: str, prefix: str, keep: set[str]) -> str:
    """`ggspec_x` → `<prefix>x`, `GGSPEC_X` → `<PREFIX>X`, except the names in `keep`."""
    upper = prefix.upper()

    def sub(m: re.Match[str]) -> str:
        word = m.group(0)
        if word in keep:
            return word
        if word.startswith("ggspec_"):
            return prefix + word[len("ggspec_"):]
        return upper + word[len("GGSPEC_"):]

    return re.sub(r"\b(?:ggspec|GGSPEC)_\w+", sub, text)


def statements(text: str) -> list[str]:
    """Top-level statements of a cdef: `#` lines, and text up to `;` outside braces."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for line in _COMMENT.sub(" ", text).splitlines():
        if depth == 0 and not "".join(cur).strip() and line.lstrip().startswith("#"):
            out.append(line.strip())
            continue
        for ch in line:
            cur.append(ch)
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == ";" and depth == 0:
                out.append("".join(cur).strip())
                cur = []
        cur.append("\n")
    rest = "".join(cur).strip()
    if rest:
        out.append(rest)
    return out


def declared_function(stmt: str) -> str | None:
    """The name a function declaration declares; None for anything else."""
    head = stmt.lstrip()
    if head.startswith(("#", "typedef", "extern")) or "(" not in head:
        return None
    if "{" in head and head.index("{") < head.index("("):
        return None  # a struct, union or enum definition
    m = re.match(r"[^()]*?\b(\w+)\s*\(", head, re.S)
    return m.group(1) if m else None


def defined_macro(stmt: str) -> str | None:
    m = re.match(r"#\s*define\s+(\w+)", stmt)
    return m.group(1) if m else None


@dataclass(frozen=True)
class CdefPlan:
    cdef: str
    dropped: tuple[str, ...]
    #: our name without prefix -> the target's symbol, for functions found under an alternative prefix
    aliases: dict[str, str]


#: declarations the adapter may fall back to on external targets, beyond what native/ has
#: (written with our prefix; each block is used only when the target has its function)
EXTERNAL_CDEF: dict[str, str] = {
    "ggspec_internal_get_type_traits": """
typedef struct {
    const char * type_name;
    int blck_size;
    size_t type_size;
    bool is_quantized;
    enum ggspec_type vec_dot_type;
    ...;
} ggspec_type_traits_t;
ggspec_type_traits_t ggspec_internal_get_type_traits(enum ggspec_type type);
""",
}

#: other spellings of a function, given our name without prefix (see build_external)
Spellings = Callable[[str], Sequence[str]]
#: a version adapter's say on each declaration kept (see versions.py): given the function's name
#: ("" for another statement) and our declaration, the one to compile instead, or None to drop it
Revise = Callable[[str, str], str | None]


def make_cdef(headers_text: str, exported: Callable[[str], bool], prefix: str,
              spellings: Spellings | None = None, revise: Revise | None = None) -> CdefPlan:
    """Our cdef renamed for `prefix`, without what the target lacks (see the module doc). A
    function the target has only under another of its `spellings` is declared under that name."""
    from ggspec.native.build import read_cdef

    def present(name: str) -> bool:
        return re.search(rf"\b{re.escape(name)}\b", headers_text) is not None and exported(name)

    keep = _keep_names()
    kept: list[str] = []
    dropped: list[str] = []
    aliases: dict[str, str] = {}
    cdef = read_cdef()
    for fn_name, block in EXTERNAL_CDEF.items():
        if present(rename(fn_name, prefix, keep)) and fn_name not in cdef:
            cdef += block
    for stmt in statements(rename(cdef, prefix, keep)):
        fn = declared_function(stmt)
        if fn is not None and fn not in keep:
            if fn.endswith("backend_reg_reset_for_tests"):
                dropped.append(fn)
                continue
            if not present(fn):
                rest = fn[len(prefix):] if fn.startswith(prefix) else None
                others = spellings(rest) if spellings is not None and rest is not None else ()
                alt = next((name for name in others if present(name)), None)
                if alt is None or rest is None:
                    dropped.append(fn)
                    continue
                stmt = re.sub(rf"\b{re.escape(fn)}\b", alt, stmt, count=1)
                aliases[rest] = alt
            if revise is not None:
                revised = revise(declared_function(stmt) or fn, stmt)
                if revised is None:
                    dropped.append(fn)
                    continue
                stmt = revised
        elif fn is None and revise is not None:
            stmt = revise("", stmt) or stmt  # a struct's fields, say
        macro = defined_macro(stmt)
        if macro is not None and re.search(rf"#\s*define\s+{re.escape(macro)}\b", headers_text) is None:
            dropped.append(macro)
            continue
        kept.append(stmt)
    return CdefPlan("\n".join(kept) + "\n", tuple(dropped), aliases)


# --- building and loading ----------------------------------------------------------------------


@dataclass(frozen=True)
class ExternalBuild:
    """A compiled, loadable adapter module for one target build."""

    include_dir: Path
    lib_path: Path
    prefix: str
    module_path: Path
    #: the target's headers the module (and a C reproducer) includes, in order
    headers: tuple[str, ...]
    #: our declarations the target lacks
    dropped: tuple[str, ...]
    #: our name without prefix -> the target's symbol where it has another spelling
    aliases: dict[str, str]

    def c_flags(self) -> list[str]:
        """The compiler flags that build a C file against this target with the vdev shim."""
        return [
            f"-I{self.include_dir}", f"-I{_NATIVE / 'include'}",
            f"-DVD(x)={self.prefix}##x", f"-DVDU(x)={self.prefix.upper()}##x",
            '-DVDEV_IMPL_HEADER="ggml-backend-impl.h"',
        ]

    def link_flags(self) -> list[str]:
        return link_flags(self.lib_path)


def link_flags(lib_path: Path) -> list[str]:
    return [f"-L{lib_path.parent}", f"-l:{lib_path.name}", f"-Wl,-rpath,{lib_path.parent}"]


def headers_of(include_dir: Path) -> tuple[str, ...]:
    return HEADERS + tuple(h for h in OPTIONAL_HEADERS if (include_dir / h).is_file())


def _digest(include_dir: Path, lib_path: Path, prefix: str, spellings: Spellings | None,
            revise: Revise | None = None) -> str:
    import cffi
    from ggspec.native.build import read_cdef

    h = hashlib.sha256()

    def feed(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + len(data).to_bytes(8, "little") + data)

    for name in headers_of(include_dir):
        feed(name, (include_dir / name).read_bytes())
    feed("lib", lib_path.read_bytes())
    feed("paths", f"{include_dir}|{lib_path}".encode())  # the module's rpath and the reproducers' -I
    feed("cdef", read_cdef().encode())
    for src in _SHIM_SOURCES:
        feed(src.name, src.read_bytes())
    from ggspec.native.build import wgpu_include_dir

    feed("wgpu", str(wgpu_include_dir()).encode())  # the WebGPU backend or its stub
    feed("external.py", Path(__file__).read_bytes())
    if spellings is not None:
        feed("spellings", inspect.getsource(spellings).encode())
    if revise is not None:
        module = inspect.getmodule(revise)
        feed("revise", inspect.getsource(module if module is not None else revise).encode())
    config = f"{prefix}|{BUILD_FORMAT}|{sys.version}|{cffi.__version__}|{sys.platform}"
    feed("config", config.encode())
    return h.hexdigest()


def check_prefix(lib_path: Path, prefix: str) -> None:
    """A wrong `--prefix` is one line naming the prefixes the library does export (those P with
    a `P backend_cpu_init` symbol). Skipped for a library whose symbols cannot be read (not ELF)."""
    from .elfsyms import prefixes_of, resolvable_symbols

    try:
        names = resolvable_symbols(lib_path)
    except OSError as exc:
        raise TargetUnavailable(f"cannot read {lib_path}: {exc.strerror or exc}") from None
    if not names or prefix + "backend_cpu_init" in names:
        return
    found = prefixes_of(lib_path)
    has = (f"it exports the prefix{'es' if len(found) > 1 else ''} {', '.join(found)} (try --prefix {found[0]})"
           if found else "it exports no *backend_cpu_init symbol at all (is it a ggml-backend library?)")
    raise TargetUnavailable(f"wrong --prefix {prefix!r}: {lib_path} has no {prefix}backend_cpu_init; {has}")


def _exported_by(lib_path: Path) -> Callable[[str], bool]:
    """Whether the target library (or a library it needs) exports a symbol, read from the ELF
    symbol tables: nothing of the target runs in ggspec's own process, so a library whose
    constructor aborts, crashes or hangs is built here and fails (exit 3, with a report) where it
    is first loaded, in a forked worker."""
    from .elfsyms import is_elf, resolvable_symbols

    if not is_elf(lib_path):
        raise TargetUnavailable(f"{lib_path} is not an ELF shared library (ggspec reads a target's exported "
                                "symbols from its ELF symbol table, without running the library's code)")
    return resolvable_symbols(lib_path).__contains__


@contextlib.contextmanager
def output_to(path: Path) -> Iterator[None]:
    """Send this process's stdout and stderr (file descriptors 1 and 2) to `path` for a while."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "wb") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _errors(log: Path, limit: int = 12) -> str:
    """The compiler's error lines from a build log."""
    lines = log.read_text(errors="replace").splitlines()
    errors = [ln for ln in lines if "error" in ln] or lines[-limit:]
    return "\n".join(errors[:limit])


def _compile(include_dir: Path, lib_path: Path, prefix: str, spellings: Spellings | None, module_name: str,
             outdir: Path, revise: Revise | None = None) -> Path:
    import cffi

    headers = headers_of(include_dir)
    headers_text = "\n".join((include_dir / h).read_text(encoding="utf-8", errors="replace") for h in headers)
    plan = make_cdef(headers_text, _exported_by(lib_path), prefix, spellings, revise)
    ffi = cffi.FFI()
    ffi.cdef(plan.cdef)
    preamble = "".join(f'#include "{h}"\n' for h in (*headers, *_SHIM_HEADERS))
    from ggspec.native.build import wgpu_include_dir

    wgpu = wgpu_include_dir()  # the WebGPU backend too, where the wgpu package's headers are (else its stub)
    ffi.set_source(
        module_name,
        preamble,
        sources=[str(_NATIVE / "src" / "vdev.c"), str(_NATIVE / "src" / "webgpu.c")],
        # not native/src: its assert.h would shadow the system's (vdev.c finds its own headers)
        include_dirs=[str(include_dir), str(_NATIVE / "include"), *([wgpu] if wgpu else [])],
        define_macros=[("VD(x)", f"{prefix}##x"), ("VDU(x)", f"{prefix.upper()}##x"),
                       ("VDEV_IMPL_HEADER", '"ggml-backend-impl.h"'), *getattr(revise, "shim_macros", ()),
                       *([("GGSPEC_HAVE_WGPU", None)] if wgpu else [])],
        libraries=["dl"],
        extra_compile_args=["-std=c11", "-O1", *_DRIFT_IS_AN_ERROR],
        extra_link_args=link_flags(lib_path),
    )
    log = outdir / "build.log"
    with output_to(log):  # compiler chatter (the target's own warnings) goes to the log
        try:
            path = Path(ffi.compile(tmpdir=str(outdir), verbose=True))
        except Exception as exc:
            raise _CompileFailed(f"{exc}\n{_errors(log)}") from exc
    (outdir / "cdef.h").write_text(plan.cdef)
    (outdir / "build.json").write_text(json.dumps({
        "module": path.name, "headers": list(headers), "dropped": list(plan.dropped), "aliases": plan.aliases,
    }, indent=1) + "\n")
    return path


def build_module(include_dir: Path, lib_path: Path, prefix: str, spellings: Spellings | None = None,
                 revise: Revise | None = None) -> ExternalBuild:
    """Compile (or find in the cache) the adapter module for this target build."""
    include_dir, lib_path = include_dir.resolve(), lib_path.resolve()
    missing = [h for h in HEADERS if not (include_dir / h).is_file()]
    if missing:
        raise TargetUnavailable(f"{include_dir} lacks {', '.join(missing)}")
    if not lib_path.is_file():
        raise TargetUnavailable(f"no library at {lib_path}")
    check_prefix(lib_path, prefix)
    digest = _digest(include_dir, lib_path, prefix, spellings, revise)
    module_name = f"_ggspec_ext_{digest[:16]}"
    final = cache_dir() / "build" / digest
    if not (final / "build.json").is_file():
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
        try:
            try:
                with step(f"compiling the cffi adapter module for {lib_path.name} against {include_dir} "
                          f"into {final} (one time)"):
                    _compile(include_dir, lib_path, prefix, spellings, module_name, tmp, revise)
            except _CompileFailed as exc:
                kept = final.parent / f"{digest}.failed.log"
                shutil.copyfile(tmp / "build.log", kept)
                raise TargetUnavailable(
                    f"the adapter module does not compile against {include_dir} (a declaration of ours "
                    f"drifted from the target's?); full log: {kept}\n{exc}") from None
            try:
                os.rename(tmp, final)
            except OSError:  # another process finished first
                pass
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    info = json.loads((final / "build.json").read_text())
    return ExternalBuild(include_dir, lib_path, prefix, final / info["module"], tuple(info["headers"]),
                         tuple(info["dropped"]), dict(info["aliases"]))


_LOADED: dict[Path, tuple[Any, Any]] = {}


def load_module(build: ExternalBuild) -> tuple[Any, Any]:
    """Import the compiled module once per process; give its extern "Python" init a body."""
    if build.module_path not in _LOADED:
        name = build.module_path.name.split(".")[0]
        spec = importlib.util.spec_from_file_location(name, build.module_path)
        if spec is None or spec.loader is None:
            raise TargetUnavailable(f"cannot import {build.module_path}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except ImportError as exc:
            raise TargetUnavailable(f"the adapter module for {build.include_dir} does not load: {exc}") from None
        if hasattr(module.lib, "ggspec_py_init_fn"):
            module.ffi.def_extern(name="ggspec_py_init_fn")(python_init_fn)
        _LOADED[build.module_path] = (module.ffi, module.lib)
    return _LOADED[build.module_path]


class ExternalTarget(CApiTarget):
    """A CApiTarget over an external build; `build` says how to compile C against it."""

    def __init__(self, build: ExternalBuild, name: str, default_profile: Profile) -> None:
        ffi, lib = load_module(build)
        self.build = build
        super().__init__(ffi, lib, build.prefix, name)
        self.default_profile = default_profile

    def fn(self, name: str) -> Any:
        alias = self.build.aliases.get(name)
        return traced_call(alias, getattr(self.lib, alias)) if alias is not None else super().fn(name)


def build_external(include_dir: str | Path, lib_path: str | Path, prefix: str, name: str,
                   default_profile: Profile = Profile.FIXED,
                   spellings: Spellings | None = None) -> Callable[[], ExternalTarget]:
    """Build (or reuse) the adapter module for a target and return a factory of fresh targets.

    `spellings(name)`: other names the target may give our function `<prefix>name`, tried in
    order when it lacks that one (whisper.rn's renaming spelled ggml's `quantize_*` functions
    `wsp_ggml_wsp_quantize_*`, see rc8.spellings).

    The build happens here, once; the import (which runs the target's code: its constructors)
    happens when the first target is made, in the process that makes it (the runner makes them
    only in forked workers). After that the factory only makes new contexts, so it is cheap to
    call per example.
    """
    if not re.fullmatch(r"[A-Za-z_]\w*", prefix):
        raise ValueError(f"a symbol prefix is an identifier such as ggml_ or wsp_ggml_, got {prefix!r}")
    build = build_module(Path(include_dir), Path(lib_path), prefix, spellings)
    install_quiet_gdb()

    def factory() -> ExternalTarget:
        return ExternalTarget(build, name, default_profile)

    return factory
