"""Small helpers shared by the reference model's graph tests: a world, tensors with host memory,
and writing / reading their elements in logical order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from ggspec.reference.clauses import Profile
from ggspec.reference.ops import HostMemory, load, store
from ggspec.reference.tensor import Context, Tensor
from ggspec.reference.types import GGMLType
from ggspec.reference.world import World


def world(profile: Profile = Profile.FIXED) -> World:
    return World(profile)


def host_ctx(w: World) -> Context:
    """A context whose tensors get host memory of their own (no_alloc false, CORE-6)."""
    return Context(w, no_alloc=False)


def tensor(ctx: Context, type_: GGMLType, values: npt.ArrayLike | None, ne: Sequence[int], name: str = "") -> Tensor:
    """A new tensor of extents `ne`, filled (logical order) with `values` when given."""
    t = ctx.new_tensor(type_, list(ne), name)
    if values is not None:
        put(t, values)
    return t


def put(t: Tensor, values: npt.ArrayLike) -> None:
    """Write elements given in logical order (numpy shape (ne3, ne2, ne1, ne0) or flat)."""
    store(HostMemory(t.world), t, np.asarray(values))


def get(t: Tensor) -> npt.NDArray[Any]:
    """The tensor's elements as numpy shape (ne1, ne0) for matrices, (ne3, ne2, ne1, ne0) otherwise."""
    v = load(HostMemory(t.world), t)
    return v[0, 0] if t.ne[2] == 1 and t.ne[3] == 1 else v


def f16_bits(values: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """F16 bit patterns by numpy's own conversion (round to nearest even), for expected values."""
    return np.asarray(values, dtype=np.float32).astype(np.float16).view(np.uint16)
