"""The reference model's operations (spec/core.md, CORE-16 to CORE-72): constructors' shapes,
types, op_params and views, and hand-computed results of computing small nodes.

Expected values are written out or derived here with plain Python / numpy, never with the
model's own helpers."""

from __future__ import annotations

import math
import struct
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import pytest
from ggspec.reference import ops
from ggspec.reference.clauses import Profile, SpecViolation, UndefinedBehaviour
from ggspec.reference.ops import HostMemory, compute
from ggspec.reference.tensor import Tensor
from ggspec.reference.types import GGMLType as T
from ggspec.reference.types import Op
from graph_helpers import f16_bits, get, host_ctx, tensor, world

F32, F16, I32, Q4_0, Q8_0 = T.F32, T.F16, T.I32, T.Q4_0, T.Q8_0


def run(node: Tensor) -> None:
    compute(node, HostMemory(node.world))


def violates(clause_id: str) -> AbstractContextManager[Any]:
    return pytest.raises(SpecViolation, match=rf"\[{clause_id}\]")


# --- constructors ---------------------------------------------------------------------------


def test_constructors_make_fresh_results_with_sources_and_params() -> None:
    w = world()
    ctx = host_ctx(w)
    a = tensor(ctx, F32, None, [4, 3], "a")
    b = tensor(ctx, F32, None, [4, 1], "b")
    s = ops.add(ctx, a, b)
    assert (s.op, s.type, s.ne, s.src[0], s.src[1], s.view_src) == (Op.ADD, F32, [4, 3, 1, 1], a, b, None)
    assert s.nb == [4, 16, 48, 48]
    sc = ops.scale(ctx, a, 0.5)
    assert ops.op_params64(sc) == struct.pack("<f", 0.5) + bytes(60)
    n = ops.norm(ctx, a, 1e-5)
    assert struct.unpack_from("<f", ops.op_params64(n))[0] == np.float32(1e-5)
    g = ops.gelu(ctx, a)
    assert (g.op, ops.op_param_i32(g)) == (Op.UNARY, 7)
    assert ops.op_param_i32(ops.silu(ctx, a)) == 9
    sm = ops.soft_max_ext(ctx, a, b, 0.125)
    assert (sm.src[0], sm.src[1], ops.op_param_f32(sm)) == (a, b, 0.125)
    assert ops.op_param_f32(ops.soft_max(ctx, a)) == 1.0


def test_mul_mat_result_is_f32_with_b_outer_dims() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F16, None, [8, 5, 2, 1])
    b = tensor(ctx, F32, None, [8, 3, 4, 3])
    r = ops.mul_mat(ctx, a, b)
    assert (r.type, r.ne) == (F32, [5, 3, 4, 3])


def test_cpy_is_a_view_of_its_destination() -> None:
    w = world()
    ctx = host_ctx(w)
    a = tensor(ctx, F32, None, [6], "src")
    b = tensor(ctx, F16, None, [3, 2], "dst")
    c = ops.cpy(ctx, a, b)
    assert (c.op, c.view_src, c.view_offs, c.data, c.ne, c.nb) == (Op.CPY, b, 0, b.data, b.ne, b.nb)
    assert c.name == "dst (copy of src)"
    b.name = ""
    assert ops.cpy(ctx, a, b).name == "src (copy)"


def test_views_reshape_permute_transpose() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, None, [4, 3, 2], "a")
    r = ops.reshape_nd(ctx, a, [6, 4])
    assert (r.op, r.ne, r.nb, r.view_src, r.data) == (Op.RESHAPE, [6, 4, 1, 1], [4, 24, 96, 96], a, a.data)
    assert r.name == "a (reshaped)"
    p = ops.permute(ctx, a, 2, 0, 1, 3)  # dim 0 -> 2, dim 1 -> 0, dim 2 -> 1
    assert (p.ne, p.nb) == ([3, 2, 4, 1], [16, 48, 4, 96])
    assert ops.op_params64(p)[:16] == struct.pack("<4i", 2, 0, 1, 3)
    t = ops.transpose(ctx, a)
    assert (t.ne, t.nb, t.op, t.name) == ([3, 4, 2, 1], [16, 4, 48, 96], Op.TRANSPOSE, "a (transposed)")
    v = ops.view(ctx, r, [6], [], 24)  # a view of a view points at the root
    assert (v.view_src, v.view_offs, v.op, ops.op_params64(v)[:8]) == (a, 24, Op.VIEW, struct.pack("<Q", 24))


def test_get_rows_result() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, Q8_0, None, [32, 10, 2])
    b = tensor(ctx, I32, None, [5, 2])
    r = ops.get_rows(ctx, a, b)
    assert (r.type, r.ne) == (F32, [32, 5, 2, 1])
    assert ops.get_rows(ctx, tensor(ctx, I32, None, [3, 4]), tensor(ctx, I32, None, [2])).type == I32


def test_constructor_asserts() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, None, [4, 3])
    with violates("CORE-18"):
        ops.add(ctx, a, tensor(ctx, F32, None, [3, 3]))
    with violates("CORE-18"):
        ops.mul(ctx, a, tensor(ctx, F32, None, [4, 2]))
    with violates("CORE-23"):
        ops.mul_mat(ctx, a, tensor(ctx, F32, None, [5, 3]))
    with violates("CORE-24"):
        ops.mul_mat(ctx, ops.transpose(ctx, a), tensor(ctx, F32, None, [3, 3]))
    with violates("CORE-26"):
        ops.cpy(ctx, a, tensor(ctx, F32, None, [5]))
    with violates("CORE-30"):
        ops.reshape_nd(ctx, ops.transpose(ctx, a), [12])
    with violates("CORE-31"):
        ops.reshape_nd(ctx, a, [11])
    with violates("CORE-33"):
        ops.permute(ctx, a, 4, 0, 1, 2)
    with violates("CORE-34"):
        ops.permute(ctx, a, 0, 0, 1, 2)
    with violates("CORE-21"):
        ops.scale(ctx, ops.transpose(ctx, a), 2.0)
    with violates("CORE-37"):
        ops.get_rows(ctx, a, tensor(ctx, I32, None, [2, 2]))
    with violates("CORE-39"):
        ops.get_rows(ctx, a, tensor(ctx, F32, None, [2]))
    with violates("CORE-42"):
        ops.soft_max(ctx, ops.transpose(ctx, a))
    with violates("CORE-44"):
        ops.soft_max_ext(ctx, a, tensor(ctx, F32, None, [4, 1, 2]), 1.0)
    with violates("CORE-46"):
        ops.soft_max_ext(ctx, a, tensor(ctx, F32, None, [3, 1]), 1.0)


def test_gradients_follow_operands() -> None:
    from ggspec.reference.graph import set_param

    ctx = host_ctx(world())
    p = tensor(ctx, F32, None, [4, 3], "p")
    x = tensor(ctx, F32, None, [4, 1], "x")
    set_param(ctx, p)
    assert p.grad is not None and p.grad.name == "p (grad)" and p.is_param
    with violates("CORE-14"):
        set_param(ctx, p)
    with violates("CORE-19"):  # no broadcasting with gradients
        ops.add(ctx, p, x)
    y = ops.scale(ctx, p, 2.0)
    assert y.grad is not None and y.grad.ne == y.ne and ctx.tensors[-1] is y.grad
    assert ops.scale(ctx, x, 2.0).grad is None
    with violates("CORE-49"):  # NORM has no backward pass
        ops.norm(ctx, p, 1e-5)


# --- computing --------------------------------------------------------------------------------


def test_mul_mat_2x3_by_3x2_written_out() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, [[1, 2, 3], [4, 5, 6]], [3, 2])  # two weight rows
    b = tensor(ctx, F32, [[7, 8, 9], [10, 11, 12]], [3, 2])  # two input rows
    r = ops.mul_mat(ctx, a, b)
    run(r)
    # r[i1][i0] = row i0 of a . row i1 of b
    assert get(r).tolist() == [
        [1 * 7 + 2 * 8 + 3 * 9, 4 * 7 + 5 * 8 + 6 * 9],
        [1 * 10 + 2 * 11 + 3 * 12, 4 * 10 + 5 * 11 + 6 * 12],
    ]


def test_mul_mat_broadcasts_a_over_batches_and_f16_rounds_b() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F16, f16_bits([1, 0, 0, 1]), [2, 2, 1])
    b = tensor(ctx, F32, [[[0.1, 2.0]], [[3.0, 1 / 3]]], [2, 1, 2])  # two batches, one row each
    r = ops.mul_mat(ctx, a, b)
    run(r)
    # a is the identity, so r is b rounded to F16 (then back to F32)
    expect = np.array([0.1, 2.0, 3.0, 1 / 3], np.float32).astype(np.float16).astype(np.float32)
    assert get(r).reshape(-1).tolist() == expect.tolist()


def test_add_and_mul_repeat_b() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, [[1, 2, 3, 4], [5, 6, 7, 8]], [4, 2])
    b = tensor(ctx, F32, [[10, 20]], [2, 1])
    s, m = ops.add(ctx, a, b), ops.mul(ctx, a, b)
    run(s)
    run(m)
    assert get(s).tolist() == [[11, 22, 13, 24], [15, 26, 17, 28]]
    assert get(m).tolist() == [[10, 40, 30, 80], [50, 120, 70, 160]]


def test_f16_add_rounds_the_f32_sum() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F16, f16_bits([1.0, 2048.0]), [2])
    b = tensor(ctx, F32, [2**-12, 1.0], [2])
    s = ops.add(ctx, a, b)
    run(s)
    # 1 + 2^-12 rounds to 1 in F16; 2048 + 1 is a tie between 2048 and 2050: to even, 2048
    assert get(s).reshape(-1).tolist() == f16_bits([1.0, 2048.0]).tolist()
    c = ops.add(ctx, tensor(ctx, F16, f16_bits([1, 2]), [2, 1]), tensor(ctx, F16, f16_bits([1]), [1, 1]))
    with violates("CORE-55"):
        run(c)


def test_scale_norm() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, [1, 2, 3, 4], [4])
    sc = ops.scale(ctx, a, 0.5)
    run(sc)
    assert get(sc).reshape(-1).tolist() == [0.5, 1.0, 1.5, 2.0]
    n = ops.norm(ctx, a, 1e-5)
    run(n)
    # mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, every step in F32
    f = np.float32
    scale = f(1.0) / np.sqrt(f(1.25) + f(1e-5))
    expect = [f(v) * scale for v in (-1.5, -0.5, 0.5, 1.5)]
    assert get(n).reshape(-1).tolist() == expect


def test_soft_max_with_mask_and_scale() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, [[0.0, 2 * math.log(2.0), 5.0], [1.0, 1.0, 1.0]], [3, 2])
    mask = tensor(ctx, F32, [[0.0, 0.0, -np.inf]], [3, 1])
    r = ops.soft_max_ext(ctx, a, mask, 0.5)
    run(r)
    got = get(r)
    assert got[0, 2] == 0.0 and got[1, 2] == 0.0  # masked: exactly zero
    # row 0: exp(0), exp(ln 2) -> 1/3, 2/3 (the exp table adds at most an F16 ulp)
    assert got[0, :2] == pytest.approx([1 / 3, 2 / 3], rel=2**-10)
    assert got[1, :2].tolist() == [0.5, 0.5]


def _f16(x: float) -> float:
    return float(np.float16(np.float32(x)))


def test_gelu_and_silu_go_through_f16() -> None:
    xs = [-3.0, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5]
    ctx = host_ctx(world())
    a = tensor(ctx, F32, xs, [7])
    g, s = ops.gelu(ctx, a), ops.silu(ctx, a)
    run(g)
    run(s)

    def gelu(x: float) -> float:
        return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * x * (1 + 0.044715 * x * x)))

    assert get(g).reshape(-1).tolist() == [_f16(gelu(_f16(x))) for x in xs]
    assert get(s).reshape(-1).tolist() == [_f16(_f16(x) / (1 + math.exp(-_f16(x)))) for x in xs]


def test_get_rows_f32_f16_and_q8_0() -> None:
    ctx = host_ctx(world())
    rows = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    idx = tensor(ctx, I32, [2, 0, 2], [3])
    for table in (tensor(ctx, F32, rows, [2, 3]), tensor(ctx, F16, f16_bits(sum(rows, [])), [2, 3])):
        r = ops.get_rows(ctx, table, idx)
        run(r)
        assert get(r).tolist() == [[5, 6], [1, 2], [5, 6]]
    # one Q8_0 block per row: d = 0.5 (0x3800), qs = j - 16 for row 0, 16 - j for row 1
    blocks = np.zeros((2, 34), np.uint8)
    blocks[:, 0:2] = [0x00, 0x38]
    blocks[0, 2:] = (np.arange(32) - 16).astype(np.int8).view(np.uint8)
    blocks[1, 2:] = (16 - np.arange(32)).astype(np.int8).view(np.uint8)
    q = tensor(ctx, Q8_0, blocks.reshape(1, 1, 2, 1, 34), [32, 2])
    r = ops.get_rows(ctx, q, tensor(ctx, I32, [1], [1]))
    run(r)
    assert get(r).reshape(-1).tolist() == [(16 - j) * 0.5 for j in range(32)]
    bad = ops.get_rows(ctx, q, tensor(ctx, I32, [2], [1]))
    with pytest.raises(UndefinedBehaviour, match="CORE-65"):
        run(bad)


def test_copies_convert_in_logical_order() -> None:
    ctx = host_ctx(world())
    a = tensor(ctx, F32, [[1, 2, 3], [4, 5, 6]], [3, 2])
    c = ops.cont(ctx, ops.transpose(ctx, a))
    run(c)
    assert get(c).tolist() == [[1, 4], [2, 5], [3, 6]]
    h = tensor(ctx, F16, None, [2, 3])
    cp = ops.cpy(ctx, tensor(ctx, F32, [1.0, 0.1, 65504.0, 65520.0, 1 / 3, -0.0], [6]), h)
    run(cp)
    # 65520 is halfway between 65504 and 65536: to even is 65536, which overflows to infinity
    assert get(h).reshape(-1).tolist() == [0x3C00, 0x2E66, 0x7BFF, 0x7C00, 0x3555, 0x8000]
    back = ops.dup(ctx, h)
    run(back)
    assert back.type == F16 and get(back).tolist() == get(h).tolist()  # same type: the same bits
    back_f32 = tensor(ctx, F32, None, [2, 3])
    run(ops.cpy(ctx, h, back_f32))
    assert get(back_f32).reshape(-1)[:3].tolist() == [1.0, np.float32(np.float16(0.1)), 65504.0]


def test_unsupported_compute_paths_abort() -> None:
    ctx = host_ctx(world(Profile.RC8))  # CORE-49's gaps abort under rc8 (fixed: see below)
    a = tensor(ctx, F32, np.ones(8), [4, 2])
    h = tensor(ctx, F16, f16_bits(np.ones(8)), [4, 2])
    with violates("CORE-58"):
        run(ops.mul(ctx, a, h))
    with violates("CORE-49"):
        run(ops.scale(ctx, h, 2.0))
    with violates("CORE-49"):  # F32 -> I32 has no conversion
        run(ops.cpy(ctx, a, tensor(ctx, I32, None, [8])))
    with violates("CORE-56"):
        run(ops.add(ctx, ops.transpose(ctx, a), tensor(ctx, F32, np.ones(8), [2, 4])))
    padded = ctx.view(tensor(ctx, F32, np.ones(12), [6, 2]), [4, 2], [24], 0)
    with violates("CORE-60"):
        run(ops.scale(ctx, padded, 2.0))
    with violates("CORE-63"):
        run(ops.mul_mat(ctx, tensor(ctx, F32, np.ones(4), [2, 2]), ops.transpose(ctx, tensor(ctx, F32, np.ones(4), [2, 2]))))
    with violates("CORE-64"):
        run(ops.mul_mat(ctx, tensor(ctx, Q4_0, None, [32, 1]), tensor(ctx, F16, None, [32, 1])))
    with violates("CORE-67"):
        run(ops.norm(ctx, a, 0.0))


def test_cpu_gaps_are_left_to_the_port_under_fixed() -> None:
    """CORE-49 under profile fixed: a port may compute what rc.8's CPU code leaves out."""
    ctx = host_ctx(world(Profile.FIXED))
    h = tensor(ctx, F16, f16_bits(np.ones(8)), [4, 2])
    for node in (ops.scale(ctx, h, 2.0), ops.cpy(ctx, tensor(ctx, F32, np.ones(8), [4, 2]), tensor(ctx, I32, None, [8]))):
        with pytest.raises(UndefinedBehaviour, match="CORE-49"):
            run(node)
    from ggspec.reference.graph import set_param

    param = tensor(ctx, F32, np.ones(8), [4, 2])
    set_param(ctx, param)
    with violates("CORE-49"):  # the build-time case stays an assert
        ops.norm(ctx, param, 1e-5)


def _erratum_of_rc8(clause: str, build: Any, expect: list[Any]) -> None:
    """For each profile, build(ctx) gives a node and the tensor it writes: computing it is
    undefined behaviour under `clause` in rc.8, and writes `expect` (flattened) under fixed."""
    for profile in Profile:
        ctx = host_ctx(world(profile))
        node, dst = build(ctx)
        if profile is Profile.RC8:
            with pytest.raises(UndefinedBehaviour, match=clause):
                run(node)
        else:
            run(node)
            assert get(dst).reshape(-1).tolist() == expect


def test_same_type_row_copy_erratum() -> None:
    """CORE-52: a permuted 3-D source copied into a 2-D destination of other row coordinates."""
    def build(ctx: Any) -> Any:
        base = tensor(ctx, F32, np.arange(24), [4, 3, 2])
        src = ops.permute(ctx, base, 0, 2, 1, 3)  # ne [4, 2, 3], rows of adjacent elements
        dst = tensor(ctx, F32, None, [4, 6])
        return ops.cpy(ctx, src, dst), dst

    _erratum_of_rc8("CORE-52", build, np.arange(24).reshape(2, 3, 4).transpose(1, 0, 2).reshape(-1).tolist())


def test_quantized_same_type_copy_erratum() -> None:
    """CORE-53: rc.8 copies 32x the bytes of a quantized tensor; fixed copies the blocks."""
    def build(ctx: Any) -> Any:
        src = tensor(ctx, Q8_0, np.arange(68).astype(np.uint8).reshape(1, 1, 1, 2, 34), [64])
        dst = tensor(ctx, Q8_0, None, [32, 2])
        return ops.cpy(ctx, src, dst), dst

    _erratum_of_rc8("CORE-53", build, list(range(68)))


def test_all_op_table_names_every_op() -> None:
    assert set(ops.ALL_OP_TABLE) == {op for op in Op if op != Op.COUNT}
    modelled = {op for op, s in ops.ALL_OP_TABLE.items() if s is not None}
    assert {Op.DUP, Op.ADD, Op.MUL, Op.SCALE, Op.MUL_MAT, Op.CPY, Op.CONT, Op.GET_ROWS, Op.SOFT_MAX, Op.UNARY} <= modelled
    assert ops.ALL_OP_TABLE[Op.ROPE] is None
