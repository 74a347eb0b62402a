"""A state machine for buffer and backend lifecycles, shipped for other implementations to run.

`LifecycleMachine` drives two targets in lockstep: the reference model (the *model*, under a
profile) and an implementation under test. Each rule makes the same calls on both and compares
what they answer; an invariant compares every live buffer's bytes, usage and size after each
step. It inits CPU and virtual-device backends, allocates buffers (from a backend, from a
pointer, from the registry), places tensors, sets, gets, clears, sets usage, resets and frees —
and registers, finds and inits registry entries after resetting the registry. Freed buffers and
backends leave their bundles (`consumes`), so the machine never touches a freed handle, and it
makes only valid calls: a C target runs in-process, an abort would end the run.

The machine covers a small set of lifecycle clauses (`CLAUSES`); it uses no views and no
copies, so a failure here is about lifetimes, not layouts.

Another implementation runs it with its own target::

    from ggspec.conformance.checks.stateful import LifecycleMachine

    class MyLifecycle(LifecycleMachine):
        def make_target(self):
            return MyTarget()

    TestMyLifecycle = MyLifecycle.TestCase

`ggspec check` runs it as the check `stateful.lifecycle` (`LifecycleMachine.for_target`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ggspec.reference.clauses import Profile
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, multiple, precondition, rule

from ..adapters import make_target
from ..engine.registry import mock_reading, register_machine
from ..errors import Mismatch
from ..inputs.strategies import TensorSpec, ascii_names, byte_values, tensor_specs
from ..target import Handle, Target, VDevParams
from ._setup import fill, round_up

#: the clauses a failure of the machine is blamed on
CLAUSES = ("BUF-4", "BUF-9", "BUF-11", "BUF-13", "BACK-2")

#: registry names: a few that collide (with "CPU" too), and free ones
REG_NAMES = st.one_of(st.sampled_from(["CPU", "GPU", "Metal"]), ascii_names(min_size=1, max_size=12, exclude=":"))


@dataclass(eq=False)
class BackendRec:
    """A backend on both sides."""

    model: Handle
    target: Handle
    label: str

    def __repr__(self) -> str:
        return self.label


@dataclass(eq=False)
class TensorRec:
    model: Handle
    target: Handle
    spec: TensorSpec
    offset: int


@dataclass(eq=False)
class BufferRec:
    """A buffer on both sides, the host memory under it when it wraps a pointer, and the
    tensors placed in it (a bump allocator: `next_free`)."""

    model: Handle
    target: Handle
    label: str
    device: bool
    mem: tuple[Handle, Handle] | None = None
    size: int = 0
    tensors: list[TensorRec] = field(default_factory=list)
    next_free: int = 0

    def __repr__(self) -> str:
        return self.label


class LifecycleMachine(RuleBasedStateMachine):
    """Buffers and backends through their lifecycles, on the model and a target in lockstep."""

    #: what `make_target` builds by default (for_target sets them)
    target_name: ClassVar[str] = "reference"
    profile: ClassVar[Profile] = Profile.FIXED

    backends: Bundle[BackendRec] = Bundle("backends")
    buffers: Bundle[BufferRec] = Bundle("buffers")

    def __init__(self) -> None:
        super().__init__()
        self.model: Target = self.make_model()
        self.target: Target = self.make_target()
        self.live: list[BufferRec] = []
        self.counter = 0
        self.registry = bool(self.model.resettable_registry and self.target.resettable_registry)
        self.reg_user = 0  # entries registered by rules
        self.reg_builtin = False  # whether a query has registered CPU
        if self.registry:
            self.model.reg_reset()
            self.target.reg_reset()

    # --- what a subclass may change --------------------------------------------------------

    def make_model(self) -> Target:
        return make_target("reference", self.profile)  # through make_target: --device webgpu shapes it too

    def make_target(self) -> Target:
        return make_target(self.target_name, self.profile)

    @classmethod
    def for_target(cls, target_name: str, profile: Profile) -> type[LifecycleMachine]:
        """This machine against `target_name`, under `profile`."""
        return type(f"{cls.__name__}[{target_name},{profile.value}]", (cls,),
                    {"target_name": target_name, "profile": profile})

    # --- helpers ---------------------------------------------------------------------------

    def agree(self, what: str, model: Any, target: Any) -> Any:
        """Raise Mismatch unless the two answers are equal; return the model's."""
        if model != target:
            raise Mismatch(f"{what}: the reference answers {model!r}, the target {target!r}")
        return model

    def _name(self, kind: str) -> str:
        self.counter += 1
        return f"{kind}{self.counter}"

    def _new_buffer(self, model: Handle, target: Handle, kind: str, mem: tuple[Handle, Handle] | None = None,
                    size: int = 0) -> BufferRec:
        device = not self.agree("is_host of a new buffer", self.model.buffer_is_host(model),
                                self.target.buffer_is_host(target))
        rec = BufferRec(model, target, self._name(kind), device, mem, size)
        self.agree(f"size of {rec}", self.model.buffer_get_size(model), self.target.buffer_get_size(target))
        self.agree(f"usage of {rec}", self.model.buffer_usage(model), self.target.buffer_usage(target))
        self.agree(f"name of {rec}", self.model.buffer_name(model), self.target.buffer_name(target))
        # a CPU buffer's memory starts undefined: give every byte a value before comparing bytes
        self.model.buffer_clear(model, 0)
        self.target.buffer_clear(target, 0)
        self.live.append(rec)
        return rec

    def _tensor(self, buf: BufferRec, which: int) -> TensorRec | None:
        if not buf.tensors:
            note(f"{buf} holds no tensor: nothing to do")
            return None
        return buf.tensors[which % len(buf.tensors)]

    def _range(self, tensor: TensorRec, rng: tuple[int, int]) -> tuple[int, int]:
        """(offset, size) of a range within the tensor's bytes, drawn from rng."""
        n = self.model.nbytes(tensor.model)
        offset = rng[0] % (n + 1)
        return offset, rng[1] % (n - offset + 1)

    def _reg_query(self) -> None:
        """Every registry query registers CPU first, once."""
        self.reg_builtin = True

    def _reg_has_room(self) -> bool:
        # keep a slot for the CPU entry that the first query adds (REG-1, REG-2)
        return self.registry and self.reg_user + int(self.reg_builtin) < 16 and (self.reg_builtin or self.reg_user < 15)

    # --- backends --------------------------------------------------------------------------

    @rule(target=backends)
    def init_cpu(self) -> BackendRec:
        rec = BackendRec(self.model.cpu_init(), self.target.cpu_init(), self._name("cpu"))
        note(f"{rec}: a CPU backend")
        return rec

    @rule(target=backends, name=st.sampled_from(["VDEV", "GPU0"]), alignment=st.sampled_from([1, 32, 256]),
          alloc_pad=st.sampled_from([0, 64]), lazy=st.booleans())
    def init_vdev(self, name: str, alignment: int, alloc_pad: int, lazy: bool) -> BackendRec:
        params = VDevParams(name=name, alignment=alignment, alloc_pad=alloc_pad, lazy=lazy)
        rec = BackendRec(self.model.vdev_init(params), self.target.vdev_init(params), self._name("vdev"))
        note(f"{rec}: a virtual device {name!r}, alignment {alignment}, alloc padding {alloc_pad}"
             f"{', lazy' if lazy else ''}")
        return rec

    @rule(backend=consumes(backends))
    def free_backend(self, backend: BackendRec) -> None:
        """BACK-2; its buffers stay (buffer types outlive backends)."""
        note(f"free {backend}")
        self.model.backend_free(backend.model)
        self.target.backend_free(backend.target)

    @rule()
    def free_null(self) -> None:
        """BUF-4, BACK-2: freeing NULL does nothing."""
        note("free NULL buffer and NULL backend")
        self.model.buffer_free(None)
        self.target.buffer_free(None)
        self.model.backend_free(None)
        self.target.backend_free(None)

    # --- buffers ---------------------------------------------------------------------------

    @rule(target=buffers, backend=backends, size=st.integers(0, 1024))
    def alloc_buffer(self, backend: BackendRec, size: int) -> BufferRec:
        rec = self._new_buffer(self.model.backend_alloc_buffer(backend.model, size),
                               self.target.backend_alloc_buffer(backend.target, size), "buf", size=size)
        note(f"{rec}: {size} bytes from {backend}")
        return rec

    @rule(target=buffers, size=st.integers(1, 512))
    def buffer_from_ptr(self, size: int) -> BufferRec:
        mem = (self.model.host_alloc(size), self.target.host_alloc(size))
        rec = self._new_buffer(self.model.cpu_buffer_from_ptr(mem[0], size),
                               self.target.cpu_buffer_from_ptr(mem[1], size), "ptrbuf", mem, size)
        note(f"{rec}: a CPU buffer over {size} bytes of host memory")
        return rec

    @rule(buf=consumes(buffers))
    def free_buffer(self, buf: BufferRec) -> None:
        """BUF-4: the buffer goes; the others keep their bytes (the invariant), and memory under a
        buffer from a pointer stays its owner's."""
        note(f"free {buf} (and its {len(buf.tensors)} tensors with it)")
        self.model.buffer_free(buf.model)
        self.target.buffer_free(buf.target)
        self.live.remove(buf)
        if buf.mem is not None:
            self.agree(f"memory under freed {buf}", self.model.host_read(buf.mem[0], 0, buf.size),
                       self.target.host_read(buf.mem[1], 0, buf.size))

    @rule(buf=buffers, value=byte_values)
    def clear(self, buf: BufferRec, value: int) -> None:
        """BUF-9 (the invariant compares the bytes)."""
        note(f"clear {buf} to {value}")
        self.model.buffer_clear(buf.model, value)
        self.target.buffer_clear(buf.target, value)

    @rule(buf=buffers, usage=st.sampled_from([0, 1, 7]))  # 7: rc.8 stores unnamed values too (BUF-11)
    def set_usage(self, buf: BufferRec, usage: int) -> None:
        """BUF-11 (the invariant compares the usage)."""
        note(f"set the usage of {buf} to { {0: 'ANY', 1: 'WEIGHTS'}.get(usage, usage)}")
        self.model.buffer_set_usage(buf.model, usage)
        self.target.buffer_set_usage(buf.target, usage)

    @rule(buf=buffers)
    def reset(self, buf: BufferRec) -> None:
        """BUF-13: a device buffer's reset entry runs; bytes and tensors stay."""
        note(f"reset {buf}")
        self.model.buffer_reset(buf.model)
        self.target.buffer_reset(buf.target)
        if buf.device:
            self.agree(f"reset calls of {buf}", mock_reading(lambda: self.model.vdev_counters(buf.model)[1]),
                       mock_reading(lambda: self.target.vdev_counters(buf.target)[1]))

    # --- tensors ---------------------------------------------------------------------------

    @rule(buf=buffers, spec=tensor_specs(max_dims=2, max_ne=4))
    def place_tensor(self, buf: BufferRec, spec: TensorSpec) -> None:
        """A tensor at the next aligned free offset, if it fits."""
        m = self.model.new_tensor(spec.type, spec.ne, "t")
        t = self.target.new_tensor(spec.type, spec.ne, "t")
        need = self.agree("alloc size", self.model.buffer_get_alloc_size(buf.model, m),
                          self.target.buffer_get_alloc_size(buf.target, t))
        align = self.agree("alignment", self.model.buffer_get_alignment(buf.model),
                           self.target.buffer_get_alignment(buf.target))
        offset = round_up(buf.next_free, align)
        if offset + need > self.model.buffer_get_size(buf.model):
            note(f"a {spec} tensor ({need} bytes) does not fit in {buf} at {offset}")
            return
        self.model.tensor_alloc(buf.model, m, offset)
        self.target.tensor_alloc(buf.target, t, offset)
        self.agree("placed tensor", self.model.tensor_info(m), self.target.tensor_info(t))
        buf.tensors.append(TensorRec(m, t, spec, offset))
        buf.next_free = offset + need
        note(f"place a {spec} tensor in {buf} at {offset}")

    @rule(buf=buffers, which=st.integers(0, 1 << 16), rng=st.tuples(st.integers(0, 1 << 16), st.integers(0, 1 << 16)),
          seed=st.integers(0, 2**32))
    def set_tensor(self, buf: BufferRec, which: int, rng: tuple[int, int], seed: int) -> None:
        tensor = self._tensor(buf, which)
        if tensor is None:
            return
        offset, size = self._range(tensor, rng)
        payload = fill(size, seed)
        note(f"set bytes [{offset}, {offset + size}) of the tensor at {tensor.offset} in {buf}")
        self.model.tensor_set(tensor.model, payload, offset, size)
        self.target.tensor_set(tensor.target, payload, offset, size)

    @rule(buf=buffers, which=st.integers(0, 1 << 16), rng=st.tuples(st.integers(0, 1 << 16), st.integers(0, 1 << 16)))
    def get_tensor(self, buf: BufferRec, which: int, rng: tuple[int, int]) -> None:
        tensor = self._tensor(buf, which)
        if tensor is None:
            return
        offset, size = self._range(tensor, rng)
        note(f"get bytes [{offset}, {offset + size}) of the tensor at {tensor.offset} in {buf}")
        self.agree(f"tensor_get from {buf}", self.model.tensor_get(tensor.model, offset, size),
                   self.target.tensor_get(tensor.target, offset, size))

    # --- registry --------------------------------------------------------------------------

    @precondition(lambda self: self._reg_has_room())
    @rule(name=REG_NAMES, user_data=st.integers(0, 1000))
    def reg_register_cpu(self, name: str, user_data: int) -> None:
        note(f"register {name!r} with the CPU type and user data {user_data}")
        self.model.reg_register(name, self.model.cpu_buffer_type(), user_data)
        self.target.reg_register(name, self.target.cpu_buffer_type(), user_data)
        self.reg_user += 1

    @precondition(lambda self: self._reg_has_room())
    @rule(name=REG_NAMES, backend=backends, user_data=st.integers(0, 1000))
    def reg_register_type_of(self, name: str, backend: BackendRec, user_data: int) -> None:
        note(f"register {name!r} with the default type of {backend} and user data {user_data}")
        self.model.reg_register(name, self.model.backend_get_default_buffer_type(backend.model), user_data)
        self.target.reg_register(name, self.target.backend_get_default_buffer_type(backend.target), user_data)
        self.reg_user += 1

    @precondition(lambda self: self.registry)
    @rule(name=REG_NAMES)
    def reg_find(self, name: str) -> None:
        self._reg_query()
        found = self.agree(f"find_by_name({name!r})", self.model.reg_find_by_name(name),
                           self.target.reg_find_by_name(name))
        note(f"find {name!r}: {found}")
        self.agree("count", self.model.reg_get_count(), self.target.reg_get_count())

    @precondition(lambda self: self.registry)
    @rule(target=backends, name=REG_NAMES, params=st.one_of(st.none(), ascii_names(max_size=8)))
    def reg_init_from_str(self, name: str, params: str | None) -> Any:
        self._reg_query()
        s = name if params is None else f"{name}:{params}"
        m, t = self.model.reg_init_backend_from_str(s), self.target.reg_init_backend_from_str(s)
        self.agree(f"init_backend_from_str({s!r}) is NULL", m is None, t is None)
        self.agree("init calls", self.model.reg_init_calls(), self.target.reg_init_calls())
        if m is None:
            note(f"init from {s!r}: not found")
            return multiple()
        rec = BackendRec(m, t, self._name("regbackend"))
        self.agree(f"{rec} is a CPU backend", self.model.backend_is_cpu(m), self.target.backend_is_cpu(t))
        note(f"{rec}: init from {s!r}")
        return rec

    @precondition(lambda self: self.registry)
    @rule(target=buffers, which=st.integers(0, 15), size=st.integers(0, 512))
    def reg_alloc_buffer(self, which: int, size: int) -> BufferRec:
        self._reg_query()
        count = self.agree("count", self.model.reg_get_count(), self.target.reg_get_count())
        i = which % count
        rec = self._new_buffer(self.model.reg_alloc_buffer(i, size), self.target.reg_alloc_buffer(i, size), "regbuf",
                               size=size)
        note(f"{rec}: {size} bytes from registry entry {i}")
        return rec

    # --- invariant and teardown ------------------------------------------------------------

    @invariant()
    def buffers_agree(self) -> None:
        """Every live buffer has the same bytes, usage and size on both sides."""
        for buf in self.live:
            self.agree(f"usage of {buf}", self.model.buffer_usage(buf.model), self.target.buffer_usage(buf.target))
            self.agree(f"size of {buf}", self.model.buffer_get_size(buf.model), self.target.buffer_get_size(buf.target))
            self.agree(f"bytes of {buf}", self.model.buffer_bytes(buf.model), self.target.buffer_bytes(buf.target))

    def teardown(self) -> None:
        for side in (self.model, self.target):
            close = getattr(side, "close", None)
            if close is not None:
                close()


def lifecycle_machine(target_name: str, profile: Profile) -> type[RuleBasedStateMachine]:
    return LifecycleMachine.for_target(target_name, profile)


register_machine("stateful.lifecycle", CLAUSES, lifecycle_machine)
