"""The fuzz tests' view of reference/: the same functions as the native wrapper's (fuzzcalls_native.py),
in the model's terms (a World per batch, host memory as addresses in its address space), plus
the scheduler and the graph allocator, which only the model exposes to Python."""

from __future__ import annotations

from typing import Any

from fuzzcalls import OBJECT_KINDS, Api, Fn, common_fns, plain


def reference_api() -> Api:
    from ggspec.reference import alloc as ra
    from ggspec.reference import backend as rb
    from ggspec.reference import buffer as rbuf
    from ggspec.reference import copy as rcopy
    from ggspec.reference import cpu as rcpu
    from ggspec.reference import graph as rg
    from ggspec.reference import ops as rops
    from ggspec.reference import registry as rreg
    from ggspec.reference import sched as rs
    from ggspec.reference import tdata as rtd
    from ggspec.reference import tensor as rt
    from ggspec.reference import vdev as rvd
    from ggspec.reference.clauses import ModelOutOfMemory, SpecError
    from ggspec.reference.world import World

    def host_alloc(w: World, size: int, as_cdata: bool) -> Any:
        if not isinstance(size, int) or not isinstance(as_cdata, bool) or not 0 <= size <= 1 << 20:
            raise ValueError("the fuzz test's own host memory: a small size")
        return w.host_alloc(size, "fuzz host memory").base

    def tensor_set(w: World, t: Any, payload: Any, offset: Any) -> None:
        if not isinstance(payload, (bytes, bytearray)):
            raise TypeError("the fuzz test's payload: bytes")
        rtd.tensor_set(t, w.host_bytes(bytes(payload)), offset, len(payload))

    def tensor_get(w: World, t: Any, offset: Any, size: Any) -> bytes:
        if not isinstance(size, int) or not 0 <= size <= 1 << 20:
            raise ValueError("the fuzz test's own host memory: a small size")
        region = w.host_alloc(size, "fuzz tensor_get")
        rtd.tensor_get(t, region.base, offset, size)
        return bytes(region.data)

    def tensor_alloc(w: World, buf: Any, t: Any, offset: Any) -> None:
        base = rbuf.buffer_get_base(buf) if isinstance(buf, rbuf.Buffer) and not buf.freed else 0
        rtd.tensor_alloc(buf, t, base + offset if isinstance(offset, int) else offset)

    # ggml_init / ggml_free / ggml_new_tensor / ggml_view_Nd (methods of Context in older models)
    r_init = getattr(rt, "init", lambda world, _mem, no_alloc: rt.Context(world, no_alloc))
    r_free = getattr(rt, "free", lambda ctx: rt.Context.free(ctx))
    r_new_tensor = getattr(rt, "new_tensor", lambda ctx, *a: rt.Context.new_tensor(ctx, *a))
    r_view = getattr(rt, "view", lambda ctx, *a: rt.Context.view(ctx, *a))

    def w(name: str, params: str, call: Any, returns: str | None = None, frees: int | None = None) -> Fn:
        return Fn(name, tuple(params.split()), call, returns, frees)

    def with_world(call: Any) -> Any:
        return lambda name, params, returns, frees: w(name, params, call, returns, frees)

    def without_world(call: Any) -> Any:
        return lambda name, params, returns, frees: plain(name, params, call, returns, frees)

    def registry(method: str) -> Any:
        return with_world(lambda world, *a: getattr(rreg.registry_of(world), method)(*a))

    modules = {"backend": rb, "buffer": rbuf, "copy": rcopy, "cpu": rcpu, "tdata": rtd, "tensor": rt, "vdev": rvd}
    fns = common_fns(modules, {
        "host_alloc": with_world(host_alloc),
        "cpu_init": with_world(rcpu.cpu_init),
        "cpu_buffer_type": with_world(rcpu.cpu_buffer_type),
        "vdev_init": with_world(rvd.vdev_init),
        "init": with_world(lambda world, mem, no_alloc: r_init(world, mem, no_alloc)),
        "free": without_world(r_free),
        "new_tensor": without_world(r_new_tensor),
        "view": without_world(r_view),
        "tensor_alloc": with_world(tensor_alloc),
        "tensor_set": with_world(tensor_set),
        "tensor_get": with_world(tensor_get),
        "reg_get_count": registry("get_count"),
        "reg_find_by_name": registry("find_by_name"),
        "reg_init_backend_from_str": registry("init_backend_from_str"),
        "reg_get_name": registry("get_name"),
        "reg_init_backend": registry("init_backend"),
        "reg_get_default_buffer_type": registry("get_default_buffer_type"),
        "reg_alloc_buffer": registry("alloc_buffer"),
        "reg_register": with_world(lambda world, n, fn, b: rreg.registry_of(world).register(n, fn, b, None)),
        "cpu_buffer_from_ptr": with_world(rcpu.cpu_buffer_from_ptr),
    })
    fns += [
        # only the model has these in Python: graphs and ops, the scheduler and the graph allocator
        plain("new_graph", "ctx", rg.new_graph, "graph"),
        plain("build_forward_expand", "graph tensor", rg.build_forward_expand),
        plain("graph_clear", "graph", rg.graph_clear),
        plain("backend_graph_compute", "backend graph", rb.backend_graph_compute),
        plain("add", "ctx tensor tensor", rops.add, "tensor"),
        plain("mul", "ctx tensor tensor", rops.mul, "tensor"),
        plain("scale", "ctx tensor size", rops.scale, "tensor"),
        plain("cpy", "ctx tensor tensor", rops.cpy, "tensor"),
        plain("cont", "ctx tensor", rops.cont, "tensor"),
        plain("permute", "ctx tensor index index index index", rops.permute, "tensor"),
        w("sched_new", "backend backend size", lambda world, a, b, n: rs.sched_new(world, [a, b], None, n), "sched"),
        plain("sched_free", "sched", rs.sched_free, frees=0),
        plain("sched_reset", "sched", rs.sched_reset),
        plain("sched_get_n_splits", "sched", rs.get_n_splits),
        plain("sched_get_buffer", "sched backend", rs.get_buffer),
        plain("sched_get_node_backend", "sched tensor", rs.get_node_backend),
        plain("sched_set_node_backend", "sched tensor backend", rs.set_node_backend),
        plain("gallocr_new", "", ra.gallocr_new, "galloc"),
        plain("gallocr_free", "galloc", ra.gallocr_free, frees=0),
        plain("tallocr_new_from_buffer", "buffer", ra.tallocr_new_from_buffer, "talloc"),
        plain("tallocr_alloc", "talloc tensor", ra.tallocr_alloc),
        plain("tallocr_max_size", "talloc", ra.tallocr_max_size),
        plain("tallocr_free", "talloc", ra.tallocr_free, frees=0),
    ]
    listed = {id(getattr(fn.call, "__wrapped__", None)) for fn in fns}
    fns += [fn for fn in generated_fns() if id(fn.call.__wrapped__) not in listed or fn.name.endswith("+optional")]
    scalars = {
        "initfn": lambda k: (lambda params, user_data: None),
        "int": lambda k: (0, 1, 2, 3, 4, 8, 16, 64)[k % 8],
        "float": lambda k: (0.0, 1.0, -2.5, 0.5)[k % 4],
        "str": lambda k: ("", "x", "node_0", "CPU")[k % 4],
        "any": lambda k: (None, 0, b"", [])[k % 4],
        "anything": lambda k: (None, 0, b"", [])[k % 4],
    }
    kinds = (*OBJECT_KINDS, *sorted(set(_CLASS_KINDS.values()) - set(OBJECT_KINDS)))
    return Api("reference", fns, World, (TypeError, ValueError, SpecError, ModelOutOfMemory), scalars, kinds)


#: the reference modules whose public functions are fuzzed: every module of reference/ but these
EXCLUDED_MODULES = {
    "checked": "the argument-checking machinery itself (nonnull, instance, checked), not model API",
    "__init__": "no functions",
}

#: public functions left out, with the reason
EXCLUDED_FUNCTIONS: dict[str, str] = {}

#: annotation (a class of the model) -> the fuzz kind of object it names
_CLASS_KINDS = {
    "Backend": "backend", "BufferType": "buft", "Buffer": "buffer", "Context": "ctx", "Tensor": "tensor",
    "CGraph": "graph", "Sched": "sched", "Gallocr": "galloc", "Tallocr": "talloc", "Allocr": "allocr",
    "GraphCopy": "gcopy", "HashSet": "hashset",
}
_SCALAR_KINDS = {"int": "int", "bool": "bool", "str": "str", "float": "float", "GGMLType": "type"}


def _kind_of_annotation(ann: object, pname: str = "") -> str:
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
    text = text.replace(" | None", "").replace("None | ", "").replace("Optional[", "").rstrip("]") if text else ""
    if text in _CLASS_KINDS:
        return _CLASS_KINDS[text]
    if text == "World":
        return "world"
    if text in ("object", "T"):
        return "anything"
    if text in ("list[int]", "Sequence[int]", "tuple[int, ...]"):
        return "ne"
    if text == "int" and "size" in pname:
        return "size"
    if text == "int" and "offset" in pname:
        return "offset"
    return _SCALAR_KINDS.get(text, "any")


def generated_fns() -> list[Fn]:
    """An Fn for every public function of every reference module (so a new function is fuzzed by
    default): parameter kinds read from its annotations, the kind it returns from its return
    annotation; a function named free or *_free frees its first argument."""
    import importlib
    import inspect
    import pkgutil

    import ggspec.reference as pkg

    out: list[Fn] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name in EXCLUDED_MODULES:
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != module.__name__:
                continue
            if f"{info.name}.{name}" in EXCLUDED_FUNCTIONS:
                continue
            sig = inspect.signature(obj)
            positional = [(pname, p) for pname, p in sig.parameters.items()
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            required = sum(1 for _, p in positional if p.default is p.empty)
            ret = _kind_of_annotation(sig.return_annotation)
            returns = ret if ret in _CLASS_KINDS.values() else None
            # with its required parameters only, and (a second Fn) with its optional ones too
            for n, suffix in ((required, ""), (len(positional), "+optional"))[: 1 + (len(positional) > required)]:
                kinds = [_kind_of_annotation(p.annotation, pname) for pname, p in positional[:n]]
                frees = 0 if (name == "free" or name.endswith("_free")) and kinds and kinds[0] != "world" else None
                worlds = [i for i, k in enumerate(kinds) if k == "world"]
                params = tuple(k for k in kinds if k != "world")
                out.append(Fn(f"{info.name}.{name}{suffix}", params, _with_world(obj, worlds), returns, frees))
                out[-1].call.__wrapped__ = obj  # type: ignore[attr-defined]
    return out


def _with_world(fn: Any, worlds: list[int]) -> Any:
    def call(w: Any, *args: Any) -> Any:
        full = list(args)
        for i in worlds:
            full.insert(i, w)
        return fn(*full)

    return call
