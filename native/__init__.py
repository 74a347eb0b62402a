"""ggspec's native C implementation of the ggml-backend API, built by cffi (ggspec.native._native)."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

__all__ = ["load_lib"]


def load_lib(module: str | None = None) -> tuple[Any, Any]:
    """Return ``(ffi, lib)`` of the native module to test.

    By default that is ``ggspec.native._native``. `module`, else the environment variable
    ``GGSPEC_NATIVE_MODULE``, names another build: ``"path/to/dir:module_name"`` imports
    `module_name` with that directory first on ``sys.path`` (e.g. a variant from
    ``native.build.build_variant``); a value without a colon is a module name importable as is.
    """
    spec = module if module is not None else os.environ.get("GGSPEC_NATIVE_MODULE", "")
    if not spec:
        from ggspec.native._native import ffi, lib

        return ffi, lib
    directory, sep, module_name = spec.rpartition(":")
    if sep and directory:
        directory = os.path.abspath(directory)
        if directory not in sys.path:
            sys.path.insert(0, directory)
    loaded = importlib.import_module(module_name)
    return loaded.ffi, loaded.lib
