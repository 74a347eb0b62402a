"""One computed node against the reference model, from its own inputs as the target computed
them: a bound a wrong kernel can exceed.

spec/core.md's Tolerances bound each operation from its operands. A graph's outputs compared
through a chain of inexact operations get a bound that compounds (checks/_graphs.py): through
MUL_MAT → SOFT_MAX → MUL_MAT it grows to ~1e10 and no wrong value can exceed it. Here each node
is judged on its own: its sources' bytes are read *as the target computed them*, the reference
model computes the same operation from those bytes on its CPU backend (a one-node graph), and
the target's result must be within that operation's own bound of the model's (bytes, exactly,
for data movement and the exact operations). A wrong kernel fails at its own node, however
inexact the nodes before it are.

`node_from_inputs` gives one line that is the same on every correct target (the reference
included: the model against itself), so a check records it as it is (`rec(name, line)`) and
a wrong kernel shows as a differing line naming the largest difference.
"""

from __future__ import annotations

import struct

import numpy as np
from ggspec.reference.clauses import Profile
from ggspec.reference.types import GGMLType, Op, blck_size, type_size

from ..engine.approx import Approx, decode
from ..target import Handle, Target, TensorInfo
from ._graphs import NO_COMPUTE, GraphRecorder, Scene, raw

#: enum ggml_unary_op values the suite builds (rc.8: GELU 7, SILU 9)
_UNARY_KINDS = {7: "gelu", 9: "silu"}
#: how `Target.op` spells the operations the oracle recomputes
_KINDS = {Op.ADD: "add", Op.MUL: "mul", Op.MUL_MAT: "mul_mat", Op.GET_ROWS: "get_rows", Op.CPY: "cpy",
          Op.DUP: "dup", Op.CONT: "cont"}
#: operations with one F32 parameter in op_params[0]
_FLOAT_PARAM = {Op.SCALE: "scale", Op.NORM: "norm", Op.SOFT_MAX: "soft_max_ext"}


def logical_bytes(info: TensorInfo, data: bytes) -> bytes:
    """A tensor's elements (blocks, for a quantized type) in logical order, packed: the bytes of a
    contiguous tensor of the same type and shape. `data` is what `tensor_get(t, 0, nbytes)` gives."""
    t = GGMLType(info.type)
    ts, ne, nb = type_size(t), info.ne, info.nb
    if ne[0] % blck_size(t):
        raise ValueError(f"a row of {ne[0]} elements is not whole blocks of {t.name}")
    view = np.ndarray((ne[3], ne[2], ne[1], ne[0] // blck_size(t), ts), dtype=np.uint8, buffer=data,
                      strides=(nb[3], nb[2], nb[1], nb[0], 1))
    return view.tobytes()


def _call(t: Target, node: Handle, op: Op) -> tuple[str, list[float]] | None:
    """The `Target.op` kind and params that make `node`'s operation (None: not one the oracle knows)."""
    params = t.tensor_op_params(node)
    if op in _FLOAT_PARAM:
        return _FLOAT_PARAM[op], [struct.unpack_from("<f", params, 0)[0]]
    if op == Op.UNARY:
        kind = _UNARY_KINDS.get(struct.unpack_from("<i", params, 0)[0])
        return None if kind is None else (kind, [])
    return (_KINDS[op], []) if op in _KINDS else None


#: a node's sources as `Oracle.sources` read them: (type, ne, logical bytes) or None per source
#: slot; a string says why the oracle cannot recompute it; None: a node it does not recompute
Sources = list[tuple[int, tuple[int, int, int, int], bytes] | None] | str | None


class Oracle:
    """The reference model (one `ReferenceTarget` and its CPU backend, made on first use) that
    judges nodes of a target (`judge`)."""

    def __init__(self, profile: Profile = Profile.FIXED) -> None:
        self.profile = profile
        self._model: Target | None = None
        self._cpu: Handle = None

    def _backend(self) -> tuple[Target, Handle]:
        if self._model is None:
            from ..adapters.reference import ReferenceTarget

            self._model = ReferenceTarget(self.profile)
            self._cpu = self._model.cpu_init()
        return self._model, self._cpu

    @staticmethod
    def sources(t: Target, node: Handle) -> Sources:
        """What the oracle needs of `node` before it is computed: its sources' types, shapes and
        bytes in logical order (read before, an operation computed in place over its source is
        judged from the bytes it read). None where the oracle cannot recompute the node."""
        info = t.tensor_info(node)
        op = Op(info.op)
        if op in NO_COMPUTE or _call(t, node, op) is None:
            return None
        out: list[tuple[int, tuple[int, int, int, int], bytes] | None] = []
        for s in (t.tensor_src(node, i) for i in range(2)):
            if s is None:
                out.append(None)
                continue
            si = t.tensor_info(s)
            try:
                out.append((si.type, si.ne, logical_bytes(si, raw(t, s))))
            except ValueError as exc:
                return str(exc)
        return out

    def judge(self, t: Target, node: Handle, before: Sources | None = None) -> str:
        """One line: how `node` (computed, its memory not yet reused) compares with the model's
        computation of the same operation from its sources' bytes (`before`: as `sources` read
        them before the node was computed; None: read now), see the module doc."""
        info = t.tensor_info(node)
        op = Op(info.op)
        if op in NO_COMPUTE:
            return "writes nothing"
        call = _call(t, node, op)
        if call is None:
            return f"not recomputed: {op.name}"
        srcs = self.sources(t, node) if before is None else before
        if isinstance(srcs, str):
            return f"not recomputed: {srcs}"
        assert srcs is not None
        model, cpu = self._backend()
        scene = Scene(model, cpu, [s for s in srcs if s is not None])
        leafs = iter(scene.leafs)
        mnode = model.op(call[0], [None if s is None else next(leafs) for s in srcs], call[1])
        scene.run([mnode])
        minfo = model.tensor_info(mnode)
        if minfo.ne != info.ne or minfo.type != info.type:
            return f"off: the model's result is {minfo.type}{minfo.ne}, the target's {info.type}{info.ne}"
        approx = GraphRecorder(model).observe(mnode)
        got = raw(t, node)
        if approx is None:  # data movement: the same bytes
            want_b, got_b = logical_bytes(minfo, raw(model, mnode)), logical_bytes(info, got)
            if want_b == got_b:
                return "bytes as the model's from the same inputs"
            first = next(i for i, (x, y) in enumerate(zip(want_b, got_b, strict=True)) if x != y)
            return f"off: byte {first} of {len(want_b)} differs from the model's from the same inputs"
        mine = Approx(decode(info, got), exact=approx.exact)
        if mine == approx:
            return f"within {approx.what} of the model's from the same inputs"
        return f"off ({approx.what}): {mine.mismatch or approx.mismatch}"
