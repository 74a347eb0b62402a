"""Shared scenario steps: making a backend and a buffer for a placement, placing tensors."""

from __future__ import annotations

from reference.types import GGMLType, blck_size, type_size

from ..strategies import Placement, TensorSpec, ViewSpec
from ..target import Handle, Target


def backend_for(t: Target, placement: Placement) -> Handle:
    """The backend a placement names: a CPU backend or a fresh virtual device."""
    if placement.kind == "cpu":
        return t.cpu_init()
    assert placement.vdev is not None
    return t.vdev_init(placement.vdev)


def round_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def alloc_size(spec: TensorSpec, placement: Placement) -> int:
    """What the placement's buffer type will ask for a tensor of `spec` (BUFT-4)."""
    n = spec.nbytes()
    if placement.kind == "vdev" and placement.vdev is not None and placement.vdev.alloc_pad:
        n = round_up(n, placement.vdev.alloc_pad)
    return n


def new_tensor(t: Target, spec: TensorSpec, name: str = "t") -> Handle:
    return t.new_tensor(spec.type, spec.ne, name)


def view_of(t: Target, root: Handle, view: ViewSpec) -> Handle:
    return t.view(root, view.ne, view.nb, view.offset)


def placed(t: Target, placement: Placement, spec: TensorSpec, slack: int = 0, name: str = "t") -> tuple[Handle, Handle, Handle]:
    """A backend, a buffer of its default type, and a tensor of `spec` allocated at offset 0
    (followed by `slack` spare bytes)."""
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement) + slack)
    tensor = new_tensor(t, spec, name)
    t.tensor_alloc(buf, tensor, 0)
    return backend, buf, tensor


def elements(spec: TensorSpec) -> int:
    n = 1
    for x in spec.ne:
        n *= x
    return n


def row_bytes(type_: int, ne0: int) -> int:
    return type_size(GGMLType(type_)) * ne0 // blck_size(GGMLType(type_))
