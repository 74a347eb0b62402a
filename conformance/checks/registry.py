"""REG: the backend registry.

The registry is process-global in C, so every scenario starts with `t.reg_reset()` (the
reference starts a fresh registry; a C target calls its test hook). Registered entries get
init functions the adapter provides: each call is recorded as (params, user_data) and returns a
new CPU backend. Handles are never recorded: a buffer type is recorded as "is it the one
registered", a backend as None or is_cpu.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.strategies import ascii_names, vdev_params
from ..target import Handle, Target, VDevParams

SIZE_MAX = 2**64 - 1

#: names that collide with each other and with "CPU" (in and out of case), and free ones up to
#: well past the 127 bytes the registry keeps
reg_names = st.one_of(
    st.sampled_from(["CPU", "cpu", "GPU", "Metal", "CUDA0", ""]),
    ascii_names(min_size=1, max_size=200, exclude=":"),
)


@dataclass(frozen=True)
class Entry:
    """A registration: name, buffer type (None: the CPU type, else a device's) and user data."""

    name: str
    device: VDevParams | None
    user_data: int


entries = st.builds(Entry, reg_names, st.one_of(st.none(), vdev_params), st.integers(0, 2**31))


def _register(t: Target, e: Entry) -> Handle:
    """Register `e`; return the buffer type it was registered with."""
    buft = t.cpu_buffer_type() if e.device is None else t.backend_get_default_buffer_type(t.vdev_init(e.device))
    t.reg_register(e.name, buft, e.user_data)
    return buft


def _backend(t: Target, b: Handle | None) -> str:
    """What a returned backend is, as something both sides can record."""
    return "NULL" if b is None else "CPU" if t.backend_is_cpu(b) else "other"


# registry.c:115 survived a mutation run: no draw made reg_alloc_buffer the first query after a reset
@example(queries=["alloc 0"])
@check("REG-1", queries=st.lists(st.sampled_from(["count", "find CPU", "name 0", "type 0", "init 0", "from_str CPU",
                                                  "alloc 0"]), min_size=1, max_size=4))
def cpu_registers_itself(t: Target, rec: Recorder, queries: list[str]) -> None:
    """After a reset, the first query of any kind registers "CPU" (with the CPU type), once:
    the count is 1 whatever the queries were."""
    t.reg_reset()
    for q in queries:
        if q == "count":
            rec(q, t.reg_get_count())
        elif q == "find CPU":
            rec(q, t.reg_find_by_name("CPU"))
        elif q == "name 0":
            rec(q, t.reg_get_name(0))
        elif q == "type 0":
            rec(q, t.reg_get_default_buffer_type(0) == t.cpu_buffer_type())
        elif q == "init 0":
            rec(q, _backend(t, t.reg_init_backend(0, "")))
        elif q == "from_str CPU":
            rec(q, _backend(t, t.reg_init_backend_from_str("CPU")))
        else:
            buf = t.reg_alloc_buffer(0, 32)
            rec(q, t.buffer_get_type(buf) == t.cpu_buffer_type())
    rec("count", t.reg_get_count())
    rec("name of 0", t.reg_get_name(0))
    rec("init calls", t.reg_init_calls())


@example(queries=("count", "find CPU"))
@check("REG-11", queries=st.lists(st.sampled_from(["count", "find CPU", "name 0", "from_str CPU"]), min_size=2, max_size=3))
def first_use_from_threads_one_after_another(t: Target, rec: Recorder, queries: list[str]) -> None:
    """After a reset, each query runs on a thread of its own, started after the previous one
    ended: "CPU" is registered exactly once (the flag is the process's, not a thread's);
    overlapping first calls are not defined (deterministic: count, then find CPU)."""
    import threading

    t.reg_reset()
    answers: list[object] = []

    def ask(q: str) -> None:
        if q == "count":
            answers.append(t.reg_get_count())
        elif q == "find CPU":
            answers.append(t.reg_find_by_name("CPU"))
        elif q == "name 0":
            answers.append(t.reg_get_name(0))
        else:
            answers.append(_backend(t, t.reg_init_backend_from_str("CPU")))

    errors: list[BaseException] = []

    def run(q: str) -> None:
        try:
            ask(q)
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread below
            errors.append(exc)

    for q in queries:
        worker = threading.Thread(target=run, args=(q,))
        worker.start()
        worker.join()
        if errors:
            raise errors[0]
    rec("answers", answers)
    rec("count", t.reg_get_count())


@check("REG-2", before=st.integers(0, 16), name=reg_names)
def at_most_sixteen(t: Target, rec: Recorder, before: int, name: str) -> None:
    """`before` registrations before any query, then (if the table is not full) a query, which
    adds CPU, and registrations up to 16 entries; the next registration aborts — or, with 16
    registered before any query, the query's own registration of CPU does."""
    t.reg_reset()
    for i in range(before):
        t.reg_register(f"{name}{i}", t.cpu_buffer_type(), i)
    count = t.reg_get_count()
    rec("count", count)
    for i in range(16 - count + 1):  # the last one is the 17th entry
        t.reg_register(name, t.cpu_buffer_type(), 100 + i)


@check("REG-3", names=st.lists(reg_names, min_size=1, max_size=6), before=st.integers(0, 6), data=st.integers(0, 2**31))
def register_appends_bounded_names(t: Target, rec: Recorder, names: list[str], before: int, data: int) -> None:
    """Entries registered before the first query take indices 0.. and CPU comes after them;
    later ones follow CPU. Names are kept to their first 127 bytes; duplicates are allowed."""
    t.reg_reset()
    types: list[Handle] = []
    for i, name in enumerate(names):
        if i == before:
            rec("count at the first query", t.reg_get_count())
            types.append(t.cpu_buffer_type())
        types.append(_register(t, Entry(name, None, data + i)))
    count = t.reg_get_count()
    rec("count", count)
    if before >= len(names):
        types.append(t.cpu_buffer_type())
    for i in range(count):
        rec(f"name {i}", t.reg_get_name(i))
        rec(f"type {i} is the one registered there", t.reg_get_default_buffer_type(i) == types[i])


@check("REG-4", registered=st.lists(reg_names, min_size=0, max_size=5), asked=st.lists(reg_names, max_size=4),
       swap=st.booleans())
def find_by_name(t: Target, rec: Recorder, registered: list[str], asked: list[str], swap: bool) -> None:
    """The index of the first entry whose stored name equals the query exactly, SIZE_MAX when
    none does; a name of 128 bytes or more is stored cut and never found as given, its first
    127 bytes are."""
    t.reg_reset()
    for i, name in enumerate(registered):
        t.reg_register(name, t.cpu_buffer_type(), i)
    queries = ["CPU", "cpu", "CPU ", "Vulkan"]
    for name in registered + asked:
        queries += [name, name.swapcase() if swap else name.upper(), name[:127], name + "x"]
    for q in queries:
        rec(f"find {q!r}", t.reg_find_by_name(q))


@st.composite
def _backend_strings(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Registered names and strings to init from: a registered name, a case variant or an
    unknown one, then 0, 1 or 2 colons with params around them."""
    registered = draw(st.lists(reg_names, min_size=0, max_size=4), label="registered")
    strings = []
    for _ in range(draw(st.integers(1, 5), label="strings")):
        pool = ["CPU", "cpu", "nope", *registered, *(n.lower() for n in registered)]
        name = draw(st.sampled_from(pool), label="name part")
        colons = draw(st.integers(0, 2), label="colons")
        parts = [name] + [draw(ascii_names(max_size=12, exclude=":"), label="params part") for _ in range(colons)]
        strings.append(":".join(parts))
    return registered, strings


@check("REG-5", case=_backend_strings())
def init_backend_from_str(t: Target, rec: Recorder, case: tuple[list[str], list[str]]) -> None:
    """The name is the text before the first colon (cut to 127 bytes), the params all after it
    (or ""). An unknown name gives NULL; a known one calls that entry's init function."""
    registered, strings = case
    t.reg_reset()
    for i, name in enumerate(registered):
        t.reg_register(name, t.cpu_buffer_type(), 1000 + i)
    for s in strings:
        rec(f"init from {s!r}", _backend(t, t.reg_init_backend_from_str(s)))
    rec("init calls", t.reg_init_calls())


def _index_past_the_end(t: Target, rec: Recorder, registered: int, excess: int) -> int:
    t.reg_reset()
    for i in range(registered):
        t.reg_register(f"B{i}", t.cpu_buffer_type(), i)
    count = t.reg_get_count()
    rec("count", count)
    return SIZE_MAX if excess < 0 else count + excess


indices = dict(registered=st.integers(0, 15), excess=st.one_of(st.integers(0, 64), st.just(-1)))


@check("REG-6", **indices)
def get_name_past_the_end(t: Target, rec: Recorder, registered: int, excess: int) -> None:
    t.reg_get_name(_index_past_the_end(t, rec, registered, excess))


@check("REG-7", **indices)
def init_backend_past_the_end(t: Target, rec: Recorder, registered: int, excess: int) -> None:
    t.reg_init_backend(_index_past_the_end(t, rec, registered, excess), "")


@check("REG-8", **indices)
def get_default_buffer_type_past_the_end(t: Target, rec: Recorder, registered: int, excess: int) -> None:
    t.reg_get_default_buffer_type(_index_past_the_end(t, rec, registered, excess))


@check("REG-9", **indices, size=st.integers(0, 4096))
def alloc_buffer_past_the_end(t: Target, rec: Recorder, registered: int, excess: int, size: int) -> None:
    t.reg_alloc_buffer(_index_past_the_end(t, rec, registered, excess), size)


@check("REG-10", registered=st.lists(entries, min_size=1, max_size=5), params=ascii_names(max_size=16),
       size=st.integers(0, 1024))
def entries_answer_as_registered(t: Target, rec: Recorder, registered: list[Entry], params: str, size: int) -> None:
    """get_name, init_backend (the init function gets params and the entry's user data, its
    backend comes back), get_default_buffer_type and alloc_buffer (a buffer of that type, as
    the type itself would allocate it) answer with what was registered."""
    t.reg_reset()
    count = t.reg_get_count()  # CPU first, then ours
    types = [t.cpu_buffer_type()] + [_register(t, e) for e in registered]
    for i in range(count + len(registered)):
        rec(f"name {i}", t.reg_get_name(i))
        rec(f"init {i}", _backend(t, t.reg_init_backend(i, f"{params}{i}")))
        rec(f"type {i}", t.reg_get_default_buffer_type(i) == types[i])
        buf = t.reg_alloc_buffer(i, size)
        rec(f"buffer {i} type", t.buffer_get_type(buf) == types[i])
        rec(f"buffer {i} size as the type's", t.buffer_get_size(buf) == t.buffer_get_size(t.buft_alloc_buffer(types[i], size)))
    rec("init calls", t.reg_init_calls())
