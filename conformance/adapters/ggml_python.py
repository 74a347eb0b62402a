"""The `ggml-python-X` targets (upstream ggml as vendored in PyPI's ggml-python X, for every X
from 0.0.25 to 0.0.37: the last versions before the backend "device" API),
`llama-cpp-python-0.2.30` (llama.cpp of 2024-01-18, the days of whisper.rn 0.4.0-rc.8) and
`llama-cpp-python-0.2.38`, `-0.2.56`, `-0.2.78` (February, March and June 2024: llama.cpp with
its Vulkan backend, whose SPIR-V ships pre-generated), fetched and built at test time, outside
the repository.

`ensure_sdist_target(name)` runs `pip download --no-deps --no-binary :all: <requirement>` into
`<cache>/<name>/` (see `external.cache_dir`), checks the sdist's sha256 against `SDISTS` (pinned
here), unpacks only the C sources and headers of its vendored ggml, stages the headers the
external adapter includes into one folder (`include/`), and compiles the four C sources of this
API generation, `{ggml,ggml-alloc,ggml-backend,ggml-quants}.c`, into one shared library with the
flags rc8.py uses:

    gcc -O2 -fPIC -shared -std=c11 -D_GNU_SOURCE -DNDEBUG -I<include> <sources> -lm -lpthread

How long the build took is kept in `<cache>/<name>/lib/build.json` (`build_seconds`). The
symbols keep upstream's `ggml_` prefix. Nothing of an sdist is ever written into the repository.

An sdist with `vulkan = True` also unpacks ggml-vulkan.cpp, ggml-vulkan-shaders.hpp and
tests/test-backend-ops.cpp; where g++ and Vulkan's headers are present (`vulkan_buildable`:
Debian's libvulkan-dev) ggml-vulkan.cpp is compiled with g++ (`VULKAN_CXXFLAGS`, ~10 s) and
linked into the same library with `-lvulkan -lstdc++`. The C sources are compiled exactly as
without it (no GGML_USE_VULKAN), so the CPU target is the same code either way; `--device
vulkan` (vulkan_device.py) makes the device with the library's `ggml_backend_vk_init`. Without
Vulkan's headers the library is built without it and `--device vulkan` is `unsupported`; the
build's recipe records which, so installing libvulkan-dev later rebuilds it.

Offline: `GGSPEC_SDIST_DIR=/folder/with/the/sdists` (or, for 0.0.26 and as before,
`GGSPEC_GGML_PYTHON_SDIST=/path/to/ggml_python-0.0.26.tar.gz`) is used instead of pip (the
sha256 is still checked). Without pip, network or such a copy, the target is unavailable with one
line (`CannotFetch`).

ggml-python 0.0.38 and later (and whisper.rn 0.4.0-rc.9 and later) vendor the device API
(`ggml_backend_dev_t`, ggml-backend.cpp): another API generation, out of scope.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import CannotFetch, TargetUnavailable
from .external import cache_dir
from .rc8 import CFLAGS, LIBS, SOURCES, _locked, _sha256, keep_verified
from .steps import fetch_failed, step, tool_said

PREFIX = "ggml_"


@dataclass(frozen=True)
class Sdist:
    """One pinned sdist and where its vendored ggml lives in it."""

    name: str  # the target name
    requirement: str  # what pip downloads
    filename: str
    sha256: str
    #: the folder the sdist unpacks to, the vendored ggml in it, and its sources and public headers
    top: str
    vendor: tuple[str, ...]
    src: str  # relative to the vendored ggml
    public_include: str  # relative to the vendored ggml
    what: str  # for reports
    #: the vendored tree ships upstream's Vulkan backend (ggml-vulkan.cpp with its SPIR-V
    #: pre-generated in ggml-vulkan-shaders.hpp): built in where Vulkan is present (vulkan_device.py)
    vulkan: bool = False

    @property
    def libname(self) -> str:
        return "lib" + self.name.replace("-", "_").replace(".", "_") + ".so"

    def staged_headers(self) -> dict[str, str]:
        """Headers staged into one include dir: where they are in the vendored ggml."""
        pub, src = self.public_include, self.src
        return {"ggml.h": pub, "ggml-alloc.h": pub, "ggml-backend.h": pub,
                "ggml-backend-impl.h": src, "ggml-impl.h": src, "ggml-quants.h": src}


def _ggml_python(version: str, sha256: str) -> Sdist:
    return Sdist(f"ggml-python-{version}", f"ggml-python=={version}", f"ggml_python-{version}.tar.gz", sha256,
                 f"ggml_python-{version}", ("vendor", "ggml"), "src", "include/ggml",
                 f"upstream ggml vendored in ggml-python {version}")


#: ggml-python version -> sha256 of its sdist on PyPI (0.0.25 vendors ggml of 2024-01-16, 0.0.26 of 2024-01-30)
GGML_PYTHON_SHA256 = {
    "0.0.25": "c09a26e950d2c5353b100e5cd34517585a99a09abe2517553d7cf11a7d315292",
    "0.0.26": "cda568cfde6871a27ffe6e79820edf6ab1378e6e5c40a7b4336619588cea95bd",
    "0.0.27": "6a4b397491b2979a634fd5af4f3a57d1554e2c6d8df3b619ea36c61120c6e9ef",
    "0.0.28": "5ffe11c7f75ab9adae9c49e56976a53afa2fd94908ed4ecc97239501dbf1e3c2",
    "0.0.29": "bf28b709808f3bd76dc351d987c5cfc23521e3c9101fbc60257113a67878906f",
    "0.0.30": "885c669c67cff9375b921cea4682df5a25d16289ef5bc989fab290ecd1dd0901",
    "0.0.31": "f017b43e9c234325994a8f0e391a19f369f883a207b9905c737634fea90b3a17",
    "0.0.32": "f905bdee42e69d7e11e27c64e4644be53ec9626cf3bc478ef81b789994ff0e7c",
    "0.0.33": "6a80c0e8c7398566012756fd71044cd6f5eecb2082b01e2d8d4268bac205fcd6",
    "0.0.34": "64ce20ad951bab2df0d0c2f0950abae3ab2e86aa2dede7196bbaf898fc2cb197",
    "0.0.35": "0dbf274297b19995d18725e959d8e2b6d5258e181ef963d4813fc12bfce397cc",
    "0.0.36": "1d54b9df0e90ab837abe0fb3e1a14e4696debb30416444f6f82494f48b90ad1c",
    "0.0.37": "5b2c792619b5c84d0f09ab64137955a5d267ffc17144916fec1d38408a967df0",
}

def _llama_cpp_python(version: str, sha256: str, date: str, vulkan: bool) -> Sdist:
    return Sdist(f"llama-cpp-python-{version}", f"llama-cpp-python=={version}", f"llama_cpp_python-{version}.tar.gz",
                 sha256, f"llama_cpp_python-{version}", ("vendor", "llama.cpp"), ".", ".",
                 f"llama.cpp of {date}, vendored in llama-cpp-python {version}"
                 + (" (with its Vulkan backend)" if vulkan else ""), vulkan)


LLAMA_CPP_PYTHON = _llama_cpp_python("0.2.30", "0bf28528945bede4a1f7f913bdd8a0dd83204fc4d61ef52dfc5355abb7169857",
                                     "2024-01-18", False)
#: llama-cpp-python versions whose llama.cpp ships the Vulkan backend with pre-generated SPIR-V,
#: spread over this API generation: 0.2.78 is the last whose backend interface the drift adapter
#: reaches (0.2.79's buffer types lost `supports_backend` for the backends' `supports_buft`, and
#: soon after llama.cpp moved ggml into ggml/ and generated the SPIR-V at build time): version ->
#: (sha256 of the sdist, llama.cpp's month and commit, from the sdist's CHANGELOG.md)
LLAMA_CPP_PYTHON_VULKAN = {
    "0.2.38": ("5acf5dd43e7e36e012924c92cb27612cd116571fe5849528758a2d6b301b7139", "February 2024 (1cfb537)"),
    "0.2.56": ("9c82db80e929ae93c2ab069a76a8a52aac82479cf9d0523c3550af48554cc785", "March 2024 (c2101a2)"),
    "0.2.78": ("3df7cfde84287faaf29675fba8939060c3ab3f0ce8db875dabf7df5d83bd8751", "June 2024 (fd5ea0f)"),
}

#: every sdist target, by name, oldest first
SDISTS: dict[str, Sdist] = {s.name: s for s in [_ggml_python(v, h) for v, h in GGML_PYTHON_SHA256.items()]}
SDISTS[LLAMA_CPP_PYTHON.name] = LLAMA_CPP_PYTHON
for _v, (_sha, _date) in LLAMA_CPP_PYTHON_VULKAN.items():
    SDISTS[f"llama-cpp-python-{_v}"] = _llama_cpp_python(_v, _sha, _date, True)

#: the target this module started with (tests and the user guide use it)
NAME = "ggml-python-0.0.26"


def sdist_of(name: str) -> Sdist:
    try:
        return SDISTS[name]
    except KeyError:
        raise ValueError(f"unknown sdist target {name!r}; known: {', '.join(SDISTS)}") from None


def target_dir(name: str = NAME) -> Path:
    return cache_dir() / name


def _local_copy(sd: Sdist) -> str | None:
    folder = os.environ.get("GGSPEC_SDIST_DIR")
    if folder:
        return str(Path(folder) / sd.filename)
    if sd.name == NAME:
        return os.environ.get("GGSPEC_GGML_PYTHON_SDIST")
    return None


def _fetch(sd: Sdist, dest: Path) -> None:
    """Put the verified sdist at `dest`."""
    local = _local_copy(sd)
    tmpdir = Path(tempfile.mkdtemp(prefix=".download-", dir=dest.parent))
    try:
        got = tmpdir / sd.filename
        if local:
            if not Path(local).is_file():
                raise CannotFetch(f"target {sd.name}: {local} is not a file (GGSPEC_SDIST_DIR / GGSPEC_GGML_PYTHON_SDIST)")
            shutil.copyfile(local, got)
        else:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", sd.requirement,
                   "-d", str(tmpdir), "--disable-pip-version-check", "--retries", "1", "--timeout", "15"]
            hint = f"or set GGSPEC_SDIST_DIR to a folder holding {sd.filename}"
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmpdir)
            except FileNotFoundError:
                raise CannotFetch(f"target {sd.name} needs pip to fetch {sd.requirement} (not found); install pip, "
                                  f"{hint}") from None
            except subprocess.TimeoutExpired:
                raise CannotFetch(f"pip download {sd.requirement} did not finish in 300 s (is PyPI reachable?); "
                                  f"{hint}") from None
            if proc.returncode != 0 or not got.is_file():
                if "No module named pip" in proc.stderr:
                    raise CannotFetch(f"target {sd.name} needs pip to fetch {sd.requirement} (not installed); "
                                      f"install pip, {hint}")
                if proc.returncode == 0:
                    made = ", ".join(sorted(p.name for p in tmpdir.iterdir())) or "nothing"
                    raise CannotFetch(f"pip download {sd.requirement} exited 0 but wrote no {sd.filename} (it wrote "
                                      f"{made}): {tool_said(proc.stderr, proc.stdout)}; {hint}")
                raise CannotFetch(fetch_failed(f"pip download {sd.requirement}", proc.returncode, proc.stderr,
                                               proc.stdout, "PyPI") + f"; {hint}")
        keep_verified(got, dest, sd.sha256)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


#: what a Vulkan-capable sdist adds to its unpacked sources: the backend, its SPIR-V and, for
#: the side-by-side table, upstream's own op test (relative to the vendored ggml)
VULKAN_FILES = ("ggml-vulkan.cpp", "ggml-vulkan-shaders.hpp", "tests/test-backend-ops.cpp")


def _wanted(sd: Sdist, rel: PurePosixPath) -> bool:
    """The C sources and headers directly in the vendored ggml's src and public include folders
    (and, of a Vulkan-capable sdist, VULKAN_FILES)."""
    folders = {PurePosixPath(sd.src), PurePosixPath(sd.public_include)}
    if sd.vulkan and str(rel) in VULKAN_FILES:
        return True
    return rel.suffix in (".c", ".h") and rel.parent in folders


def _unpack(sd: Sdist, sdist: Path, dest: Path) -> Path:
    """Unpack the vendored ggml's sources and headers to `dest/ggml` (links, absolute paths, `..`
    and other members are refused); return that folder."""
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest))
    n = 1 + len(sd.vendor)
    try:
        with tarfile.open(sdist) as tar:
            members = []
            for m in tar.getmembers():
                p = PurePosixPath(m.name)
                parts = p.parts
                if (p.is_absolute() or ".." in parts or len(parts) <= n or parts[0] != sd.top
                        or parts[1:n] != sd.vendor or not m.isfile() or not _wanted(sd, PurePosixPath(*parts[n:]))):
                    continue
                members.append(m)
            tar.extractall(tmp, members=members)  # noqa: S202 - members filtered above
        shutil.rmtree(dest / "ggml", ignore_errors=True)
        os.replace(tmp.joinpath(sd.top, *sd.vendor), dest / "ggml")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest / "ggml"


def _stage(sd: Sdist, ggml: Path, include: Path) -> None:
    """Copy the headers into one include dir (ggml's public ones may live apart from its internal ones)."""
    tmp = include.with_name(f".{include.name}.{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for header, where in sd.staged_headers().items():
        src = ggml / where / header
        if not src.is_file():
            raise TargetUnavailable(f"{sd.filename} lacks {'/'.join(sd.vendor)}/{where}/{header}")
    for where in dict.fromkeys((sd.src, sd.public_include)):  # and the headers those include (ggml-common.h, 0.0.31 on)
        for src in sorted((ggml / where).glob("*.h")):
            shutil.copyfile(src, tmp / src.name)
    shutil.rmtree(include, ignore_errors=True)
    os.replace(tmp, include)


#: how ggml-vulkan.cpp is compiled (upstream's CMake: C++11, NDEBUG in a release build) and
#: what the library then links
VULKAN_CXXFLAGS = ("-O2", "-fPIC", "-std=c++11", "-DNDEBUG", "-w")
VULKAN_LIBS = ("-lvulkan", "-lstdc++")


def vulkan_buildable() -> str | None:
    """None where the Vulkan backend of an sdist can be built here (g++, Vulkan's C++ headers
    and loader: Debian's g++ and libvulkan-dev); else what is missing, in words."""
    if shutil.which("g++") is None:
        return "no g++"
    includes = [Path("/usr/include"), Path("/usr/local/include")]
    includes += [Path(p) for p in os.environ.get("CPLUS_INCLUDE_PATH", "").split(os.pathsep) if p]
    if not any((d / "vulkan" / "vulkan.hpp").is_file() for d in includes):
        return "no Vulkan headers (vulkan/vulkan.hpp: install libvulkan-dev)"
    return None


def _build_vulkan(sd: Sdist, src: Path, include: Path, out: Path) -> Path:
    """Compile the sdist's ggml-vulkan.cpp (with its pre-generated shaders) to an object file,
    compiled as upstream's build does but for one thing: only this file is compiled with the
    Vulkan backend; ggml.c and ggml-backend.c are built as for the CPU target (no
    GGML_USE_VULKAN: no CPU-assist hooks in ggml.c, no registry entry), so its CPU side is the
    CPU target's, byte for byte, and the device is made by `ggml_backend_vk_init` (vulkan_device.py)."""
    gxx = shutil.which("g++")
    if gxx is None:
        raise TargetUnavailable(f"target {sd.name}'s Vulkan backend needs g++ (not installed)")
    obj = out / "ggml-vulkan.o"
    tmp = out / f".ggml-vulkan.o.{os.getpid()}"
    cmd = [gxx, *VULKAN_CXXFLAGS, f"-I{include}", f"-I{src}", "-c", str(src / "ggml-vulkan.cpp"), "-o", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln][:8]
        raise TargetUnavailable(f"building {sd.name}'s Vulkan backend failed: " + " ".join(cmd) + "\n" + "\n".join(errors))
    os.replace(tmp, obj)
    return obj


def _build(sd: Sdist, src: Path, include: Path, lib: Path, extra: list[str] | None = None) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise TargetUnavailable(f"target {sd.name} needs gcc to build the vendored ggml (not installed)")
    tmp = lib.with_name(f".{lib.name}.{os.getpid()}")
    cmd = [gcc, *CFLAGS, f"-I{include}", *(str(src / s) for s in SOURCES), "-o", str(tmp), *LIBS, *(extra or [])]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln][:8]
        raise TargetUnavailable(f"building {sd.name} failed: " + " ".join(cmd) + "\n" + "\n".join(errors))
    os.replace(tmp, lib)


def ensure_sdist_target(name: str) -> tuple[Path, Path]:
    """Fetch, verify, unpack and build target `name` as needed; return (include dir, shared library)."""
    sd = sdist_of(name)
    root = target_dir(name)
    with _locked(root):
        sdist = root / sd.filename
        if not sdist.is_file() or _sha256(sdist) != sd.sha256:
            with step(f"fetching {sd.requirement} (pip download of the sdist, one time)"):
                _fetch(sd, sdist)
        ggml = root / "ggml"
        include = root / "include"
        stamp = root / ".unpacked"
        staged = f"{sd.sha256} all-headers" + (" vulkan" if sd.vulkan else "")
        if not stamp.is_file() or stamp.read_text().strip() != staged or not include.is_dir():
            stamp.unlink(missing_ok=True)
            with step(f"unpacking {sd.filename} into {root}"):
                _unpack(sd, sdist, root)
                _stage(sd, ggml, include)
            stamp.write_text(staged + "\n")
        lib = root / "lib" / sd.libname
        lib_stamp = root / "lib" / ".build"
        vulkan = sd.vulkan and vulkan_buildable() is None
        recipe = f"{sd.sha256} {' '.join(CFLAGS)} {' '.join(SOURCES)} {' '.join(LIBS)}"
        if vulkan:
            recipe += f" + {' '.join(VULKAN_CXXFLAGS)} ggml-vulkan.cpp {' '.join(VULKAN_LIBS)}"
        if not lib.is_file() or not lib_stamp.is_file() or lib_stamp.read_text().strip() != recipe:
            lib.parent.mkdir(parents=True, exist_ok=True)
            start = time.monotonic()
            extra: list[str] = []
            if vulkan:
                with step(f"compiling {sd.name}'s Vulkan backend (ggml-vulkan.cpp) with g++ (one time, ~10 s)"):
                    extra = [str(_build_vulkan(sd, ggml / sd.src, include, lib.parent)), *VULKAN_LIBS]
            with step(f"building {sd.name}'s ggml sources with gcc into {lib} (one time, tens of seconds)"):
                _build(sd, ggml / sd.src, include, lib, extra)
            (root / "lib" / "build.json").write_text(json.dumps(
                {"target": sd.name, "build_seconds": round(time.monotonic() - start, 1),
                 "command": build_command(name)}, indent=1) + "\n")
            lib_stamp.write_text(recipe + "\n")
    return include, lib


def build_seconds(name: str) -> float | None:
    """How long the last build of target `name` took (None if never built here)."""
    try:
        return float(json.loads((target_dir(name) / "lib" / "build.json").read_text())["build_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ensure_ggml_python(name: str = NAME) -> tuple[Path, Path]:
    """`ensure_sdist_target` under its first name."""
    return ensure_sdist_target(name)


def build_command(name: str = NAME) -> str:
    """The compile line `ensure_sdist_target` uses, for documentation and reports."""
    sd = sdist_of(name)
    src = "/".join((*sd.vendor, sd.src)) if sd.src != "." else "/".join(sd.vendor)
    line = "gcc " + " ".join(CFLAGS) + " -Iinclude " + " ".join(f"{src}/{s}" for s in SOURCES) + " " + " ".join(LIBS)
    if sd.vulkan:
        line = (f"g++ {' '.join(VULKAN_CXXFLAGS)} -Iinclude -c {src}/ggml-vulkan.cpp -o ggml-vulkan.o (where Vulkan "
                f"is present); {line} [ggml-vulkan.o {' '.join(VULKAN_LIBS)}]")
    return line
