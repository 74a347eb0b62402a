"""Checked wrapper: tensor copies (COPY)."""

from __future__ import annotations

from ggspec.reference.clauses import require
from ggspec.reference.copy import same_layout

from ._lib import CData, TensorView, lib, not_null


def tensor_copy(src: CData, dst: CData) -> None:
    """COPY-2..7."""
    require(same_layout(TensorView(not_null(src, "src", "COPY-2")), TensorView(not_null(dst, "dst", "COPY-2"))), "COPY-2")
    lib.ggspec_backend_tensor_copy(src, dst)


def tensor_copy_async(backend: CData, src: CData, dst: CData) -> None:
    """COPY-8..11."""
    require(same_layout(TensorView(not_null(src, "src", "COPY-8")), TensorView(not_null(dst, "dst", "COPY-8"))), "COPY-8")
    lib.ggspec_backend_tensor_copy_async(not_null(backend, "backend", "COPY-9"), src, dst)
