"""The model's use-after-free guard (reference/checked.py): its fast flag test `is_dead` says dead
exactly when `dead_reason` gives a reason, and a checked call refuses a dead argument with that
reason, for every way an object dies (freed itself, its context, its buffer, its view_src's)."""

from __future__ import annotations

import pytest
from ggspec.reference import checked, tensor
from ggspec.reference.alloc import alloc_ctx_tensors_from_buft
from ggspec.reference.buffer import buffer_free
from ggspec.reference.clauses import UseAfterFree
from ggspec.reference.cpu import cpu_buffer_type
from ggspec.reference.graph import new_graph
from ggspec.reference.tensor import Context
from ggspec.reference.types import GGMLType
from graph_helpers import world


def _states() -> list[tuple[str, object, str | None]]:
    """(what, object, the reason dead_reason must give) for live and dead objects of each kind."""
    w = world()
    out: list[tuple[str, object, str | None]] = []

    ctx = Context(w)
    t = ctx.new_tensor(GGMLType.F32, [8])
    view = ctx.view(t, [4], [], 0)
    graph = new_graph(ctx)
    out += [("live tensor", t, None), ("live view", view, None), ("live graph", graph, None), ("live context", ctx, None)]

    other = Context(w)  # a view in a live context of a tensor whose context dies
    root = other.new_tensor(GGMLType.F32, [8])
    view_elsewhere = ctx.view(root, [2], [], 4)
    tensor.free(other)
    out += [("tensor of a freed context", root, "its context was freed"),
            ("view of a tensor of a freed context", view_elsewhere, "its view_src is dead (its context was freed)"),
            ("freed context", other, "it was freed")]

    buffers = []
    for _ in range(2):
        placed = Context(w)
        in_buffer = placed.new_tensor(GGMLType.F32, [8])
        buffer = alloc_ctx_tensors_from_buft(placed, cpu_buffer_type(w))
        assert buffer is not None
        buffers.append((in_buffer, buffer))
    out.append(("tensor of a live buffer", buffers[0][0], None))
    in_buffer, buffer = buffers[1]
    buffer_free(buffer)
    out += [("tensor of a freed buffer", in_buffer, "its buffer was freed"), ("freed buffer", buffer, "it was freed")]

    gone = Context(w)
    gone_graph = new_graph(gone)
    tensor.free(gone)
    out.append(("graph of a freed context", gone_graph, "its context was freed"))
    return out


STATES = _states()


@pytest.mark.parametrize(("what", "obj", "reason"), STATES, ids=[s[0] for s in STATES])
def test_is_dead_agrees_with_dead_reason(what: str, obj: object, reason: str | None) -> None:
    assert checked.dead_reason(obj) == reason, what
    assert checked.is_dead(obj) is (reason is not None), what
    if reason is None:
        assert checked.require_live(obj) is obj
    else:
        with pytest.raises(UseAfterFree, match=f"is used after {reason.replace('(', '[(]').replace(')', '[)]')}"):
            checked.require_live(obj)


def test_the_states_cover_every_kind() -> None:
    reasons = {reason for _, _, reason in STATES}
    assert reasons == {None, "it was freed", "its context was freed", "its buffer was freed",
                       "its view_src is dead (its context was freed)"}


def test_a_checked_call_refuses_a_dead_argument_and_a_wrong_type() -> None:
    w = world()
    ctx = Context(w)
    t = ctx.new_tensor(GGMLType.F32, [8])
    graph = new_graph(ctx)
    from ggspec.reference.graph import build_forward_expand

    with pytest.raises(TypeError, match="must be a Tensor"):
        build_forward_expand(graph, "not a tensor")  # type: ignore[arg-type]
    tensor.free(ctx)
    with pytest.raises(UseAfterFree, match="used after its context was freed"):
        build_forward_expand(graph, t)
    checked.compile_all()  # compiling every plan ahead changes nothing
    with pytest.raises(UseAfterFree, match="used after its context was freed"):
        build_forward_expand(g=graph, tensor=t)
