"""How a difference is described (conformance/engine/difference.py): the label, the reference's value
against the target's, bytes as numbers of the tensor's type where it is known."""

from __future__ import annotations

import dataclasses

import numpy as np
from ggspec.conformance.engine.difference import describe
from ggspec.conformance.inputs.strategies import TensorSpec
from ggspec.conformance.target import TensorInfo
from ggspec.reference.types import GGMLType

INFO = TensorInfo(int(GGMLType.F32), (4, 1, 1, 1), (4, 16, 16, 16), 0, "v", 0, True, True, True, None)


def test_a_scalar_is_labelled_reference_vs_target() -> None:
    text = describe([("n", 1), ("size", 64)], [("n", 1), ("size", 32)])
    assert text.splitlines()[0] == "observation 1 'size': reference 64 vs target 32"


def test_bytes_show_where_they_differ_and_the_tensors_numbers() -> None:
    ref = np.arange(24, dtype="<f4").tobytes()
    got = bytearray(ref)
    got[40:44] = np.float32(99.0).tobytes()
    text = describe([("buffer", ref)], [("buffer", bytes(got))], {"spec": TensorSpec(int(GGMLType.F32), (24,))})
    lines = text.splitlines()
    assert lines[0] == "observation 0 'buffer': 2 of 96 bytes differ, first at byte 42"
    assert any(line.strip().startswith("bytes 32..63:") for line in lines)
    typed = next(line for line in lines if "as F32" in line)
    assert "reference [8.0, 9.0, 10.0," in typed and "target [8.0, 9.0, 99.0," in typed


def test_the_type_comes_from_the_tensors_layout_observation() -> None:
    i16 = dataclasses.replace(INFO, type=int(GGMLType.I16))
    text = describe([("x: layout", i16), ("x: bytes", b"\x01\x00\x02\x00")],
                    [("x: layout", i16), ("x: bytes", b"\x01\x00\x03\x00")],
                    {"spec": TensorSpec(int(GGMLType.F32), (1,))})
    assert "as I16 (the tensor's type), elements 0..1: reference [1, 2] vs target [1, 3]" in text


def test_no_type_known_no_numbers() -> None:
    text = describe([("got", b"ab")], [("got", b"abc")])
    assert text.splitlines()[0] == "observation 0 'got': 2 bytes on the reference, 3 on the target"
    assert " as " not in text


def test_a_dataclass_field_is_named() -> None:
    text = describe([("view", INFO)], [("view", dataclasses.replace(INFO, ne=(4, 2, 1, 1)))])
    assert text.splitlines()[0] == "observation 0 'view'.ne[1]: reference 1 vs target 2"
    assert "reference: view = TensorInfo(" in text and "target:    view = TensorInfo(" in text


def test_a_missing_observation_is_named() -> None:
    text = describe([("a", 1)], [("a", 1), ("b", 5)])
    assert text == "the reference recorded 1 observations, the target 2; only the target recorded observation 1 'b' = 5"
