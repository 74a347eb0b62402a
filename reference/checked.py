"""The model's API boundary: arguments of the wrong type and objects used after they were freed.

`@checked` reads a public function's annotations and refuses, before the function runs, an
argument that is not of the annotated type (TypeError: rc.8 cannot even be called that way) and
a model object that was freed (`UseAfterFree`: rc.8 would read freed memory). An object is dead
when it was freed itself, or when what it depends on was: a tensor dies with its context, with
the buffer it was placed in, and with its root (a view's view_src).

The checks run on every call into the model, the model's calls of its own functions included
(about nine million in a `ggspec check --size ci`), so each function's checks are read from its
annotations once, into a plan (`_compile`), and the plan's common cases are short: an argument
whose type passes whatever its value (an int, None for an optional) is let through on its type
alone, and an object of exactly the annotated class is tested for death by the flags of its
kind only; anything else takes the whole check. Which arguments pass and which raise, and what
they raise, is the same either way (tests/reference/test_checked_guard.py).

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
from typing import Any, NamedTuple, NoReturn, TypeVar

from .clauses import ModelOutOfMemory, UseAfterFree, undefined

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
    return _tensor_is_dead(value)


def _tensor_is_dead(t: Any) -> bool:
    """`_tensor_dead(t) is not None`, as a loop."""
    while True:
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


class Rule(NamedTuple):
    """The check of one parameter. `passes`: the exact types of argument that `check` would
    pass whatever their value (None where None will do, int, an IntEnum once met, ...); the
    wrapper lets those through without calling `check`. A model class is never among them: each
    of its objects may be dead."""

    passes: set[type]
    check: Check


def _always_int(cls: type) -> bool:
    """Whether every value of `cls` is an int for `_is_int`: a subclass of int (not bool) that
    keeps int's own __index__, as an IntEnum does."""
    return cls is not bool and issubclass(cls, int) and getattr(cls, "__index__", None) is int.__index__


def _rule_for(tp: object, fn: str) -> Rule | None:
    """The rule of one annotation, or None where there is nothing to check (object, Callable, ...)."""
    if tp is None or tp is type(None):
        return Rule({type(None)}, lambda name, v: None if v is None else _refuse(fn, name, "None", v))
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        parts = [p for p in typing.get_args(tp) if p is not type(None)]
        if len(parts) != 1:
            return None
        one = _rule_for(parts[0], fn)
        if one is None:
            return None
        # None joins the types that pass (a fresh set, this rule's own), so that `check` only
        # ever sees the other values
        one.passes.add(type(None))
        return one
    if origin in (list, collections.abc.Sequence):
        (item,) = typing.get_args(tp) or (object,)
        inner = _rule_for(item, fn)

        def seq(name: str, v: object) -> None:  # a tuple will do for a list, as an array in C
            if isinstance(v, (str, bytes)) or not isinstance(v, collections.abc.Sequence):
                _refuse(fn, name, "a sequence", v)
            # a caller's list or tuple has its items checked; a sequence the model made (the
            # scheduler's tables, say) holds its own types by construction, and walking it on
            # every call made the suite's scheduler checks 80% slower
            if inner is not None and type(v) in (list, tuple):
                item_passes, item_check = inner
                for x in v:
                    if type(x) not in item_passes:
                        item_check(f"an item of {name}", x)

        return Rule(set() if inner is not None else {list, tuple}, seq)
    if isinstance(tp, type) and getattr(tp, "_is_protocol", False):
        return _protocol_rule(tp, fn)
    if not isinstance(tp, type) or tp is object:
        return None
    if tp is bool:
        return Rule({bool}, lambda name, v: None if isinstance(v, bool) else _refuse(fn, name, "a bool", v))
    if tp is int or (issubclass(tp, enum.Enum) and issubclass(tp, int)):
        passes: set[type] = {int}

        def an_int(name: str, v: object) -> None:
            if not _is_int(v):
                _refuse(fn, name, "an int", v)
            if _always_int(type(v)):  # every value of its type is an int: the next one passes unexamined
                passes.add(type(v))

        return Rule(passes, an_int)
    if tp is float:  # an int will do, as in C
        return Rule({int, float}, lambda name, v: None if isinstance(v, (int, float)) and not isinstance(v, bool)
                    else _refuse(fn, name, "real", v))
    return _object_rule(tp, fn)


def _object_rule(tp: type, fn: str) -> Rule:
    """An object of class `tp` that is not dead. An object of `tp` itself takes a short way,
    the flags `is_dead` reads for its kind; a subclass's (or a wrong type's) the whole check."""

    def obj(name: str, v: object) -> None:
        if not isinstance(v, tp):
            _refuse(fn, name, f"a {tp.__name__}", v)
        if is_dead(v):
            _refuse_dead(v)

    if tp in (str, bytes):  # a str or bytes itself has no attributes, so it is never dead
        return Rule({tp}, obj)
    kind = _kinds.get(tp)
    kind = _kind(tp) if kind is None else kind

    def flagged(name: str, v: object) -> None:  # dead only when freed itself (a buffer, a context, ...)
        if type(v) is not tp:
            obj(name, v)
        elif getattr(v, "freed", False) is True:
            _refuse_dead(v)

    def tensor(name: str, v: object) -> None:  # dead with its context, its buffer or its view_src
        if type(v) is not tp:
            obj(name, v)
            return
        t: Any = v
        if getattr(t, "freed", False) is True or t.ctx.freed:
            _refuse_dead(t)
        buffer, src = t.buffer, t.view_src
        if (buffer is not None and buffer.freed) or (src is not None and _tensor_is_dead(src)):
            _refuse_dead(t)

    return Rule(set(), flagged if kind == _OTHER else tensor if kind == _TENSOR else obj)


def _protocol_rule(tp: type, fn: str) -> Rule | None:
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
        for m in members:
            if not hasattr(v, m):
                _refuse(fn, name, f"a {tp.__name__} (with {', '.join(members)})", v)
        if is_dead(v):
            _refuse_dead(v)

    return Rule(set(), has_members)


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


#: (positional index, name, the types that pass unexamined, check) of each checked parameter;
#: the rule by keyword
Plan = tuple[tuple[tuple[int, str, set[type], Check], ...], dict[str, Rule]]


def _compile(fn: Callable[..., object]) -> tuple[Plan, bool]:
    """The plan of `fn`, and whether it is final (False: an annotation named a class whose
    module is not imported yet, so the plan skips that parameter for now)."""
    namespace: dict[str, object] | None = None
    final = True
    positional: list[tuple[int, str, set[type], Check]] = []
    by_name: dict[str, Rule] = {}
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
        rule = _rule_for(tp, fn.__qualname__)
        if rule is None:
            continue
        by_name[name] = rule
        positional.append((i, name, *rule))  # as zip(parameters, args) pairs them
    return (tuple(positional), by_name), final


#: the plans not compiled yet (compile_all compiles them: a process about to fork does it once)
_uncompiled: list[Callable[[], Plan]] = []


def compile_all() -> None:
    """Compile every checked function's plan now (else each is compiled at its first call)."""
    while _uncompiled:
        _uncompiled.pop()()


def checked(fn: F) -> F:
    """Check the arguments of a public model function against its annotations (see the module)."""
    plan: Plan | None = None  # set once final (see _compile)

    def make_plan() -> Plan:
        nonlocal plan
        if plan is not None:
            return plan
        made, final = _compile(fn)
        if final:
            plan = made
        return made

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        positional, by_name = plan if plan is not None else make_plan()
        n = len(args)
        for i, name, passes, check in positional:
            if i >= n:
                break
            value = args[i]
            if type(value) not in passes:
                check(name, value)
        if kwargs:
            for name, value in kwargs.items():
                rule = by_name.get(name)
                if rule is not None and type(value) not in rule.passes:
                    rule.check(name, value)
        try:
            return fn(*args, **kwargs)
        except MemoryError as exc:  # the model's own memory ran out: typed, and said to be ggspec's
            if isinstance(exc, ModelOutOfMemory):
                raise
            raise ModelOutOfMemory(f"{fn.__module__.rpartition('.')[2]}.{fn.__qualname__}: the reference ran out of "
                                   "memory modelling this call (ggspec's own limit: its process's memory, ulimit -v; "
                                   "not a verdict on the program modelled)") from exc

    _uncompiled.append(make_plan)
    return typing.cast(F, wrapper)
