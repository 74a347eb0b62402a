"""One Target implementation shape: a target name is taken apart in one place
(target_names.parse), and `Target.op`'s kinds are read in one place (target.OP_KINDS, op_call)
by every adapter, with the same errors."""

from __future__ import annotations

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.target import OP_KINDS, op_call
from ggspec.conformance.target_names import parse
from ggspec.reference.types import GGMLType


def test_target_names() -> None:
    assert parse("native").kind == "native" and parse("native").module == ""
    assert parse("native:/tmp/v:_variant").module == "/tmp/v:_variant"
    ext = parse("external:ggml_:/inc:/lib/libggml.so")
    assert (ext.kind, ext.prefix, ext.include_dir, ext.library) == ("external", "ggml_", "/inc", "/lib/libggml.so")
    assert parse("external:ggml_").kind == "other"  # too few parts: no external name
    assert parse("ggml-python-0.0.30").kind == "sdist" and parse("rc8").kind == "rc8"
    assert parse("nonsense").kind == "other"


def test_op_call_checks_sources_and_kinds() -> None:
    with pytest.raises(ValueError, match="needs a first source"):
        op_call("add", [], [])
    with pytest.raises(ValueError, match="unknown op kind 'nope'"):
        op_call("nope", [object()], [])
    with pytest.raises(ValueError, match="'mul' needs two sources"):
        op_call("mul", [object(), None], [])
    c = op_call("view", [object()], [4.0, 2.0, 8.0, 0.0])
    assert c.ints == (4, 2, 8, 0) and op_call("scale", [object()], [0.5]).value == 0.5


@pytest.mark.parametrize("target", ["reference", "native"])
def test_every_op_kind_builds_a_node_on_each_adapter(target: str) -> None:
    t = make_target(target)
    a = t.new_tensor(int(GGMLType.F32), [4, 4])
    b = t.new_tensor(int(GGMLType.F32), [4, 4])
    rows = t.new_tensor(int(GGMLType.I32), [2])
    params = {"view": [4.0, 2.0, 16.0, 0.0], "reshape": [16.0], "permute": [1.0, 0.0, 2.0, 3.0], "scale": [0.5],
              "norm": [1e-5], "norm_inplace": [1e-5], "soft_max_ext": [1.0]}
    for kind, (n, _) in OP_KINDS.items():
        srcs = [a, rows] if kind == "get_rows" else [a, b] if n == 2 else [a, None] if kind == "soft_max_ext" else [a]
        assert t.op(kind, srcs, params.get(kind, [])) is not None, kind
