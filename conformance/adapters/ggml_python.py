"""The `ggml-python-0.0.26` target: upstream ggml of 2024-01-30, as vendored in PyPI's
ggml-python 0.0.26, fetched and built at test time, outside the repository.

`ensure_ggml_python()` runs `pip download --no-deps --no-binary :all: ggml-python==0.0.26`
into `<cache>/ggml-python-0.0.26/` (see `external.cache_dir`), checks the sdist's sha256,
unpacks its `vendor/ggml/{src,include}` only, stages the headers the external adapter includes
into one folder (`include/`), and compiles `vendor/ggml/src/{ggml,ggml-alloc,ggml-backend,
ggml-quants}.c` into one shared library with the flags rc8.py uses:

    gcc -O2 -fPIC -shared -std=c11 -D_GNU_SOURCE -DNDEBUG -I<include> <sources> -lm -lpthread

The symbols keep upstream's `ggml_` prefix. Nothing of the sdist is ever written into the
repository.

Offline: `GGSPEC_GGML_PYTHON_SDIST=/path/to/ggml_python-0.0.26.tar.gz` is used instead of pip
(the sha256 is still checked).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from .external import TargetUnavailable, cache_dir
from .rc8 import CFLAGS, LIBS, SOURCES, _locked, _sha256, keep_verified
from .steps import step

NAME = "ggml-python-0.0.26"
REQUIREMENT = "ggml-python==0.0.26"
SDIST = "ggml_python-0.0.26.tar.gz"
SHA256 = "cda568cfde6871a27ffe6e79820edf6ab1378e6e5c40a7b4336619588cea95bd"
PREFIX = "ggml_"
#: the folder the sdist unpacks to, and where ggml's sources and public headers are in it
TOP = "ggml_python-0.0.26"
VENDOR = ("vendor", "ggml")
SRC = "vendor/ggml/src"
PUBLIC_INCLUDE = "vendor/ggml/include/ggml"
#: headers staged into one include dir: where they are in the sdist
STAGED_HEADERS = {
    "ggml.h": PUBLIC_INCLUDE, "ggml-alloc.h": PUBLIC_INCLUDE, "ggml-backend.h": PUBLIC_INCLUDE,
    "ggml-backend-impl.h": SRC, "ggml-impl.h": SRC, "ggml-quants.h": SRC,
}
LIBNAME = "libggml_python_0_0_26.so"


class CannotFetch(TargetUnavailable):
    """pip or the network to PyPI is missing: the one reason tests may skip this target."""


def target_dir() -> Path:
    return cache_dir() / NAME


def _fetch(dest: Path) -> None:
    """Put the verified sdist at `dest`."""
    local = os.environ.get("GGSPEC_GGML_PYTHON_SDIST")
    tmpdir = Path(tempfile.mkdtemp(prefix=".download-", dir=dest.parent))
    try:
        got = tmpdir / SDIST
        if local:
            if not Path(local).is_file():
                raise TargetUnavailable(f"GGSPEC_GGML_PYTHON_SDIST={local} is not a file")
            shutil.copyfile(local, got)
        else:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", REQUIREMENT,
                   "-d", str(tmpdir), "--disable-pip-version-check", "--retries", "1", "--timeout", "15"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmpdir)
            except FileNotFoundError:
                raise CannotFetch(f"target {NAME} needs pip to fetch {REQUIREMENT} (not found); install pip, "
                                  f"or set GGSPEC_GGML_PYTHON_SDIST to a copy of {SDIST}") from None
            except subprocess.TimeoutExpired:
                raise CannotFetch(f"pip download {REQUIREMENT} timed out (no network to PyPI?)") from None
            if proc.returncode != 0 or not got.is_file():
                if "No module named pip" in proc.stderr:
                    raise CannotFetch(f"target {NAME} needs pip to fetch {REQUIREMENT} (not installed); install "
                                      f"pip, or set GGSPEC_GGML_PYTHON_SDIST to a copy of {SDIST}")
                raise CannotFetch(f"pip download {REQUIREMENT} failed (no network to PyPI?): {_pip_error(proc.stderr)}")
        keep_verified(got, dest, SHA256)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _pip_error(stderr: str) -> str:
    """The gist of pip's error output, on one line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1]


def _unpack(sdist: Path, dest: Path) -> Path:
    """Unpack the sdist's `vendor/ggml/` to `dest/ggml` (links, absolute paths, `..` and other
    members are refused); return that folder."""
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest))
    try:
        with tarfile.open(sdist) as tar:
            members = []
            for m in tar.getmembers():
                p = PurePosixPath(m.name)
                parts = p.parts
                if (p.is_absolute() or ".." in parts or len(parts) < 3 or parts[0] != TOP
                        or parts[1:3] != VENDOR or not (m.isfile() or m.isdir())):
                    continue
                members.append(m)
            tar.extractall(tmp, members=members)  # noqa: S202 - members filtered above
        shutil.rmtree(dest / "ggml", ignore_errors=True)
        os.replace(tmp / TOP / VENDOR[0] / VENDOR[1], dest / "ggml")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest / "ggml"


def _stage(ggml: Path, include: Path) -> None:
    """Copy the headers into one include dir (ggml's public ones live apart from its internal ones)."""
    tmp = include.with_name(f".{include.name}.{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for header, where in STAGED_HEADERS.items():
        src = ggml / PurePosixPath(where).relative_to(*VENDOR) / header
        if not src.is_file():
            raise TargetUnavailable(f"{SDIST} lacks {where}/{header}")
        shutil.copyfile(src, tmp / header)
    shutil.rmtree(include, ignore_errors=True)
    os.replace(tmp, include)


def _build(src: Path, include: Path, lib: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise TargetUnavailable(f"target {NAME} needs gcc to build the vendored ggml (not installed)")
    tmp = lib.with_name(f".{lib.name}.{os.getpid()}")
    cmd = [gcc, *CFLAGS, f"-I{include}", *(str(src / s) for s in SOURCES), "-o", str(tmp), *LIBS]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln][:8]
        raise TargetUnavailable(f"building {NAME} failed: " + " ".join(cmd) + "\n" + "\n".join(errors))
    os.replace(tmp, lib)


def ensure_ggml_python() -> tuple[Path, Path]:
    """Fetch, verify, unpack and build as needed; return (include dir, shared library)."""
    root = target_dir()
    with _locked(root):
        sdist = root / SDIST
        if not sdist.is_file() or _sha256(sdist) != SHA256:
            with step(f"fetching {REQUIREMENT} (pip download of the sdist, one time)"):
                _fetch(sdist)
        ggml = root / "ggml"
        include = root / "include"
        stamp = root / ".unpacked"
        if not stamp.is_file() or stamp.read_text().strip() != SHA256 or not include.is_dir():
            stamp.unlink(missing_ok=True)
            with step(f"unpacking {SDIST} into {root}"):
                _unpack(sdist, root)
                _stage(ggml, include)
            stamp.write_text(SHA256 + "\n")
        lib = root / "lib" / LIBNAME
        lib_stamp = root / "lib" / ".build"
        recipe = f"{SHA256} {' '.join(CFLAGS)} {' '.join(SOURCES)} {' '.join(LIBS)}"
        if not lib.is_file() or not lib_stamp.is_file() or lib_stamp.read_text().strip() != recipe:
            lib.parent.mkdir(parents=True, exist_ok=True)
            with step(f"building {NAME}'s ggml sources with gcc into {lib} (one time, tens of seconds)"):
                _build(ggml / "src", include, lib)
            lib_stamp.write_text(recipe + "\n")
    return include, lib


def build_command() -> str:
    """The compile line `ensure_ggml_python` uses, for documentation and reports."""
    return ("gcc " + " ".join(CFLAGS) + " -Iinclude " + " ".join(f"{SRC}/{s}" for s in SOURCES) + " "
            + " ".join(LIBS))
