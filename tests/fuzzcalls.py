"""Random calls with hostile arguments, for the fuzz tests of native/'s wrapper and of reference/.

One batch is a list of abstract calls: a function index and, per parameter, a *mode* and a
number. The mode says what to pass: a live object of the kind the parameter wants (``GOOD``),
an object freed earlier or killed with what it depends on (``FREED``), a live object of another
kind (``WRONG``), or a hostile value (``HOSTILE``: None, negative or huge ints, wrong Python types,
read-only memory). `run_batch` plays a batch against one `Api` (native's wrapper or the
reference) and tallies how every call ended. Nothing is concrete until a batch runs, so the same
batch replays on either API and hypothesis can shrink it.

The generator keeps its own model of what depends on what, as the spec says it: freeing a
context kills its tensors and the views of them; freeing a buffer kills the tensors placed in
it and their views; freeing a backend kills the backend only. A call that returns normally with
a dead object among its arguments is a *silently accepted use-after-free*; one that returns
normally with a live object of the wrong kind is an *accepted wrong kind*.

Run as a script for figures: ``python tests/fuzzcalls.py native --calls 20000`` prints the
outcome counts (each batch of 50 calls in a forked worker; segfaults and aborts counted).
"""

from __future__ import annotations

import os
import random
import re
import signal
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

GOOD, FREED, WRONG, HOSTILE = 0, 1, 2, 3
MODES = (GOOD,) * 7 + (FREED, WRONG, HOSTILE)
BATCH = 50
MAX_PARAMS = 5

#: kinds of object the API hands out; "host" is host memory the caller owns
OBJECT_KINDS = ("buft", "buffer", "backend", "ctx", "tensor", "host")


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque object>"


HOSTILE_VALUES: tuple[Any, ...] = (
    None, -1, -(2**63), 2**63, 2**64 - 1, 2**64, 2**64 - 64, 2**40 + 1, 1.5, "x", b"\x00" * 64,
    memoryview(b"\x00" * 64), _Opaque(), [1, 2], True, float("nan"),
)

_SIZES = (0, 1, 4, 8, 16, 32, 64, 100, 128, 256, 1024)
_OFFSETS = (0, 0, 1, 4, 8, 16, 32, 64)
_EXTENTS = (1, 1, 2, 3, 4, 8, 32)
_STRIDES = (2, 4, 8, 16, 32, 64, 128, 1024, 4096)
_NAMES = ("CPU", "VDEV", "", "CPU:x", "nope", "x" * 200)


def good_scalar(kind: str, k: int) -> Any:
    """A well-formed value for a scalar parameter kind, chosen by `k`."""
    from ggspec.reference.types import GGMLType
    from ggspec.reference.vdev import VDevParams

    if kind == "size":
        return _SIZES[k % len(_SIZES)]
    if kind == "offset":
        return _OFFSETS[k % len(_OFFSETS)]
    if kind == "byte":
        return k % 256
    if kind == "payload":
        return bytes((k + i) % 256 for i in range(_SIZES[k % 7]))
    if kind == "type":
        types = (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.I32, GGMLType.I8)
        return types[k % len(types)]
    if kind == "ne":
        return [_EXTENTS[(k >> (3 * i)) % len(_EXTENTS)] for i in range(1 + k % 4)]
    if kind == "nb":
        return [_STRIDES[(k >> (4 * i)) % len(_STRIDES)] for i in range(k % 4)]
    if kind == "usage":
        return k % 2
    if kind == "name":
        return _NAMES[k % len(_NAMES)]
    if kind == "index":
        return k % 3
    if kind == "nthreads":
        return 1 + k % 8
    if kind == "memsize":
        return (1024, 1 << 16, 1 << 20, 0)[k % 4]
    if kind == "bool":
        return bool(k % 2)
    if kind == "vparams":
        return VDevParams(lazy=bool(k % 2), async_entries=bool(k & 2), alloc_pad=k % 3 * 8)
    raise ValueError(f"no scalar kind {kind!r}")


@dataclass(frozen=True)
class Fn:
    """One API function: its parameter kinds, the kind it returns, the parameter it frees."""

    name: str
    params: tuple[str, ...]
    call: Callable[..., Any]
    returns: str | None = None
    frees: int | None = None


def plain(name: str, params: str, call: Callable[..., Any], returns: str | None = None,
          frees: int | None = None) -> Fn:
    """An Fn for a function that takes no per-batch state (the state is dropped before the call)."""
    fn = Fn(name, tuple(params.split()), lambda _state, *a: call(*a), returns, frees)
    fn.call.__wrapped__ = call  # type: ignore[attr-defined]
    return fn


#: the functions both wrappers have, in the module of the same name in ggspec.native and
#: ggspec.reference: (module, function, parameter kinds, kind returned, parameter freed). Where an
#: API calls one differently (the model's World, its host memory), its own Fn overrides the row.
COMMON = (
    ("", "host_alloc", "size bool", "host", None),
    ("cpu", "cpu_init", "", "backend", None),
    ("cpu", "cpu_buffer_type", "", "buft", None),
    ("vdev", "vdev_init", "vparams", "backend", None),
    ("backend", "backend_name", "backend", None, None),
    ("backend", "backend_free", "backend", None, 0),
    ("backend", "backend_get_default_buffer_type", "backend", "buft", None),
    ("backend", "backend_alloc_buffer", "backend size", "buffer", None),
    ("backend", "backend_get_alignment", "backend", None, None),
    ("backend", "backend_synchronize", "backend", None, None),
    ("backend", "backend_supports_op", "backend tensor", None, None),
    ("buffer", "buft_name", "buft", None, None),
    ("buffer", "buft_alloc_buffer", "buft size", "buffer", None),
    ("buffer", "buft_get_alignment", "buft", None, None),
    ("buffer", "buft_get_alloc_size", "buft tensor", None, None),
    ("buffer", "buft_supports_backend", "buft backend", None, None),
    ("buffer", "buft_is_host", "buft", None, None),
    ("buffer", "buffer_name", "buffer", None, None),
    ("buffer", "buffer_free", "buffer", None, 0),
    ("buffer", "buffer_get_base", "buffer", None, None),
    ("buffer", "buffer_get_size", "buffer", None, None),
    ("buffer", "buffer_get_alignment", "buffer", None, None),
    ("buffer", "buffer_get_alloc_size", "buffer tensor", None, None),
    ("buffer", "buffer_clear", "buffer byte", None, None),
    ("buffer", "buffer_is_host", "buffer", None, None),
    ("buffer", "buffer_set_usage", "buffer usage", None, None),
    ("buffer", "buffer_get_type", "buffer", "buft", None),
    ("buffer", "buffer_reset", "buffer", None, None),
    ("tensor", "init", "memsize bool", "ctx", None),
    ("tensor", "free", "ctx", None, 0),
    ("tensor", "new_tensor", "ctx type ne", "tensor", None),
    ("tensor", "new_tensor", "ctx type ne", "tensor", None),
    ("tensor", "view", "ctx tensor ne nb offset", "tensor", None),
    ("tensor", "nbytes", "tensor", None, None),
    ("tdata", "tensor_alloc", "buffer tensor offset", None, None),
    ("tdata", "tensor_alloc", "buffer tensor offset", None, None),
    ("tdata", "view_init", "buffer tensor", None, None),
    ("tdata", "tensor_set", "tensor payload offset", None, None),
    ("tdata", "tensor_get", "tensor offset size", None, None),
    ("tdata", "tensor_set_async", "backend tensor host offset size", None, None),
    ("tdata", "tensor_get_async", "backend tensor host offset size", None, None),
    ("copy", "tensor_copy", "tensor tensor", None, None),
    ("copy", "tensor_copy_async", "backend tensor tensor", None, None),
    ("registry", "reg_get_count", "", None, None),
    ("registry", "reg_find_by_name", "name", None, None),
    ("registry", "reg_init_backend_from_str", "name", "backend", None),
    ("registry", "reg_get_name", "index", None, None),
    ("registry", "reg_init_backend", "index name", "backend", None),
    ("registry", "reg_get_default_buffer_type", "index", "buft", None),
    ("registry", "reg_alloc_buffer", "index size", "buffer", None),
    ("registry", "reg_register", "name initfn buft", None, None),
    ("cpu", "is_cpu", "backend", None, None),
    ("cpu", "cpu_set_n_threads", "backend nthreads", None, None),
    ("cpu", "cpu_buffer_from_ptr", "host size", "buffer", None),
    ("vdev", "vdev_read", "buffer offset size", None, None),
    ("vdev", "vdev_pending", "backend", None, None),
)


def common_fns(modules: dict[str, Any], own: dict[str, Callable[[str, str, str | None, int | None], Fn]]) -> list[Fn]:
    """COMMON's functions for one API: `modules` maps COMMON's module names to that API's modules;
    `own[name](name, params, returns, frees)` makes the Fn of a function the API calls its own way."""
    return [own[name](name, params, returns, frees) if name in own
            else plain(name, params, getattr(modules[module], name), returns, frees)
            for module, name, params, returns, frees in COMMON]


@dataclass
class Api:
    """An API to fuzz: its functions, `fresh()` giving the per-batch state passed first to each call,
    and the exception types that count as typed."""

    name: str
    fns: Sequence[Fn]
    fresh: Callable[[], Any]
    typed: tuple[type[BaseException], ...]
    #: the API's own scalar kinds: kind -> the good value chosen by k
    scalars: dict[str, Callable[[int], Any]] = field(default_factory=dict)
    #: the kinds of object it hands out
    kinds: tuple[str, ...] = OBJECT_KINDS


Call = tuple[int, tuple[tuple[int, int], ...]]


@dataclass
class Tally:
    """How the calls of one batch (or many) ended."""

    outcomes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, outcome: str, detail: str = "") -> None:
        self.outcomes[outcome] += 1
        if detail and len(self.examples.setdefault(outcome, [])) < 5:
            self.examples[outcome].append(detail)

    def merge(self, other: Tally) -> None:
        self.outcomes.update(other.outcomes)
        for k, v in other.examples.items():
            mine = self.examples.setdefault(k, [])
            mine.extend(v[: 5 - len(mine)])

    def bad(self) -> int:
        return sum(self.outcomes[k] for k in ("untyped", "accepted_uaf", "accepted_wrong"))


class _Session:
    """The objects of one batch and what depends on what."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.state = api.fresh()
        self.live: dict[str, list[Any]] = {k: [] for k in api.kinds}
        self.dead: list[Any] = []
        self.dead_ids: set[int] = set()
        self.keep: list[Any] = []  # everything ever handed out stays referenced (ids stay unique)
        # tensor id -> (ctx, root tensor); tensor id -> buffer it was placed in
        self.tensor_info: dict[int, tuple[Any, Any]] = {}
        self.placed: dict[int, Any] = {}

    def pick(self, kind: str, mode: int, k: int) -> Any:
        if kind in self.live and mode == GOOD and self.live[kind]:
            return self.live[kind][k % len(self.live[kind])]
        if kind not in self.live and mode == GOOD:
            own = self.api.scalars.get(kind)
            return own(k) if own is not None else good_scalar(kind, k)
        if mode == FREED and self.dead:
            return self.dead[k % len(self.dead)]
        if mode == WRONG:
            others = [o for kd in self.live if kd != kind and kd != "host" for o in self.live[kd]]
            if others:
                return others[k % len(others)]
        return HOSTILE_VALUES[k % len(HOSTILE_VALUES)]

    def _kill(self, obj: Any) -> None:
        if id(obj) in self.dead_ids:
            return
        self.dead_ids.add(id(obj))
        self.dead.append(obj)
        for objs in self.live.values():
            for i, o in enumerate(objs):
                if o is obj:
                    del objs[i]
                    break

    def record(self, fn: Fn, args: list[Any], result: Any) -> None:
        """Update the model after a call that returned normally."""
        if fn.returns in ("tensor", "graph") and fn.params[:1] == ("ctx",) and result is not None:
            ctx, parent = args[0], (args[1] if fn.name == "view" else None)
            root = result if parent is None else self.tensor_info.get(id(parent), (None, parent))[1]
            self.tensor_info[id(result)] = (ctx, root)
        if fn.name in ("tensor_alloc", "view_init"):
            self.placed[id(args[1])] = args[0]
        if fn.returns is not None and result is not None and id(result) not in self.dead_ids:
            self.keep.append(result)
            if all(o is not result for o in self.live[fn.returns]):
                self.live[fn.returns].append(result)
        if fn.frees is not None and args[fn.frees] is not None:
            gone = args[fn.frees]
            self._kill(gone)
            for t in [*self.live["tensor"], *self.live.get("graph", [])]:
                ctx, root = self.tensor_info.get(id(t), (None, t))
                root_ctx = self.tensor_info.get(id(root), (None, root))[0]
                if gone is ctx or gone is root_ctx or self.placed.get(id(t)) is gone or self.placed.get(id(root)) is gone \
                        or id(root) in self.dead_ids:
                    self._kill(t)

    def play(self, call: Call, tally: Tally) -> None:
        fn = self.api.fns[call[0] % len(self.api.fns)]
        modes = call[1]
        args = [self.pick(kind, *modes[i % len(modes)]) for i, kind in enumerate(fn.params)]
        # an "anything" parameter (annotated object or a bare type variable: clauses.required's value)
        # takes whatever it is given: passing it a freed object or any kind of object is no misuse
        uaf = any(id(a) in self.dead_ids for a, kind in zip(args, fn.params, strict=True)
                  if a is not None and kind != "anything")
        wrong = any(
            modes[i % len(modes)][0] == WRONG and not uaf and kind != "anything" and _kind_of(self, a) not in (None, kind)
            for i, (kind, a) in enumerate(zip(fn.params, args, strict=True))
        )
        where = f"{fn.name}({', '.join(_short(a) for a in args)})"
        try:
            result = fn.call(self.state, *args)
        except self.api.typed as exc:
            tally.add("typed")
            del exc
            return
        except Exception as exc:  # noqa: BLE001 - an untyped exception is what we count
            tally.add("untyped", f"{where}: {type(exc).__name__}: {exc}")
            return
        if uaf:
            tally.add("accepted_uaf", where)
        elif wrong:
            tally.add("accepted_wrong", where)
        else:
            tally.add("ok")
        self.record(fn, args, result)


def _kind_of(session: _Session, obj: Any) -> str | None:
    for kind, objs in session.live.items():
        if any(o is obj for o in objs):
            return kind
    return None


def _short(a: Any) -> str:
    text = repr(a)
    return text if len(text) <= 60 else text[:57] + "..."


def run_batch(api: Api, calls: Sequence[Call]) -> Tally:
    """Play `calls` against `api` in this process; the tally of how each call ended."""
    from ggspec.conformance.engine.isolate import report

    session = _Session(api)
    tally = Tally()
    for i, call in enumerate(calls):
        report(i)
        session.play(call, tally)
    return tally


def random_batch(rng: random.Random, n: int = BATCH) -> list[Call]:
    return [
        (rng.randrange(1 << 16), tuple((rng.choice(MODES), rng.randrange(1 << 16)) for _ in range(MAX_PARAMS)))
        for _ in range(n)
    ]


def hypothesis_batches(n: int = BATCH) -> Any:
    """A hypothesis strategy of batches (lists of abstract calls)."""
    from hypothesis import strategies as st

    arg = st.tuples(st.sampled_from(MODES), st.integers(0, (1 << 16) - 1))
    call = st.tuples(st.integers(0, (1 << 16) - 1), st.tuples(*[arg] * MAX_PARAMS))
    return st.lists(call, min_size=n, max_size=n)


def run_forked_batch(api_name: str, calls: Sequence[Call], timeout: float = 120.0) -> tuple[str, Tally, str]:
    """Play a batch in a forked worker: (how it ended, its tally, stderr's tail).

    The ending is "ok", "segfault", "abort", "signal N", "timeout" or "error" (the interpreter
    itself raised); a crash's tally holds what the worker reported before it died.
    """
    from ggspec.conformance.engine.isolate import run_forked

    api = load_api(api_name)  # loaded once, in the parent: every worker starts from it
    res = run_forked(lambda: run_batch(api, calls), timeout=timeout)
    sanitizer = re.search(r"ERROR: (\w+Sanitizer): ([\w-]+)|runtime error: [^\n]*", res.stderr)
    if res.status == "ok" and sanitizer is None:
        return "ok", res.value, res.stderr[-2000:]
    tally = Tally()
    if sanitizer is not None:  # with abort_on_error=0 a sanitizer report ends the worker with exit 1
        ending = f"{sanitizer.group(1)} {sanitizer.group(2)}" if sanitizer.group(1) else "UBSan runtime error"
        last = res.reports[-1] if res.reports else None
        tally.add(ending, f"call {last} of the batch: {res.stderr[sanitizer.start():][:600]}")
        return ending, tally, res.stderr[-2000:]
    last = res.reports[-1] if res.reports else None
    if res.status == "signal":
        ending = {signal.SIGSEGV: "segfault", signal.SIGABRT: "abort", signal.SIGBUS: "segfault"}.get(
            signal.Signals(res.signum), f"signal {res.signum}"
        )
    else:
        ending = "timeout" if res.status == "timeout" else "error"
    tally.add(ending, f"call {last} of the batch: {res.describe()}: {res.stderr[-600:]}")
    return ending, tally, res.stderr[-2000:]


def fuzz(api: str, calls: int) -> Tally:
    """Play `calls` hypothesis-drawn calls against `api`, BATCH per forked worker; an assertion
    fails (and hypothesis shrinks the batch) on the first batch that crashes, raises an untyped
    exception, accepts a freed object or an object of the wrong kind, or makes a sanitizer report."""
    from hypothesis import HealthCheck, given, settings

    total = Tally()

    @settings(max_examples=max(1, calls // BATCH), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(batch=hypothesis_batches())
    def one(batch: list[Call]) -> None:
        ending, tally, stderr = run_forked_batch(api, batch)
        assert ending == "ok", f"a worker ended with {ending}: {tally.examples}"
        assert tally.bad() == 0, f"bad outcomes: {dict(tally.outcomes)}\n{tally.examples}"
        assert "Sanitizer" not in stderr and "runtime error:" not in stderr, stderr
        total.merge(tally)

    one()
    return total


def assert_survives(api: str, calls: int) -> None:
    """The fuzz tests' assertion: `calls` calls against `api` (see fuzz), and enough of them got
    through the argument checks that the run tested more than refusals."""
    total = fuzz(api, calls)
    n = sum(total.outcomes.values())
    print(f"{api}: {n} calls: {dict(total.outcomes)}")
    assert n >= calls // BATCH * BATCH
    assert total.outcomes["ok"] > n // 10, "too few calls got through: the fuzz test would test only refusals"


_APIS: dict[str, Api] = {}


def load_api(name: str) -> Api:
    if name not in _APIS:
        _APIS[name] = _load_api(name)
    return _APIS[name]


def _load_api(name: str) -> Api:
    if name == "native":
        from fuzzcalls_native import native_api

        return native_api()
    from fuzzcalls_reference import reference_api

    return reference_api()


def main(argv: Sequence[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("api", choices=("native", "reference"))
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    total = Tally()
    for _ in range(max(1, args.calls // BATCH)):
        _, tally, _ = run_forked_batch(args.api, random_batch(rng))
        total.merge(tally)
    print(f"{args.api}: {args.calls} calls, seed {args.seed}: {dict(sorted(total.outcomes.items()))}")
    for k, v in sorted(total.examples.items()):
        if k not in ("ok", "typed"):
            print(f"  {k}:")
            for e in v:
                print(f"    {e[:300]}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    raise SystemExit(main(sys.argv[1:]))
