"""CORE: type traits, new tensors, nbytes and views — the ggml facts the backend API leans on."""

from __future__ import annotations

from ggspec.reference.types import GGMLType, Op, blck_size, type_size
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.strategies import (
    Placement,
    TensorSpec,
    ViewSpec,
    all_types,
    ascii_names,
    placements,
    tensor_specs,
    view_specs,
)
from ..target import Target
from ._setup import placed, view_of


@check("CORE-1", type_=all_types, blocks=st.integers(1, 4))
def type_traits(t: Target, rec: Recorder, type_: int, blocks: int) -> None:
    """The name as the trait table has it; block and type size through the strides and nbytes
    of a one-row tensor of whole blocks."""
    bs = blck_size(GGMLType(type_))
    rec("name", t.type_name(type_))
    one_block = t.new_tensor(type_, (bs,), "one block")
    rec("nbytes of one block", t.nbytes(one_block))
    row = t.new_tensor(type_, (bs * blocks, 2), "row of blocks")
    info = t.tensor_info(row)
    rec("nb[0]", info.nb[0])
    rec("nb[1] (row of blocks)", info.nb[1])


@check("CORE-1", type_=all_types)
def vec_dot_types(t: Target, rec: Recorder, type_: int) -> None:
    """The vec_dot type of the trait table: zero (F32) where rc.8 sets none (Q8_K, integers).
    (A separate check: a build whose binding lacks the traits call fails only this one.)"""
    rec("vec_dot_type", t.vec_dot_type(type_))


@check("CORE-2", spec=tensor_specs(type_=all_types), name=ascii_names(max_size=20))
def new_tensors_are_contiguous(t: Target, rec: Recorder, spec: TensorSpec, name: str) -> None:
    """A new no_alloc tensor: ne padded with 1, contiguous nb, no data, no buffer, no
    view_src, op NONE."""
    rec("tensor", t.tensor_info(t.new_tensor(spec.type, spec.ne, name)))


#: a name of 62 ASCII bytes and then "é" (2 bytes): the character straddles the 63-byte cut
_WIDE_AT_CUT = "n" * 62 + "\u00e9tail"


@example(length=63, wide=False)
@example(length=64, wide=False)
@example(length=100, wide=False)
@example(length=66, wide=True)
@check("CORE-80", length=st.integers(0, 100), wide=st.booleans())
def set_name_keeps_63_bytes(t: Target, rec: Recorder, length: int, wide: bool) -> None:
    """set_name with a name of `length` characters (ASCII; with `wide`, 62 ASCII bytes, a
    2-byte character across the cut and ASCII after it), read back with get_name; then the
    names rc.8 writes itself from it (CONT's "<a> (cont)", a view's "<a> (view)"), cut at the
    same 63 bytes (deterministic: 63 is kept whole, 64 and 100 lose their tail, the wide
    character keeps its first byte)."""
    name = (_WIDE_AT_CUT if wide else "0123456789abcdefghijklmnopqrstuvwxyz" * 3)[:length]
    x = t.new_tensor(int(GGMLType.F32), (4,), "x")
    t.set_name(x, name)
    rec("name", t.tensor_name(x))
    rec("CONT's name", t.tensor_name(t.op("cont", [x], [])))
    rec("a view's name", t.tensor_name(t.op("view", [x], [2, 0])))


@st.composite
def _root_and_view(draw: st.DrawFn) -> tuple[TensorSpec, ViewSpec]:
    root = draw(tensor_specs(type_=all_types), label="root")
    return root, draw(view_specs(root), label="view")


@check("CORE-3", rv=_root_and_view())
def nbytes_spans_the_touched_bytes(t: Target, rec: Recorder, rv: tuple[TensorSpec, ViewSpec]) -> None:
    """nbytes of a tensor and of a (strided) view inside it: the span of bytes touched."""
    root_spec, vspec = rv
    root = t.new_tensor(root_spec.type, root_spec.ne, "root")
    rec("root nbytes", t.nbytes(root))
    rec("view nbytes", t.nbytes(view_of(t, root, vspec)))


@check("CORE-3", "CORE-5", type_=st.sampled_from([int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.I8)]),
       n=st.integers(2, 8), rows=st.integers(2, 5), gap=st.integers(1, 8))
def strided_view_may_reach_past_its_root(t: Target, rec: Recorder, type_: int, n: int, rows: int, gap: int) -> None:
    """CORE-5 compares the dense size, not the strided span: a view whose rows are spread out
    by a stride can span more than its root holds and is still created."""
    ts = type_size(GGMLType(type_))
    root = t.new_tensor(type_, (n * rows,), "root")
    view = t.view(root, (n, rows), ((n + gap) * ts,), 0)
    rec("root nbytes", t.nbytes(root))
    rec("view nbytes", t.nbytes(view))
    rec("view", t.tensor_info(view))


@check("CORE-4", placement=placements, nested=st.tuples(tensor_specs(type_=all_types), st.integers(0, 1 << 16),
                                                        st.integers(0, 1 << 16)),
       allocated=st.booleans(), depth=st.integers(1, 3))
def views_point_at_the_root(t: Target, rec: Recorder, placement: Placement,
                            nested: tuple[TensorSpec, int, int], allocated: bool, depth: int) -> None:
    """A chain of 1-d views: each one's view_src is the root, view_offs the sum of offsets,
    op VIEW, src[0] its parent, data the root's data plus view_offs (NULL while the root has
    none), buffer NULL."""
    spec, a, b = nested
    if allocated:
        _, _, root = placed(t, placement, spec)
    else:
        root = t.new_tensor(spec.type, spec.ne, "root")
    ts, bs = type_size(GGMLType(spec.type)), blck_size(GGMLType(spec.type))
    units = t.nbytes(root) // ts
    parent, draws = root, [a, b, a ^ b]
    for level in range(depth):
        if units < 1:
            break
        k = 1 + draws[level] % units  # units in this view
        off = (draws[level] // 7) % (units - k + 1)  # its offset inside the parent, in units
        view = t.view(parent, (k * bs,), (), off * ts)
        info = t.tensor_info(view)
        rec(f"view {level}", info)
        rec(f"view {level} view_src is the root", t.tensor_view_src(view) == root)
        rec(f"view {level} src[0] is its parent", t.tensor_src(view, 0) == parent)
        rec(f"view {level} op is VIEW", info.op == int(Op.VIEW))
        parent, units = view, k


@check("CORE-5", spec=tensor_specs(type_=all_types), excess=st.integers(1, 64), split=st.integers(0, 1 << 16),
       nested=st.booleans())
def view_past_the_root(t: Target, rec: Recorder, spec: TensorSpec, excess: int, split: int, nested: bool) -> None:
    """A 1-d view whose dense size plus absolute offset passes the root's nbytes by `excess`
    bytes; with `nested`, through a first view that fits, so only the summed offset is too far."""
    ts, bs = type_size(GGMLType(spec.type)), blck_size(GGMLType(spec.type))
    root = t.new_tensor(spec.type, spec.ne, "root")
    total = t.nbytes(root)
    units = total // ts
    k = 1 + split % units  # the view's size in units
    size = k * ts
    end = total + excess  # where the view would end
    if nested:
        first_off = (end - size) // 2
        first_units = (total - first_off) // ts
        if first_units >= 1:
            first = t.view(root, (first_units * bs,), (), first_off)
            t.view(first, (k * bs,), (), end - size - first_off)
            return
    t.view(root, (k * bs,), (), end - size)


@st.composite
def _view_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """1 to 4 extents and, per given stride, how many elements it leaves out past the dense one."""
    dims = draw(st.integers(1, 4), label="view dims")
    ne = tuple(draw(st.lists(st.integers(1, 3), min_size=dims, max_size=dims), label="ne"))
    gaps = tuple(draw(st.lists(st.integers(0, 3), min_size=dims - 1, max_size=dims - 1), label="gaps"))
    return ne, gaps


# tensor.c:305, :307 and :308 survived a mutation run: no drawn 3-d view had nb2 != nb1·ne1 with
# nb[2] and nb[3] compared; here nb1 = 3 elements (not ne0 = 2), nb2 = 8 (not nb1·ne1 = 6)
@example(type_=int(GGMLType.F32), shape=((2, 2, 2), (1, 2)), offset=1)
@example(type_=int(GGMLType.F16), shape=((3, 2), (2,)), offset=0)
@example(type_=int(GGMLType.I8), shape=((2, 3, 2, 2), (1, 0, 3)), offset=2)
@check("CORE-77", type_=st.sampled_from([int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.I8)]),
       shape=_view_shapes(), offset=st.integers(0, 3))
def view_extents_and_strides(t: Target, rec: Recorder, type_: int, shape: tuple[tuple[int, ...], tuple[int, ...]],
                             offset: int) -> None:
    """view_Nd with strides that leave gaps: ne padded with 1, nb[1 .. N-1] as given (not
    checked against each other), each stride past them nb[i-1]·ne[i-1]; and its nbytes."""
    ne, gaps = shape
    ts = type_size(GGMLType(type_))
    nb, stride = [], ts * ne[0]
    for i, gap in enumerate(gaps, start=1):
        stride = stride + gap * ts
        nb.append(stride)
        stride *= ne[i]
    span = ts + sum((n - 1) * s for n, s in zip(ne, [ts, *nb], strict=True))
    root = t.new_tensor(type_, (span // ts + offset,), "root")
    view = t.view(root, ne, nb, offset * ts)
    rec("view", t.tensor_info(view))
    rec("view nbytes", t.nbytes(view))


# native tensor.c's `free(ctx->mem_buffer)` deleted survived the mutation runs: no check freed a
# context that had allocated its own pool; many init/free rounds must leave the heap where it was
@check("CORE-6", rounds=st.just(1))
def contexts_release_their_own_pool(t: Target, rec: Recorder, rounds: int) -> None:
    """A round: init a context of 64 KiB with mem_buffer NULL and no_alloc false (it allocates its
    pool itself), make a 16-element F32 tensor in it (it gets the pool's memory: data set,
    buffer NULL), ggml_free. On a C target many rounds through its C functions: the heap must
    not grow with them, ggml_free frees the pool it allocated (deterministic)."""
    from collections.abc import Callable
    from typing import Any

    from ._leaks import leaks

    for _ in range(rounds):
        x = t.new_tensor(int(GGMLType.F32), (16,), "x")
        rec("nbytes", t.nbytes(x))

    def make_round(c: Callable[[str], Any]) -> Callable[[], None]:
        ct: Any = t  # a C target: its cffi module and prefix
        init, free, new_1d = c("init"), c("free"), c("new_tensor_1d")
        params = ct.ffi.new(f"struct {ct.p}init_params *")
        params.mem_size = 64 * 1024
        params.mem_buffer = ct.ffi.NULL
        params.no_alloc = False

        def one_round() -> None:
            ctx = init(params[0])
            if ctx == ct.ffi.NULL:
                raise AssertionError("init returned NULL in a round")
            x = new_1d(ctx, int(GGMLType.F32), 16)
            if x.data == ct.ffi.NULL or x.buffer != ct.ffi.NULL:
                raise AssertionError("a tensor of an allocating context did not get the pool's memory (CORE-6)")
            free(ctx)

        return one_round

    rec("the heap grows with the rounds", leaks(t, make_round))


# --- ggml_init's own pool (CORE-79) ----------------------------------------------------------------

SIZE_MAX = 2**64 - 1
#: pool sizes at CORE-79's edges: the largest whose rounding does not wrap (no host gives it), the
#: first that wraps to 0 and the last, one beyond any address space (a pool a host gives is CORE-6's)
POOL_SIZES = (SIZE_MAX - 15, SIZE_MAX - 14, SIZE_MAX, 2**48)


@example(mem_size=SIZE_MAX)
@example(mem_size=SIZE_MAX - 14)
@example(mem_size=SIZE_MAX - 15)
@check("CORE-79", mem_size=st.sampled_from(POOL_SIZES))
def init_aborts_without_its_pool(t: Target, rec: Recorder, mem_size: int) -> None:
    """ggml_init with mem_buffer NULL and `mem_size`: a size whose rounding to 16 wraps to 0
    (rc.8's allocator returns NULL for 0 bytes), or one no host gives, aborts
    "ctx->mem_buffer != NULL" (deterministic at the edges)."""
    t.context_init(mem_size)
