"""The model's use-after-free guard (reference/checked.py): its fast flag test `is_dead` says dead
exactly when `dead_reason` gives a reason, and a checked call refuses a dead argument with that
reason, for every way an object dies (freed itself, its context, its buffer, its view_src's)."""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from ggspec.reference import checked, tensor
from ggspec.reference.alloc import alloc_ctx_tensors_from_buft
from ggspec.reference.buffer import Buffer, buffer_free
from ggspec.reference.clauses import UseAfterFree
from ggspec.reference.cpu import cpu_buffer_type
from ggspec.reference.graph import CGraph, new_graph
from ggspec.reference.tensor import Context, Tensor
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


def _imports_in_functions(path: Path) -> list[str]:
    """`from .module` imports made inside a function or under TYPE_CHECKING, as `module`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        inner = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
            isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        if not inner:
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.level == 1 and sub.module is not None:
                out.append(sub.module)
    return out


def test_the_guard_imports_no_model_module() -> None:
    """checked.py reads the model's classes from the modules already imported (every model
    module imports it, so importing one of them here would be a cycle)."""
    path = Path(checked.__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
    assert imported == {"clauses"}, imported


def test_deferred_imports_are_only_import_cycles() -> None:
    """An import inside a function or under TYPE_CHECKING is there only because the module it
    names imports this one back; every other import is at the top."""
    folder = Path(checked.__file__).parent
    top = {p.stem: {n.module for n in ast.parse(p.read_text(encoding="utf-8")).body
                    if isinstance(n, ast.ImportFrom) and n.level == 1}
           for p in folder.glob("*.py")}

    def reaches(start: str, goal: str) -> bool:  # through top-level imports
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m == goal:
                return True
            if m not in seen:
                seen.add(m)
                todo.extend(top.get(m, set()))
        return False

    for path in folder.glob("*.py"):
        for module in _imports_in_functions(path):
            assert reaches(module, path.stem), f"{path.name} imports .{module} late, but .{module} never imports {path.stem}"


def test_a_plan_made_before_a_model_module_is_imported_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checked function first called while a model module its annotations name is not
    imported yet (no object of that class can exist then) skips that parameter's check for
    that call only: once the module is imported, the next call checks it."""
    import ggspec.reference.sched as sched_module

    monkeypatch.delitem(sys.modules, sched_module.__name__)

    @checked.checked
    def takes(s: Sched) -> None:  # noqa: F821 - resolved by the guard from sys.modules
        pass

    takes(1)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, sched_module.__name__, sched_module)
    with pytest.raises(TypeError, match="s must be a Sched"):
        takes(1)  # type: ignore[arg-type]


# --- a checked call, by every way of passing an argument, against every state above ---------------
# (the guard takes a short way for an object of the annotated class itself and for the plain
# types that need no more look; these say it refuses and passes what the whole check does)

@checked.checked
def _takes_tensor(t: Tensor, maybe: Tensor | None = None, many: Sequence[Tensor] = ()) -> None:
    pass


@checked.checked
def _takes_context(c: Context, maybe: Context | None = None, many: Sequence[Context] = ()) -> None:
    pass


@checked.checked
def _takes_graph(g: CGraph, maybe: CGraph | None = None, many: Sequence[CGraph] = ()) -> None:
    pass


@checked.checked
def _takes_buffer(b: Buffer, maybe: Buffer | None = None, many: Sequence[Buffer] = ()) -> None:
    pass


_TAKERS = {Tensor: _takes_tensor, Context: _takes_context, CGraph: _takes_graph, Buffer: _takes_buffer}

_WAYS = {
    "positional": lambda f, obj: f(obj),
    "by keyword": lambda f, obj: f(**{next(iter(inspect.signature(f).parameters)): obj}),
    "optional, positional": lambda f, obj: f(obj, obj),
    "optional, by keyword": lambda f, obj: f(obj, maybe=obj),
    "in a list": lambda f, obj: f(obj, None, [obj]),
    "in a tuple, by keyword": lambda f, obj: f(obj, many=(obj, obj)),
}


class _SubTensor(Tensor):
    """A subclass: it takes the guard's whole check, not the short way of Tensor itself."""


@pytest.mark.parametrize("way", list(_WAYS))
@pytest.mark.parametrize(("what", "obj", "reason"), STATES, ids=[s[0] for s in STATES])
def test_a_checked_call_refuses_exactly_the_dead(what: str, obj: object, reason: str | None, way: str) -> None:
    takes = _TAKERS[type(obj)]
    if reason is None:
        _WAYS[way](takes, obj)
        return
    with pytest.raises(UseAfterFree) as got:
        _WAYS[way](takes, obj)
    assert got.value.clause_id == checked.FREE_CLAUSES.get(type(obj).__name__, "CORE-6"), what
    assert str(got.value).endswith(f"is used after {reason}"), what


def test_the_short_ways_refuse_what_the_whole_check_refuses() -> None:
    w = world()
    ctx = Context(w)
    t = ctx.new_tensor(GGMLType.F32, [8])
    sub = _SubTensor(ctx, GGMLType.F32, [8, 1, 1, 1], [4, 32, 32, 32])
    _takes_tensor(sub, sub, [sub])
    for wrong in (ctx, 1, None, "t"):
        with pytest.raises(TypeError, match="t must be a Tensor"):
            _takes_tensor(wrong)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="maybe must be a Tensor"):
        _takes_tensor(t, ctx)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an item of many must be a Tensor"):
        _takes_tensor(t, None, [t, None])  # type: ignore[list-item]
    tensor.free(ctx)
    with pytest.raises(UseAfterFree, match="used after its context was freed"):
        _takes_tensor(sub)
    with pytest.raises(UseAfterFree, match="used after its context was freed"):
        _takes_tensor(many=[sub], t=sub)


@checked.checked
def _takes_ints(n: int, kind: GGMLType, maybe: int | None = None, many: Sequence[int] = (), x: float = 0.0,
                s: str = "", flag: bool = False) -> None:
    pass


def test_plain_arguments_after_their_type_was_met() -> None:
    """An int type passes the int checks without another look once met (an IntEnum, as GGMLType):
    bool never does, nor a float, before or after; numpy's integers pass as ints, as in C."""
    for _ in range(2):  # the first round meets each type, the second takes the short way
        _takes_ints(1, GGMLType.F16, GGMLType.Q4_0, [GGMLType.F32, 2, np.int64(3)], 1, "s", True)
        _takes_ints(np.int32(1), 0, None, (np.uint8(2),), 0.5)
        _takes_ints(n=GGMLType.F32, kind=GGMLType.F32, maybe=np.int64(0), many=[1], x=2.5, s="", flag=False)
        for bad, match in ((True, "n must be an int"), (1.0, "n must be an int"), ("1", "n must be an int")):
            with pytest.raises(TypeError, match=match):
                _takes_ints(bad, 0)
        with pytest.raises(TypeError, match="maybe must be an int"):
            _takes_ints(1, 0, False)
        with pytest.raises(TypeError, match="an item of many must be an int"):
            _takes_ints(1, 0, None, [GGMLType.F32, True])
        for bad_real in (True, np.float32(0.5)):  # a numpy float is no Python float
            with pytest.raises(TypeError, match="x must be real"):
                _takes_ints(1, 0, x=bad_real)
        with pytest.raises(TypeError, match="s must be a str"):
            _takes_ints(1, 0, s=b"s")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="flag must be a bool"):
            _takes_ints(1, 0, flag=1)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="many must be a sequence"):
            _takes_ints(1, 0, many="12")
