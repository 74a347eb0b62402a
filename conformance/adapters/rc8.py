"""The `rc8` target: the real ggml-backend of whisper.rn 0.4.0-rc.8, fetched and built at test
time, outside the repository.

`ensure_rc8()` runs `npm pack whisper.rn@0.4.0-rc.8` into `<cache>/rc8/` (see
`external.cache_dir`), checks the tarball's sha256, unpacks it, and compiles
`package/cpp/{ggml,ggml-alloc,ggml-backend,ggml-quants}.c` into one shared library like a
release build:

    gcc -O2 -fPIC -shared -std=c11 -D_GNU_SOURCE -DNDEBUG <sources> -lm -lpthread

`-DNDEBUG` as in a release build (so tensor_copy's debug-only "slow copy" warning, COPY-7, is
not printed); `-D_GNU_SOURCE` because ggml.c uses POSIX and GNU declarations (CLOCK_MONOTONIC,
M_PI, strdup) that strict C11 hides, as upstream's Makefile defines it too. Nothing of the
package is ever written into the repository.

The target `rc8-asserts` is the same sources built without `-DNDEBUG` (`CFLAGS_ASSERTS`, into
`LIBNAME_ASSERTS`): rc.8's C `assert()`s are compiled in, as in a debug build (and tensor_copy's
slow-copy warning and the scheduler's sanity printing, both `#ifndef NDEBUG`, are on). It
claims profile rc8 too; what a release build does instead is what `rc8` shows.

The target `rc8-asan` is the release build instrumented with AddressSanitizer and
UndefinedBehaviorSanitizer (`CFLAGS_ASAN`, `LIBS_ASAN`, into `LIBNAME_ASAN`, cached beside the
others with a stamp of its own): a heap overflow or a UB inside rc.8, which changes nothing the
suite observes on `rc8`, ends the worker with a sanitizer report, and the check's verdict names
the report and its first frame in rc.8 (engine/sanitizer.py). Its library needs the ASan runtime
loaded first: the `ggspec` command runs itself again with libasan in LD_PRELOAD for it.

Offline: `GGSPEC_RC8_TARBALL=/path/to/whisper.rn-0.4.0-rc.8.tgz` is used instead of npm (the
sha256 is still checked).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import CannotFetch, TargetUnavailable
from .external import cache_dir
from .steps import fetch_failed, step, tool_said

PACKAGE = "whisper.rn@0.4.0-rc.8"
TARBALL = "whisper.rn-0.4.0-rc.8.tgz"
SHA256 = "2613393ba839727dff43aa69593287a98055e01cb7f37921be1a33fcb5a830d6"
PREFIX = "wsp_ggml_"


def spellings(name: str) -> list[str]:
    """The names whisper.rn's renaming gave some upstream functions: besides `ggml_` →
    `wsp_ggml_`, every `quantize_` became `wsp_quantize_`, and names without a prefix got `wsp_`
    (`ggml_quantize_q4_0` → `wsp_ggml_wsp_quantize_q4_0`, `dequantize_row_q4_0` →
    `wsp_dewsp_quantize_row_q4_0`). `name` is ours without prefix; upstream may or may not
    have had `ggml_` on it."""
    inner = name.replace("quantize_", "wsp_quantize_")
    bare = inner if inner.startswith("wsp_") else "wsp_" + inner
    return [PREFIX + inner, bare]
SOURCES = ("ggml.c", "ggml-alloc.c", "ggml-backend.c", "ggml-quants.c")
CFLAGS = ("-O2", "-fPIC", "-shared", "-std=c11", "-D_GNU_SOURCE", "-DNDEBUG")
LIBS = ("-lm", "-lpthread")
LIBNAME = "libwsp_ggml_rc8.so"
#: the `rc8-asserts` variant: rc.8's `assert()`s compiled in
CFLAGS_ASSERTS = tuple(f for f in CFLAGS if f != "-DNDEBUG")
LIBNAME_ASSERTS = "libwsp_ggml_rc8_asserts.so"
#: the `rc8-asan` variant: the release build (NDEBUG, so the same verdicts as `rc8`) with ASan and
#: UBSan; -O1 and frame pointers for whole stacks, no recovery so that a UBSan report ends the
#: worker as an ASan one does. Without UBSan's alignment check: the checks draw buffer types of
#: alignment 1 (a virtual device's, BUFT-2 allows any), whose F32 and I32 data the CPU kernels
#: then load unaligned (CORE-75, CORE-76 at 2 examples), which x86 and ARMv8 do and rc.8 does
#: not promise to avoid; the overflows and other UB stay checked
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize=alignment", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer")
CFLAGS_ASAN = ("-O1", "-g", *SANITIZE, *(f for f in CFLAGS if f != "-O2"))
#: no -fsanitize=... after the sources: gcc reads one command's flags in order, and a trailing
#: -fsanitize=undefined would turn the alignment check back on (CFLAGS_ASAN's flags link the runtimes)
LIBS_ASAN = LIBS
LIBNAME_ASAN = "libwsp_ggml_rc8_asan.so"
#: the builds ensure_rc8 makes: variant -> (cflags, libs, library name, stamp)
VARIANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str, str]] = {
    "release": (CFLAGS, LIBS, LIBNAME, ".build"),
    "asserts": (CFLAGS_ASSERTS, LIBS, LIBNAME_ASSERTS, ".build-asserts"),
    "asan": (CFLAGS_ASAN, LIBS_ASAN, LIBNAME_ASAN, ".build-asan"),
}
#: target name -> variant
TARGET_VARIANTS = {"rc8": "release", "rc8-asserts": "asserts", "rc8-asan": "asan"}


def rc8_dir() -> Path:
    return cache_dir() / "rc8"


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def keep_verified(got: Path, dest: Path, expected: str) -> None:
    """Move a downloaded file into the cache at `dest`, but only if its sha256 is `expected`."""
    digest = _sha256(got)
    if digest != expected:
        raise TargetUnavailable(f"{got.name} has sha256 {digest}, expected {expected}: refusing to build it")
    os.replace(got, dest)


def _fetch(dest: Path) -> None:
    """Put the verified tarball at `dest`."""
    local = os.environ.get("GGSPEC_RC8_TARBALL")
    tmpdir = Path(tempfile.mkdtemp(prefix=".pack-", dir=dest.parent))
    try:
        if local:
            if not Path(local).is_file():
                raise TargetUnavailable(f"GGSPEC_RC8_TARBALL={local} is not a file")
            got = tmpdir / TARBALL
            shutil.copyfile(local, got)
        else:
            npm = shutil.which("npm")
            if npm is None:
                raise CannotFetch(
                    f"target rc8 needs npm to fetch {PACKAGE} (not installed); install npm, or set "
                    f"GGSPEC_RC8_TARBALL to a copy of {TARBALL}")
            try:
                proc = subprocess.run([npm, "pack", PACKAGE, "--pack-destination", str(tmpdir), "--fetch-retries=1",
                                       "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=5000"],
                                      capture_output=True, text=True, timeout=300, cwd=tmpdir)
            except subprocess.TimeoutExpired:
                raise CannotFetch(f"npm pack {PACKAGE} did not finish in 300 s (is the npm registry reachable?); "
                                  f"or set GGSPEC_RC8_TARBALL to a copy of {TARBALL}") from None
            got = tmpdir / TARBALL
            if proc.returncode != 0:
                raise CannotFetch(fetch_failed(f"npm pack {PACKAGE}", proc.returncode, proc.stderr, proc.stdout,
                                               "the npm registry"))
            if not got.is_file():
                made = ", ".join(sorted(p.name for p in tmpdir.iterdir())) or "nothing"
                raise CannotFetch(f"npm pack {PACKAGE} exited 0 but wrote no {TARBALL} into {tmpdir} (it wrote "
                                  f"{made}); it said: {tool_said(proc.stderr, proc.stdout)}")
        keep_verified(got, dest, SHA256)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _unpack(tgz: Path, dest: Path) -> None:
    """Unpack `package/` of the tarball to `dest/package` (members outside it are refused)."""
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest))
    try:
        with tarfile.open(tgz) as tar:
            members = []
            for m in tar.getmembers():
                parts = Path(m.name).parts
                if not parts or parts[0] != "package" or ".." in parts or m.issym() or m.islnk():
                    continue
                members.append(m)
            tar.extractall(tmp, members=members)  # noqa: S202 - members filtered above
        shutil.rmtree(dest / "package", ignore_errors=True)
        os.replace(tmp / "package", dest / "package")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_library(cpp: Path, lib: Path, cflags: tuple[str, ...] = CFLAGS, libs: tuple[str, ...] = LIBS) -> None:
    """Compile rc.8's SOURCES in `cpp` into the shared library `lib` (also used on a patched
    copy of the sources, by the tests of rc8-asan)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise TargetUnavailable("target rc8 needs gcc to build the rc.8 sources (not installed)")
    tmp = lib.with_name(f".{lib.name}.{os.getpid()}")
    cmd = [gcc, *cflags, *(str(cpp / s) for s in SOURCES), "-o", str(tmp), *libs]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln][:8]
        raise TargetUnavailable("building rc.8 failed: " + " ".join(cmd) + "\n" + "\n".join(errors))
    os.replace(tmp, lib)


def ensure_rc8(asserts: bool = False, variant: str | None = None) -> tuple[Path, Path]:
    """Fetch, verify, unpack and build rc.8 as needed; return (include dir, shared library).
    `asserts`: the library built without NDEBUG (the `rc8-asserts` target); `variant`: one of
    VARIANTS by name instead ("asan": the `rc8-asan` target)."""
    variant = variant or ("asserts" if asserts else "release")
    if variant not in VARIANTS:
        raise ValueError(f"no rc.8 build {variant!r}; known: {', '.join(VARIANTS)}")
    root = rc8_dir()
    with _locked(root):
        tgz = root / TARBALL
        if not tgz.is_file() or _sha256(tgz) != SHA256:
            how = f"copying {os.environ['GGSPEC_RC8_TARBALL']}" if os.environ.get("GGSPEC_RC8_TARBALL") else "npm pack"
            with step(f"fetching {PACKAGE} ({how}, one time)"):
                _fetch(tgz)
        cpp = root / "package" / "cpp"
        stamp = root / "package" / ".sha256"
        if not stamp.is_file() or stamp.read_text().strip() != SHA256:
            with step(f"unpacking {TARBALL} into {root}"):
                _unpack(tgz, root)
            stamp.write_text(SHA256 + "\n")
        cflags, libs, libname, stamp_name = VARIANTS[variant]
        lib = root / "lib" / libname
        lib_stamp = root / "lib" / stamp_name
        recipe = f"{SHA256} {' '.join(cflags)} {' '.join(SOURCES)} {' '.join(libs)}"
        if not lib.is_file() or not lib_stamp.is_file() or lib_stamp.read_text().strip() != recipe:
            lib.parent.mkdir(parents=True, exist_ok=True)
            with step(f"building rc.8's ggml sources with gcc into {lib} (one time, tens of seconds)"):
                build_library(cpp, lib, cflags, libs)
            lib_stamp.write_text(recipe + "\n")
    return cpp, lib


def build_command(variant: str = "release") -> str:
    """The compile line `ensure_rc8` uses, for documentation and reports."""
    cflags, libs, _, _ = VARIANTS[variant]
    return "gcc " + " ".join(cflags) + " " + " ".join(f"package/cpp/{s}" for s in SOURCES) + " " + " ".join(libs)
