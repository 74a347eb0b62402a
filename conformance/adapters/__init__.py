"""Adapters: `reference` (the model itself), `native` (our C build through cffi), `rc8` (the
real whisper.rn 0.4.0-rc.8 code, fetched and built at test time), `ggml-python-0.0.26` (upstream
ggml of 2024-01-30 vendored in PyPI's ggml-python 0.0.26, likewise) and `external` (any build,
given headers, library and prefix; named `external:PREFIX:INCLUDE_DIR:LIBRARY`).

`make_target(name, profile)` is the one place that turns a target name into a Target;
`prepare_target(name)` fetches and builds one without loading it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile

from ..target import Target, selected_device
from ..target_names import RC8_NAMES, SANITIZED, parse
from ..target_names import default_profile as default_profile  # re-exported: adapters.default_profile


def _sdist_targets() -> tuple[str, ...]:
    from .ggml_python import SDISTS

    return tuple(SDISTS)


#: ggml-python-0.0.25 ... 0.0.37 and llama-cpp-python-0.2.30 (ggml_python.SDISTS, through versions.py)
SDIST_TARGETS = _sdist_targets()
TARGETS = ("reference", "native", *RC8_NAMES, *SDIST_TARGETS, "external")
#: the real rc.8 builds: release (NDEBUG, as shipped), with its C assert()s compiled in, with ASan and UBSan
RC8_TARGETS = RC8_NAMES

#: factories of the external targets built in this process (forked workers inherit them)
_EXTERNAL: dict[str, Callable[[], Target]] = {}


def external_target_name(include_dir: str, lib_path: str, prefix: str) -> str:
    """The target name that `make_target` and a reproducer use for an external build."""
    import os

    parts = [os.path.abspath(include_dir), os.path.abspath(lib_path)]
    if any(":" in p for p in parts):
        raise ValueError(f"paths of an external target may not contain ':': {parts}")
    return f"external:{prefix}:{parts[0]}:{parts[1]}"


def _external(name: str) -> Callable[[], Target]:
    """Build (once per process) and return the factory of an rc8 or external target."""
    if name not in _EXTERNAL:
        from .external import build_external

        if name in RC8_TARGETS:
            from .rc8 import PREFIX, TARGET_VARIANTS, ensure_rc8, spellings

            if name in SANITIZED:
                from ..engine.sanitizer import require_runtime

                require_runtime(name)
            include_dir, lib = ensure_rc8(variant=TARGET_VARIANTS[name])
            rc8_factory = build_external(include_dir, lib, PREFIX, name, Profile.RC8, spellings)

            def rc8_target() -> Target:
                t = rc8_factory()
                t.private_cpu_layout = True  # rc.8's CPU context and plan structs (CPU-17, CPU-18)
                return t

            _EXTERNAL[name] = rc8_target
        elif name in SDIST_TARGETS:
            from .drift import build_versioned
            from .ggml_python import PREFIX as GP_PREFIX
            from .ggml_python import ensure_sdist_target

            include_dir, lib = ensure_sdist_target(name)
            versioned = build_versioned(include_dir, lib, GP_PREFIX, name, default_profile(name))
            if name == "llama-cpp-python-0.2.30":
                # its ggml-backend.c is rc.8's byte for byte (prefix aside): rc.8's private CPU structs (CPU-17, CPU-18)

                def lcp_target() -> Target:
                    t = versioned()
                    t.private_cpu_layout = True
                    return t

                _EXTERNAL[name] = lcp_target
            else:
                _EXTERNAL[name] = versioned
        else:
            tn = parse(name)
            _EXTERNAL[name] = build_external(tn.include_dir, tn.library, tn.prefix, name, Profile.FIXED)
    return _EXTERNAL[name]


def prepare_target(name: str) -> None:
    """Fetch and build what target `name` needs (rc8, ggml-python, external builds), without
    loading it: this runs none of the target's code, so the runner does it in its own process
    and loads the target only in forked workers. Raises ValueError for an unknown name."""
    kind = parse(name).kind
    from .vulkan_device import is_shipped, note_target

    if is_shipped(selected_device()):
        note_target(name)  # the reference is shaped after this target's device (vulkan_device.py)
    if kind in ("reference", "native"):
        return
    if kind in ("rc8", "external") or name in SDIST_TARGETS:
        _external(name)
        return
    make_target(name)  # an unknown name: its ValueError


def make_target(name: str, profile: Profile | None = None) -> Target:
    """A fresh target. `profile` matters to the reference only (native implements `fixed`);
    every target keeps the run's profile as `run_profile`, for a check that records something
    only under one profile (ALLOC-27: rc.8's offsets, compared only under profile rc8)."""
    target = _new_target(name, profile)
    from .webgpu_device import install, watch_reach

    device = selected_device()
    if device == "webgpu":  # --device webgpu (webgpu_device.py): a device we build
        install(target)
    else:
        from . import vulkan_device

        if vulkan_device.is_shipped(device):  # --device vulkan: a device the target ships (vulkan_device.py)
            vulkan_device.note_target(name)
            vulkan_device.install(target, device)
    watch_reach(target)  # whether the check's verdict depends on the device (engine/reach.py)
    target.run_profile = profile or default_profile(name)  # type: ignore[attr-defined]  # not in the Target protocol
    return target


def _new_target(name: str, profile: Profile | None) -> Target:
    tn = parse(name)
    if tn.kind == "reference":
        from .reference import ReferenceTarget

        return ReferenceTarget(profile or Profile.FIXED)
    if tn.kind == "native":
        from .native import NativeTarget

        return NativeTarget(module=tn.module or None)
    if tn.kind in ("rc8", "external") or name in SDIST_TARGETS:
        return _external(name)()
    raise ValueError(f"unknown target {name!r}; known: {', '.join(TARGETS)} (native:DIR:MODULE for a variant build, "
                     "external:PREFIX:INCLUDE_DIR:LIBRARY for an external one)")


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def describe_target(name: str) -> dict[str, Any]:
    """The target under test: its name, what it is and, for a C build, its library and sha256."""
    out: dict[str, Any] = {"name": name}
    lib: Path | None = None
    tn = parse(name)
    try:
        if tn.kind == "reference":
            out["kind"] = "the Python reference model"
        elif tn.kind == "native":
            out["kind"] = "the bundled native build" if name == "native" else "a variant build of native/"
            lib = _native_library(tn.module)
        elif tn.kind == "rc8":
            from .rc8 import TARGET_VARIANTS, ensure_rc8

            out["kind"] = "whisper.rn 0.4.0-rc.8, built from its npm package" + {
                "rc8-asserts": " without NDEBUG (its assert()s compiled in)",
                "rc8-asan": " with AddressSanitizer and UndefinedBehaviorSanitizer"}.get(name, "")
            include, lib = ensure_rc8(variant=TARGET_VARIANTS[name])
            out["include"] = str(include)
        elif tn.kind == "sdist":
            from .ggml_python import ensure_sdist_target, sdist_of

            out["kind"] = sdist_of(name).what
            include, lib = ensure_sdist_target(name)
            out["include"] = str(include)
        elif tn.kind == "external":
            out.update(kind="an external build", prefix=tn.prefix, include=tn.include_dir)
            lib = Path(tn.library)
        elif name.startswith("external:"):
            raise ValueError(f"{name}: not external:PREFIX:INCLUDE_DIR:LIBRARY")
    except Exception as exc:  # noqa: BLE001 - a description must never fail a report
        out["error"] = f"{type(exc).__name__}: {exc}"
    if lib is not None:
        out["library"] = str(lib)
        out["sha256"] = _sha256(Path(lib))
    return out


def _native_library(module: str) -> Path | None:
    import importlib.util

    if not module:
        spec = importlib.util.find_spec("ggspec.native._native")
        return Path(spec.origin) if spec is not None and spec.origin else None
    directory, _, mod = module.rpartition(":")
    found = sorted(Path(directory or ".").glob(f"{mod}*.so"))
    return found[0] if found else None
