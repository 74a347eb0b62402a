"""Checked wrapper: the WebGPU device backend (native/src/webgpu.c, include/ggspec-webgpu.h).

`webgpu_init()` starts the process's WebGPU device on first use (dlopen of wgpu-native, an
adapter, a device, the WGSL module validated: 0.06-0.07 CPU-s on lavapipe; each kernel's
pipeline is compiled on its first dispatch) and returns a backend on it; where there is none
it raises `WebGPUUnavailable` with one line saying what is missing. The library is
`$GGSPEC_WGPU_LIB`, else the one the installed `wgpu` package ships. Nothing starts at import,
and a device started before a fork is refused in the child: start it in the process that uses
it.
"""

from __future__ import annotations

import importlib.util
import os

from ggspec.reference.clauses import UsageError

from ._lib import Backend, ffi, lib

__all__ = ["WebGPUUnavailable", "adapter_name", "webgpu_compiled", "webgpu_init", "webgpu_pending", "wgpu_library"]

#: the wgpu-native file inside the `wgpu` package (wgpu-py 0.32 on Linux; .dylib on macOS)
_LIB_NAMES = ("libwgpu_native-release.so", "libwgpu_native-release.dylib")


class WebGPUUnavailable(Exception):
    """No WebGPU device here: the message is the one line saying why."""


def wgpu_library() -> str | None:
    """The wgpu-native library to load: `$GGSPEC_WGPU_LIB`, else the installed `wgpu` package's
    (found without importing it), else None."""
    env = os.environ.get("GGSPEC_WGPU_LIB")
    if env:
        return env
    try:
        spec = importlib.util.find_spec("wgpu")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    resources = os.path.join(os.path.dirname(spec.origin), "resources")
    for name in _LIB_NAMES:
        path = os.path.join(resources, name)
        if os.path.isfile(path):
            return path
    return None


def webgpu_compiled() -> bool:
    """Whether this build has the WebGPU code (False: built without the wgpu headers)."""
    return bool(lib.ggspec_webgpu_compiled())


def webgpu_init() -> Backend:
    """A backend on the process's WebGPU device; `WebGPUUnavailable` where there is none."""
    path = wgpu_library()
    if webgpu_compiled() and path is None:
        raise WebGPUUnavailable("WebGPU unavailable: no wgpu-native library (pip install 'wgpu>=0.32,<0.33', "
                                "or set GGSPEC_WGPU_LIB)")
    reason = ffi.new("char[512]")
    b = Backend.wrap(lib.ggspec_webgpu_init((path or "").encode(), reason, len(reason)))
    if b is None:
        raise WebGPUUnavailable(ffi.string(reason).decode(errors="replace"))
    return b


def adapter_name() -> str:
    """The adapter the device runs on ("" before one started)."""
    return str(ffi.string(lib.ggspec_webgpu_adapter_name()).decode(errors="replace"))


def webgpu_pending(backend: Backend) -> int:
    """get_tensor_async reads queued and not yet delivered (synchronize delivers them)."""
    if not isinstance(backend, Backend):
        raise TypeError(f"backend must be a Backend, got {type(backend).__name__}")
    if not bool(lib.ggspec_backend_is_webgpu(backend.ptr)):
        raise UsageError("BACK-9", "not a WebGPU backend")
    return int(lib.ggspec_webgpu_pending(backend.ptr))
