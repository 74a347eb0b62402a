"""The model's API boundary: arguments of the wrong type and objects used after they were freed.

`@checked` reads a public function's annotations and refuses, before the function runs, an
argument that is not of the annotated type (TypeError: rc.8 cannot even be called that way) and
a model object that was freed (`UseAfterFree`: rc.8 would read freed memory). An object is dead
when it was freed itself, or when what it depends on was: a tensor dies with its context, with
the buffer it was placed in, and with its root (a view's view_src).

`nonnull` and `instance` are the model's own invariants as explicit checks (a bare `assert`
disappears under ``python -O``) that hand on the value checked, narrowed for the type checker:
where one fails, the call reached a state in which rc.8 would dereference NULL or misread
another type's memory, and it is reported as undefined behaviour against the clause whose rule
made the value certain. (Where an assert-kind clause itself makes it certain, the model uses
`clauses.required`, which raises that clause's SpecViolation.)
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import operator
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from .clauses import UseAfterFree, undefined

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., object])

Check = Callable[[str, object], None]

#: the clause a use after free of each kind of model object is reported against
FREE_CLAUSES = {
    "Buffer": "BUF-4", "Backend": "BACK-2", "Context": "CORE-6", "Tensor": "CORE-6",
    "Sched": "SCHED-26", "Tallocr": "ALLOC-9", "Gallocr": "ALLOC-10",
}


def nonnull(value: T | None, clause_id: str, what: str) -> T:
    """`value`, which the model relies on being set here; UndefinedBehaviour (rc.8 dereferences
    NULL) when it is None."""
    if value is None:
        undefined(clause_id, f"{what} is NULL")
    return value


def instance(value: object, cls: type[T], clause_id: str, what: str) -> T:
    """`value` as a `cls`; UndefinedBehaviour (rc.8 misreads another type's context) otherwise."""
    if not isinstance(value, cls):
        undefined(clause_id, f"{what} is a {type(value).__name__}, not a {cls.__name__}")
    return value


#: the kind of each class whose objects the guard has seen: what besides its own `freed` flag
#: makes one dead (a graph: its context; a tensor: its context, buffer and view_src)
_OTHER, _GRAPH, _TENSOR = 0, 1, 2
_kinds: dict[type, int] = {}


def _is_model_class(cls: type, module: str, name: str) -> bool:
    """Whether `cls` is (a subclass of) the model's class `module.name`, read from its MRO, so
    that this module imports none of the modules whose objects it guards."""
    return any(c.__name__ == name and c.__module__ == f"{__package__}.{module}" for c in cls.__mro__)


def _kind(cls: type) -> int:
    kind = _OTHER
    if _is_model_class(cls, "tensor", "Tensor"):
        kind = _TENSOR
    elif cls.__name__ == "CGraph":
        kind = _GRAPH
    _kinds[cls] = kind
    return kind


def is_dead(value: object) -> bool:
    """Whether `dead_reason(value)` is not None, without composing the reason (flags read only:
    this runs on every argument of every model call)."""
    if getattr(value, "freed", False) is True:
        return True
    kind = _kinds.get(type(value))
    if kind is None:
        kind = _kind(type(value))
    if kind == _OTHER:
        return False
    if kind == _GRAPH:
        ctx = getattr(value, "ctx", None)
        return ctx is not None and getattr(ctx, "freed", False) is True
    t: Any = value
    while True:  # _tensor_dead, as a loop
        if t.ctx.freed:
            return True
        buffer = t.buffer
        if buffer is not None and buffer.freed:
            return True
        t = t.view_src
        if t is None:
            return False


def dead_reason(value: object) -> str | None:
    """Why a model object may no longer be used, or None while it lives."""
    if getattr(value, "freed", False) is True:
        return "it was freed"
    kind = _kinds.get(type(value))
    if kind is None:
        kind = _kind(type(value))
    if kind == _GRAPH:  # a graph lives in its context's memory
        ctx = getattr(value, "ctx", None)
        if ctx is not None and getattr(ctx, "freed", False) is True:
            return "its context was freed"
    if kind == _TENSOR:
        return _tensor_dead(value)
    return None


def _tensor_dead(t: Any) -> str | None:
    if t.ctx.freed:
        return "its context was freed"
    if t.buffer is not None and t.buffer.freed:
        return "its buffer was freed"
    if t.view_src is not None:
        why = _tensor_dead(t.view_src)
        if why is not None:
            return f"its view_src is dead ({why})"
    return None


def _refuse_dead(value: object) -> NoReturn:
    why = dead_reason(value)
    raise UseAfterFree(FREE_CLAUSES.get(type(value).__name__, "CORE-6"), f"{value!r} is used after {why}")


def require_live(value: T) -> T:
    """`value`, refused with UseAfterFree when it is dead."""
    if is_dead(value):
        _refuse_dead(value)
    return value


def _refuse(fn: str, name: str, want: str, value: object) -> NoReturn:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    raise TypeError(f"{fn}: {name} must be {want}, got {type(value).__name__} {text}")


def _is_int(value: object) -> bool:
    """An int (numpy's integers too), not a bool."""
    if type(value) is int:
        return True
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def _check_for(tp: object, fn: str) -> Check | None:
    """A check of one annotation, or None where there is nothing to check (object, Callable, ...)."""
    if tp is None or tp is type(None):
        return lambda name, v: None if v is None else _refuse(fn, name, "None", v)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        parts = [p for p in typing.get_args(tp) if p is not type(None)]
        if len(parts) != 1:
            return None
        one = _check_for(parts[0], fn)
        if one is None:
            return None
        return lambda name, v: None if v is None else one(name, v)
    if origin in (list, collections.abc.Sequence):
        (item,) = typing.get_args(tp) or (object,)
        inner = _check_for(item, fn)

        def seq(name: str, v: object) -> None:  # a tuple will do for a list, as an array in C
            if isinstance(v, (str, bytes)) or not isinstance(v, collections.abc.Sequence):
                _refuse(fn, name, "a sequence", v)
            # a caller's list or tuple has its items checked; a sequence the model made (the
            # scheduler's tables, say) holds its own types by construction, and walking it on
            # every call made the suite's scheduler checks 80% slower
            if inner is not None and type(v) in (list, tuple):
                for x in v:
                    inner(f"an item of {name}", x)

        return seq
    if isinstance(tp, type) and getattr(tp, "_is_protocol", False):
        return _protocol_check(tp, fn)
    if not isinstance(tp, type) or tp is object:
        return None
    if tp is bool:
        return lambda name, v: None if isinstance(v, bool) else _refuse(fn, name, "a bool", v)
    if tp is int or (issubclass(tp, enum.Enum) and issubclass(tp, int)):
        return lambda name, v: None if _is_int(v) else _refuse(fn, name, "an int", v)
    if tp is float:  # an int will do, as in C
        return lambda name, v: None if isinstance(v, (int, float)) and not isinstance(v, bool) else _refuse(fn, name, "real", v)

    def obj(name: str, v: object) -> None:
        if not isinstance(v, tp):
            _refuse(fn, name, f"a {tp.__name__}", v)
        if is_dead(v):
            _refuse_dead(v)

    return obj


def _protocol_check(tp: type, fn: str) -> Check | None:
    """A check that a value has the members a Protocol of the model names (its fields and
    properties): what the function reads from it."""
    members = sorted({
        name
        for c in tp.__mro__
        if getattr(c, "_is_protocol", False) and c is not typing.Protocol and c.__module__.startswith(str(__package__))
        for name in (*getattr(c, "__annotations__", {}), *vars(c))
        if not name.startswith("_")
    })
    if not members:
        return None

    def has_members(name: str, v: object) -> None:
        if not all(hasattr(v, m) for m in members):
            _refuse(fn, name, f"a {tp.__name__} (with {', '.join(members)})", v)
        if is_dead(v):
            _refuse_dead(v)

    return has_members


#: the model's modules whose classes annotations name (some only under TYPE_CHECKING there)
MODEL_MODULES = ("world", "types", "tensor", "buffer", "backend", "graph", "vdev", "alloc", "sched", "registry")


def _model_names() -> tuple[dict[str, object], bool]:
    """What the annotations of the model's modules name, read from those of them already
    imported (this module imports none: they all import it), and whether all were.

    A function runs only after the module defining it was imported, and an argument of a model
    class only exists once that class's module was; a plan compiled while some module was not
    yet imported is compiled again at the next call (see `_compile`)."""
    names: dict[str, object] = {}
    complete = True
    for name in MODEL_MODULES:
        module = sys.modules.get(f"{__package__}.{name}")
        if module is None:
            complete = False
            continue
        names.update({k: v for k, v in vars(module).items() if isinstance(v, type)})
    names.update(vars(collections.abc))
    return names, complete


#: (positional index, name, check) of each checked parameter; check by keyword
Plan = tuple[tuple[tuple[int, str, Check], ...], dict[str, Check]]


def _compile(fn: Callable[..., object]) -> tuple[Plan, bool]:
    """The plan of `fn`, and whether it is final (False: an annotation named a class whose
    module is not imported yet, so the plan skips that parameter for now)."""
    namespace: dict[str, object] | None = None
    final = True
    positional: list[tuple[int, str, Check]] = []
    by_name: dict[str, Check] = {}
    for i, (name, param) in enumerate(inspect.signature(fn).parameters.items()):
        ann = param.annotation
        if not (isinstance(ann, str) and ann):
            continue
        if namespace is None:
            names, complete = _model_names()
            namespace = {**names, **fn.__globals__}
        try:
            tp = eval(ann, namespace)  # noqa: S307 - our own annotations
        except NameError:  # a class of a module not imported yet: no argument can be one so far
            final = final and complete
            continue
        except Exception:  # noqa: BLE001 - an annotation we cannot resolve is not checked
            continue
        check = _check_for(tp, fn.__qualname__)
        if check is None:
            continue
        by_name[name] = check
        positional.append((i, name, check))  # as zip(parameters, args) pairs them
    return (tuple(positional), by_name), final


#: the plans not compiled yet (compile_all compiles them: a process about to fork does it once)
_uncompiled: list[Callable[[], Plan]] = []


def compile_all() -> None:
    """Compile every checked function's plan now (else each is compiled at its first call)."""
    while _uncompiled:
        _uncompiled.pop()()


def checked(fn: F) -> F:
    """Check the arguments of a public model function against its annotations (see the module)."""
    compiled: list[Plan] = []

    def plan() -> Plan:
        if compiled:
            return compiled[0]
        made, final = _compile(fn)
        if final:
            compiled.append(made)
        return made

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        positional, by_name = compiled[0] if compiled else plan()
        n = len(args)
        for i, name, check in positional:
            if i >= n:
                break
            check(name, args[i])
        if kwargs:
            for name, value in kwargs.items():
                named = by_name.get(name)
                if named is not None:
                    named(name, value)
        return fn(*args, **kwargs)

    _uncompiled.append(plan)
    return typing.cast(F, wrapper)
