"""Tensor names in the reference model (CORE-80): set_name keeps 63 bytes and the terminator,
the names the model writes itself are cut the same way, in bytes."""

from __future__ import annotations

import pytest
from ggspec.reference import ops
from ggspec.reference.tensor import Context, name_bytes, set_name
from ggspec.reference.types import GGMLType as T
from graph_helpers import world


@pytest.mark.parametrize(("length", "kept"), [(0, 0), (62, 62), (63, 63), (64, 63), (200, 63)])
def test_set_name_keeps_at_most_63_bytes(length: int, kept: int) -> None:
    x = Context(world()).new_tensor(T.F32, (4,))
    set_name(x, "abcdefghij" * 20 if length else "")
    set_name(x, ("abcdefghij" * 20)[:length])
    assert x.name == ("abcdefghij" * 20)[:kept]


def test_a_character_across_the_cut_keeps_its_leading_byte() -> None:
    x = Context(world()).new_tensor(T.F32, (4,))
    set_name(x, "n" * 62 + "\u00e9tail")
    assert name_bytes(x.name) == b"n" * 62 + b"\xc3"


def test_derived_names_are_cut_at_63_bytes() -> None:
    ctx = Context(world())
    x = ctx.new_tensor(T.F32, (4,))
    set_name(x, "y" * 60)
    assert ops.cont(ctx, x).name == "y" * 60 + " (c"
    assert name_bytes(ctx.new_tensor(T.F32, (4,), "\u00e9" * 40).name) == "\u00e9".encode() * 31 + b"\xc3"


def test_set_name_refuses_a_name_that_is_not_a_str() -> None:
    x = Context(world()).new_tensor(T.F32, (4,))
    with pytest.raises(TypeError, match="name must be a str, got bytes"):
        set_name(x, b"x")  # type: ignore[arg-type]
