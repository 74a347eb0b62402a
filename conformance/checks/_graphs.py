"""Shared steps of the graph checks: building a GraphSpec on a backend, placing its nodes,
computing it, and recording every node's result.

Nodes are placed by hand, not by an allocator (the CORE checks must not depend on ALLOC): the
fresh nodes one after the other in one buffer of the backend, each at an aligned offset, in
graph order; the view nodes (VIEW, RESHAPE, PERMUTE, TRANSPOSE, CPY) with `view_init` into
their root's buffer.

`record_graph` records, for every node in graph order, its layout (`TensorInfo`) and its value:
the raw bytes of a data-movement node (NONE, VIEW, RESHAPE, PERMUTE, TRANSPOSE, DUP, CPY, CONT)
and an `Approx` of any other node, with the tolerance spec/core.md states for its op and
types. Tolerances compound along a graph: a node is compared with its own tolerance plus a
bound on how far the differences its sources were allowed can move it (first-order, per op;
see `GraphRecorder._approx`); a data-movement node downstream of a tolerance-compared node is
compared as values then, not bytes. Against a target that computes bit for bit as rc.8 does (native/,
rc.8 itself), every bound is slack. A compounded bound can grow past anything a wrong kernel
makes (through MUL_MAT -> SOFT_MAX -> MUL_MAT to ~1e10), so a node downstream of an inexact one
is also judged from its own inputs (`Oracle`: the reference model recomputes its operation from
the source bytes the target computed, within the operation's own bound).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from ggspec.reference.clauses import Profile
from ggspec.reference.quants import QK, quantize_q8_0
from ggspec.reference.types import GGMLType, Op, blck_size, type_size

from ..adapters.vulkan_device import computes_with_kernels_of_its_own
from ..engine.approx import (
    U16,
    Approx,
    U,
    decode,
    dequantized_blocks,
    f16_operands_atol,
    mul_mat_atol,
    norm_atol,
    soft_max_tolerance,
    unary_tolerance,
)
from ..engine.registry import Recorder
from ..inputs.graphspec import Built, GraphSpec, build, init_views, packed
from ..target import Handle, Target, TensorInfo

Array = npt.NDArray[Any]

#: ops whose result is bytes moved, not computed (compared as bytes while their inputs are exact)
DATA_MOVEMENT = frozenset({Op.NONE, Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE, Op.DUP, Op.CPY, Op.CONT})
#: ops whose result is within a bound, not bit-exact (spec/core.md, Tolerances)
INEXACT_OPS = frozenset({Op.MUL_MAT, Op.NORM, Op.SOFT_MAX, Op.UNARY})
#: ops that write nothing (CORE-48)
NO_COMPUTE = frozenset({Op.NONE, Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE})
VALUE_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0)


def place_nodes(t: Target, g: Handle, backend: Handle) -> Handle | None:
    """Allocate the graph's nodes on `backend` (see the module doc); returns the nodes' buffer
    (None when every node is a view)."""
    nodes = t.graph_nodes(g)
    fresh = [n for n in nodes if t.tensor_view_src(n) is None]
    buf = None
    if fresh:
        # fresh memory is undefined: every byte gets a value
        buf, offsets = packed(t, backend, fresh, clear=0xA5)
        for n, off in zip(fresh, offsets, strict=True):
            t.tensor_alloc(buf, n, off)
    init_views(t, nodes)
    return buf


@dataclass
class Ran:
    """A GraphSpec built, placed and computed on one backend."""

    built: Built
    backend: Handle
    nodes: list[Handle] = field(default_factory=list)


def make_tensors(t: Target, spec: GraphSpec) -> dict[str, Handle]:
    """`spec`'s leafs (without memory) and nodes, named as the spec names them; no graph."""
    tensors: dict[str, Handle] = {x.name: t.new_tensor(x.type, x.ne, x.name) for x in spec.leafs}
    for node in spec.nodes:
        tensors[node.name] = t.op(node.op, [tensors[s] if s is not None else None for s in node.srcs], node.params)
        t.set_name(tensors[node.name], node.name)
    return tensors


def run_spec(t: Target, spec: GraphSpec, backend: Handle) -> Ran:
    """Build `spec` with all its leafs on `backend` (whatever their place), place the nodes
    there, compute, synchronize."""
    places = max((x.place for x in spec.leafs), default=0) + 1
    built = build(t, spec, [backend] * places)
    place_nodes(t, built.graph, backend)
    t.backend_graph_compute(backend, built.graph)
    t.backend_synchronize(backend)
    return Ran(built, backend, t.graph_nodes(built.graph))


def layout(info: TensorInfo) -> TensorInfo:
    """What is compared of a tensor's layout: everything but its address (`data_offset`
    depends on where the buffer's base happens to be: the checks pad it to the alignment)."""
    return replace(info, data_offset=None)


def raw(t: Target, x: Handle) -> bytes:
    return t.tensor_get(x, 0, t.nbytes(x))


# --- values and how far they may be off --------------------------------------------------------


@dataclass
class _Seen:
    """What the recorder knows of a tensor: its layout, its values (None: not decodable) and
    how far they may be from a correct computation's (`err`, absolute; 0: exact)."""

    info: TensorInfo
    values: Array | None
    err: float


def _decodable(info: TensorInfo) -> bool:
    t = GGMLType(info.type)
    if t not in (*VALUE_TYPES, GGMLType.I32):
        return False
    if t in (GGMLType.Q4_0, GGMLType.Q8_0):
        return info.ne[0] % QK == 0 and info.nb[0] == type_size(t)
    return True


def _finite_max(x: Array | float) -> float:
    a = np.abs(np.asarray(x, dtype=np.float64))
    if a.size == 0:
        return 0.0
    if np.isnan(a).any():
        return math.inf
    return float(a.max())


def _blocks(t: Target, x: Handle, info: TensorInfo) -> tuple[Array, Array]:
    """A quantized tensor's blocks in logical row order: (integers, d)."""
    ts = type_size(GGMLType(info.type))
    ne, nb = info.ne, info.nb
    view = np.ndarray((ne[3], ne[2], ne[1], ne[0] // QK, ts), dtype=np.uint8, buffer=raw(t, x),
                      strides=(nb[3], nb[2], nb[1], nb[0], 1))
    return dequantized_blocks(GGMLType(info.type), view.reshape(-1, ts))


def _f32_param(t: Target, x: Handle, i: int = 0) -> float:
    return float(struct.unpack_from("<f", t.tensor_op_params(x), 4 * i)[0])


class GraphRecorder:
    """Records a computed graph's nodes (see the module doc)."""

    #: no longer read (observe passes the node along); kept for callers that still set it
    _node_of_mm: Handle = None

    def __init__(self, t: Target, f16_operands: bool | None = None) -> None:
        self.t = t
        self.roots: list[tuple[Handle, float]] = []  # (root tensor, err of its bytes)
        #: whether an F32 MUL_MAT may have had its operands rounded to F16 (a device with kernels
        #: of its own, spec/core.md); None: decided node by node from the buffer it lies in
        self.f16_operands = f16_operands

    def _root(self, x: Handle) -> Handle:
        r = self.t.tensor_view_src(x)
        return x if r is None else r

    def _root_err(self, x: Handle) -> float:
        root = self._root(x)
        for h, e in self.roots:
            if h == root:
                return e
        return 0.0

    def _set_root_err(self, x: Handle, err: float) -> None:
        root = self._root(x)
        for i, (h, e) in enumerate(self.roots):
            if h == root:
                self.roots[i] = (h, max(e, err))
                return
        self.roots.append((root, err))

    def seen(self, x: Handle) -> _Seen:
        info = self.t.tensor_info(x)
        values = decode(info, raw(self.t, x)) if _decodable(info) else None
        return _Seen(info, values, self._root_err(x))

    def _chained(self, nodes: list[Handle]) -> list[Handle]:
        """The computing nodes with a source computed inexactly (a MUL_MAT, NORM, SOFT_MAX or
        unary node, or anything computed from one) that no later node writes over, nor their
        sources (an in-place node, or a CPY, writes its root)."""
        t = self.t
        inexact: list[Handle] = []  # roots holding inexactly computed values

        def is_inexact(x: Handle) -> bool:
            r = self._root(x)
            return any(r == h for h in inexact)

        writers = [(i, self._root(m)) for i, m in enumerate(nodes)
                   if Op(t.tensor_info(m).op) not in NO_COMPUTE and t.tensor_view_src(m) is not None]
        out = []
        for i, n in enumerate(nodes):
            op = Op(t.tensor_info(n).op)
            if op in NO_COMPUTE:
                continue
            srcs = [x for x in (t.tensor_src(n, 0), t.tensor_src(n, 1)) if x is not None]
            from_inexact = any(is_inexact(x) for x in srcs)
            if from_inexact:
                mine = [self._root(n), *(self._root(x) for x in srcs)]
                later = [w for j, w in writers if j > i]
                if (op == Op.CPY or t.tensor_view_src(n) is None) and not any(r == w for r in mine for w in later):
                    out.append(n)
            if from_inexact or op in INEXACT_OPS:
                inexact.append(self._root(n))
        return out

    # one node ------------------------------------------------------------------------------

    def observe(self, node: Handle) -> Approx | None:
        """The node's Approx (its own tolerance plus what its sources' allow), or None for a
        data-movement node with exact inputs (recorded as bytes). Updates the error of the
        memory the node writes."""
        t = self.t
        info = t.tensor_info(node)
        op = Op(info.op)
        if op in NO_COMPUTE:
            return None
        out = self.seen(node)
        srcs = [t.tensor_src(node, i) for i in range(2)]
        a = self.seen(srcs[0]) if srcs[0] is not None else None
        b = self.seen(srcs[1]) if srcs[1] is not None else None
        approx = self._approx(node, op, out, a, b)
        if approx is None:
            return None
        total = _finite_max(approx.atol + approx.rtol * np.abs(np.nan_to_num(approx.values.astype(np.float64))))
        if total > 0:
            self._set_root_err(node, total)
        return approx

    def _approx(self, node: Handle, op: Op, out: _Seen, a: _Seen | None, b: _Seen | None) -> Approx | None:
        assert a is not None
        v = out.values
        if op in (Op.DUP, Op.CPY, Op.CONT):
            return None if a.err == 0 or v is None else _converted(out.info, v, a.err)
        if v is None or a.values is None:
            raise ValueError(f"cannot read the values of {out.info.name!r} ({op.name})")
        x = a.values.astype(np.float64)
        dst = np.nan_to_num(np.abs(v.astype(np.float64)), nan=0.0)
        f32_flip = 2.0**-23 * dst  # an F32 rounding that lands on the other side
        if op in (Op.ADD, Op.MUL):
            assert b is not None and b.values is not None
            ea, eb = a.err, b.err
            if ea == 0 and eb == 0:
                return Approx(v, what=f"{op.name}: bit-exact", exact=True)
            flip = 2.0**-10 * dst if GGMLType(out.info.type) == GGMLType.F16 else f32_flip
            if op == Op.ADD:
                extra = ea + eb + flip
            else:
                extra = _finite_max(b.values) * ea + _finite_max(x) * eb + ea * eb + flip
            return Approx(v, extra, what=f"{op.name}: exact on exact inputs, + its inputs' bounds")
        if op == Op.SCALE:
            if a.err == 0:
                return Approx(v, what="SCALE: bit-exact", exact=True)
            return Approx(v, abs(_f32_param(self.t, node)) * a.err + f32_flip, what="SCALE of inexact input")
        if op == Op.GET_ROWS:
            if a.err == 0:
                return Approx(v, what="GET_ROWS: bit-exact", exact=True)
            return Approx(v, a.err, what="GET_ROWS of an inexact table")
        if op == Op.MUL_MAT:
            assert b is not None
            return self._mul_mat(node, v, a, b)
        if op == Op.NORM:
            eps = _f32_param(self.t, node)
            atol = norm_atol(x, v, eps)
            if a.err:
                xd = x - x.mean(axis=-1, keepdims=True)
                scale = 1.0 / np.sqrt((xd**2).mean(axis=-1, keepdims=True) + eps)
                atol = atol + 4.0 * scale * a.err * (1.0 + dst)
            return Approx(v, atol, what="NORM: 2^-20·(max|dst| + scale·|mean|) per row")
        if op == Op.SOFT_MAX:
            atol_s, rtol = soft_max_tolerance()
            dw = abs(_f32_param(self.t, node)) * a.err + (b.err if b is not None else 0.0)
            if dw:
                rtol += 1.5 * math.expm1(min(2.0 * dw, 700.0)) + 2.0**-10
            return Approx(v, atol_s, rtol, what="SOFT_MAX: 2^-10·|dst| + 2^-24")
        if op == Op.UNARY:
            atol_u, rtol_u = unary_tolerance(x)
            return Approx(v, atol_u + 1.2 * a.err, rtol_u, what="GELU/SILU: 2^-9·(|dst| + |x|) + 2^-24")
        raise ValueError(f"no tolerance for {op.name}")

    def _mul_mat(self, node: Handle, v: Array, a: _Seen, b: _Seen) -> Approx:
        t = self.t
        at = GGMLType(a.info.type)
        assert a.values is not None and b.values is not None
        bv = b.values.astype(np.float32)
        k = a.info.ne[0]
        if at in (GGMLType.Q4_0, GGMLType.Q8_0):
            src0, src1 = t.tensor_src(node, 0), t.tensor_src(node, 1)
            qa = _blocks(t, src0, a.info)
            if GGMLType(b.info.type) == GGMLType.Q8_0:
                qb = _blocks(t, src1, b.info)
            else:
                qb = dequantized_blocks(GGMLType.Q8_0, quantize_q8_0(bv.reshape(-1)))
            b_prime = (qb[0].astype(np.float32) * qb[1][:, None]).reshape(bv.shape)
            atol = mul_mat_atol(at, a.values, b_prime, qa, qb)
            conv = 2.0 * b.err + _finite_max(qb[1]) + 2.0**-9 * _finite_max(bv) if b.err else 0.0
            what = "MUL_MAT (quantized weights): (nb+2)·2u·Σ|s·d_a·d_b|"
        else:
            b_prime = bv.astype(np.float16).astype(np.float32) if at == GGMLType.F16 else bv
            atol = mul_mat_atol(at, a.values, b_prime)
            conv = b.err + (2.0**-10 * _finite_max(bv) if at == GGMLType.F16 else 0.0) if b.err else 0.0
            what = "MUL_MAT: K·2u·Σ|a·b'| + 2^-126"
            f16 = self.f16_operands
            if at == GGMLType.F32 and (computes_with_kernels_of_its_own(t, node) if f16 is None else f16):
                atol = atol * (1 + 4 * U16) + f16_operands_atol(a.values, b_prime)
                what = "MUL_MAT: K·2u·Σ|a·b'| + 2^-126, operands rounded to F16 allowed (a device's kernels)"
        if a.err or b.err:
            atol = atol + k * (_finite_max(a.values) * conv + _finite_max(b_prime) * a.err + a.err * conv)
            atol = atol + 4 * U * np.abs(v.astype(np.float64))
        return Approx(v, atol, what=what)

    def record(self, rec: Recorder, nodes: list[Handle], prefix: str = "") -> None:
        """Record every node: layout, then bytes or Approx (see the module doc). A node whose
        sources were computed inexactly (its Approx has compounded their bounds, which a wrong
        kernel need not exceed) is also judged from its own inputs (Oracle, below), where
        no later node has written over it or its sources."""
        t = self.t
        chained = self._chained(nodes)
        approxes = [self.observe(n) for n in nodes]
        if chained:
            oracle = Oracle()
            for n in chained:
                rec(f"{prefix}{t.tensor_name(n)}: from its inputs", oracle.judge(t, n))
        for n, approx in zip(nodes, approxes, strict=True):
            info = t.tensor_info(n)
            rec(f"{prefix}{info.name}: layout", layout(info))
            if approx is not None:
                rec(f"{prefix}{info.name}: values", approx)
                continue
            err = self._root_err(n)
            if err == 0 or not _decodable(info):
                rec(f"{prefix}{info.name}: bytes", raw(t, n))
            else:  # a view of inexactly computed bytes
                values = decode(info, raw(t, n))
                rec(f"{prefix}{info.name}: values", Approx(values, err, what="a view of inexact values"))


def _converted(info: TensorInfo, v: Array, err: float) -> Approx:
    """DUP / CPY / CONT of inexact values: the source's bound, plus a conversion's rounding
    landing on the other side (one F16 step), or one quantization step and the change of the
    block scale for Q4_0 / Q8_0 (compared as dequantized values)."""
    t = GGMLType(info.type)
    amax = _finite_max(v)
    if t == GGMLType.F16:
        return Approx(v, err + 2.0**-24, 2.0**-10, what="a conversion to F16 of inexact values")
    if t in (GGMLType.Q4_0, GGMLType.Q8_0):
        step = amax / (8.0 if t == GGMLType.Q4_0 else 127.0)
        return Approx(v, 2.0 * err + 1.5 * step + 2.0**-9 * amax, what=f"{t.name} quantization of inexact values")
    return Approx(v, err, what="a copy of inexact values")


def record_graph(t: Target, rec: Recorder, ran: Ran, prefix: str = "") -> None:
    GraphRecorder(t).record(rec, ran.nodes, prefix)


# --- small hand-made graphs ----------------------------------------------------------------------


class Scene:
    """Leaf tensors placed in one buffer of a backend (a CPU backend or a virtual device), and
    the graph of nodes a scenario makes from them with `t.op`: `run(outputs)` expands the
    outputs into a new graph, places the nodes (see `place_nodes`), computes and synchronizes."""

    def __init__(self, t: Target, backend: Handle, leafs: list[tuple[int, tuple[int, ...], bytes]],
                 names: list[str] | None = None) -> None:
        self.t, self.backend = t, backend
        self.leafs: list[Handle] = [t.new_tensor(type_, ne, names[i] if names else f"leaf{i}")
                                    for i, (type_, ne, _) in enumerate(leafs)]
        self.buf, offsets = packed(t, backend, self.leafs, clear=0x5A)
        for x, off, (_, _, payload) in zip(self.leafs, offsets, leafs, strict=True):
            t.tensor_alloc(self.buf, x, off)
            n = t.nbytes(x)
            t.tensor_set(x, (payload * (n // max(len(payload), 1) + 1))[:n] if payload else bytes(n), 0, n)
        self.graph: Handle = None

    def run(self, outputs: list[Handle], size: int = 64) -> list[Handle]:
        t = self.t
        self.graph = t.new_graph(size)
        for out in outputs:
            t.build_forward_expand(self.graph, out)
        place_nodes(t, self.graph, self.backend)
        t.backend_graph_compute(self.backend, self.graph)
        t.backend_synchronize(self.backend)
        return t.graph_nodes(self.graph)

    def record(self, rec: Recorder, nodes: list[Handle], prefix: str = "") -> None:
        GraphRecorder(self.t).record(rec, nodes, prefix)


# --- one node judged from its own inputs (issue 30, class 8) ------------------------------------
#
# One computed node against the reference model, from its own inputs as the target computed
# them: a bound a wrong kernel can exceed.
#
# spec/core.md's Tolerances bound each operation from its operands. A graph's outputs compared
# through a chain of inexact operations get a bound that compounds (checks/_graphs.py): through
# MUL_MAT → SOFT_MAX → MUL_MAT it grows to ~1e10 and no wrong value can exceed it. Here each node
# is judged on its own: its sources' bytes are read *as the target computed them*, the reference
# model computes the same operation from those bytes on its CPU backend (a one-node graph), and
# the target's result must be within that operation's own bound of the model's (bytes, exactly,
# for data movement and the exact operations). A wrong kernel fails at its own node, however
# inexact the nodes before it are.
#
# `node_from_inputs` gives one line that is the same on every correct target (the reference
# included: the model against itself), so a check records it as it is (`rec(name, line)`) and
# a wrong kernel shows as a differing line naming the largest difference.

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
        approx = GraphRecorder(model, computes_with_kernels_of_its_own(t, node)).observe(mnode)
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
