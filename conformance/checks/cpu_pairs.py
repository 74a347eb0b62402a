"""The CPU backend's supports_op for MUL_MAT, every type pair at once (issue 30: found by
bench/mutation.py's semantic operators, `var` and `index` kinds).

CPU-11's `cpu.supports_op` draws one (src0, src1) pair an example out of a hundred; a rule that
looks at the wrong source (src0's type where src1's is meant, src1's vec_dot type where src0's
is) answers differently on about one pair in ten, which a few examples rarely draw. This check
asks about every pair of the same ten types in one example.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType, Op, blck_size
from hypothesis import strategies as st

from ..engine.registry import Recorder, check
from ..target import Target

#: the types cpu.supports_op draws MUL_MAT's sources from
TYPES = [int(x) for x in (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.Q8_K,
                          GGMLType.IQ2_XXS, GGMLType.IQ2_XS, GGMLType.I8, GGMLType.I16, GGMLType.I32)]


@check("CPU-11", types=st.just(tuple(TYPES)))
def supports_mul_mat_every_type_pair(t: Target, rec: Recorder, types: tuple[int, ...]) -> None:
    """supports_op of a MUL_MAT node for every (src0, src1) pair of `types`, one record a src0:
    true where src1 is F32 or src0's vec_dot type (deterministic)."""
    backend = t.cpu_init()

    def tensor(type_: int, name: str) -> object:
        return t.new_tensor(type_, (blck_size(GGMLType(type_)),), name)

    for src0 in types:
        row = []
        for src1 in types:
            mm = t.new_tensor(int(GGMLType.F32), (1,), "mul_mat")
            t.set_op(mm, int(Op.MUL_MAT), [tensor(src0, "src0"), tensor(src1, "src1")])
            row.append(t.backend_supports_op(backend, mm))
        rec(f"MUL_MAT {GGMLType(src0).name} x each", row)
