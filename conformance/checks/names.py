"""Names at and past their fields' limits, through every path that stores or reads one (issue 30,
class 2).

Two fixed-size fields hold the names of the API: a registry entry's (128 bytes: 127 and the
terminator, REG-3, REG-12) and a tensor's (64 bytes: 63 and the terminator, CORE-80). Every
path that writes one cuts at the same byte, never at a character: register, then get_name,
find_by_name and init_backend_from_str; set_name, the names rc.8 formats itself from a tensor's
name (a view's, CONT's, RESHAPE's, PERMUTE's, TRANSPOSE's and CPY's), and the scheduler's copies
`DEVICE#name`. Each check walks its path at one byte short of the limit, at it, one past it,
and with a multi-byte character across the cut, every case an explicit example (the cases are
few and cheap).

rc.8 stores no name of a buffer type, buffer or backend: each is what that object's `get_name`
entry returns (BUFT-1, BUF-2, BACK-1), so their only limit is the device's own (the virtual
device keeps 63 bytes); a device named that long is what the scheduler check's last cases use.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.strategies import SchedSetup
from ..target import Handle, Target, VDevParams
from .sched import COPY_X, copy_x_named, make_backends, measure

F32 = int(GGMLType.F32)
#: the registry keeps 127 bytes of a name, a tensor 63
REG_KEPT, TENSOR_KEPT = 127, 63


def _ascii(n: int) -> str:
    """`n` ASCII characters, each position telling where it is (a cut one byte off shows)."""
    return "".join("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[i % 62] for i in range(n))


def _landing(kept: int, land: str, prefix: int = 0, suffix: int = 0) -> str:
    """A name that, with `prefix` bytes before it and `suffix` after it, is `land` bytes long
    ("62", "63", "64" for a 63-byte limit, relative to `kept`: "limit-1", "limit", "past"), or
    ("wide2", "wide3") has a 2- or 3-byte character whose first byte is the last one kept."""
    if land in ("limit-1", "limit", "past"):
        total = kept + {"limit-1": -1, "limit": 0, "past": 1}[land]
        return _ascii(total - prefix - suffix)
    char = "\u00e9" if land == "wide2" else "\u20ac"  # é (2 bytes), € (3 bytes)
    return _ascii(kept - 1 - prefix) + char + "tail"


LANDINGS = ("limit-1", "limit", "past", "wide2", "wide3")


def _utf8_prefixes(name: str, sizes: tuple[int, ...]) -> list[str]:
    """The prefixes of `name` of exactly `sizes` bytes that end on a character boundary."""
    raw = name.encode()
    out = []
    for n in sizes:
        try:
            out.append(raw[:n].decode())
        except UnicodeDecodeError:
            continue
    return out


@example(land="limit-1")
@example(land="limit")
@example(land="past")
@example(land="wide2")
@example(land="wide3")
@check("REG-12", "REG-3", "REG-4", "REG-5", "REG-10", land=st.sampled_from(LANDINGS))
def registry_names_at_the_limit(t: Target, rec: Recorder, land: str) -> None:
    """A backend registered under a name of 126, 127 or 128 bytes, or with a 2- or 3-byte
    character whose first byte is byte 127: get_name gives the stored name (the first 127
    bytes); find_by_name finds the entry by its stored name only, never by a longer or shorter
    one; init_backend_from_str, with and without params, cuts its name part at the same byte."""
    name = _landing(REG_KEPT, land)
    t.reg_reset()
    t.reg_register(name, t.cpu_buffer_type(), 7)
    rec("count", t.reg_get_count())  # the first query registers CPU after it (REG-3)
    rec("stored name", t.reg_get_name(0))
    queries = [name, name + "x", *_utf8_prefixes(name, (REG_KEPT - 2, REG_KEPT - 1, REG_KEPT, REG_KEPT + 1))]
    for q in dict.fromkeys(queries):
        rec(f"find a name of {len(q.encode())} bytes", t.reg_find_by_name(q))
        for s in (q, q + ":p", q + "::"):
            backend = t.reg_init_backend_from_str(s)
            rec(f"init from {len(s.encode())} bytes ({s[-3:]!r} at the end)", backend is not None)
    rec("init calls", t.reg_init_calls())


#: op -> (bytes a derived name adds after the source's name, how to make it from x)
_DERIVED: dict[str, int] = {"view": len(" (view)"), "cont": len(" (cont)"), "reshape": len(" (reshaped)"),
                            "permute": len(" (permuted)"), "transpose": len(" (transposed)")}


def _derived(t: Target, op: str, x: Handle) -> Handle:
    if op == "view":
        return t.op("view", [x], [4, 0])
    if op == "reshape":
        return t.op("reshape", [x], [4, 2])
    if op == "permute":
        return t.op("permute", [x], [1, 0, 2, 3])
    return t.op(op, [x], [])


@example(land="limit-1")
@example(land="limit")
@example(land="past")
@example(land="wide2")
@example(land="wide3")
@check("CORE-80", land=st.sampled_from(LANDINGS))
def derived_tensor_names_at_the_limit(t: Target, rec: Recorder, land: str) -> None:
    """For each name rc.8 formats from a source's name (a view's "<x> (view)", CONT's, RESHAPE's,
    PERMUTE's, TRANSPOSE's, and CPY's "<b> (copy of <a>)"), a source named so that the formatted
    name is 62, 63 or 64 bytes long, or has a 2- or 3-byte character starting at byte 63: the
    result keeps the first 63 bytes. set_name of the same text is cut at the same byte."""
    for op, added in _DERIVED.items():
        x = t.new_tensor(F32, (8,), "x")
        t.set_name(x, _landing(TENSOR_KEPT, land, suffix=added))
        rec(f"{op}: source's name", t.tensor_name(x))
        rec(f"{op}: derived name", t.tensor_name(_derived(t, op, x)))
    a = t.new_tensor(F32, (8,), "a")
    b = t.new_tensor(F32, (8,), "b")
    t.set_name(a, "a")
    t.set_name(b, _landing(TENSOR_KEPT, land, suffix=len(" (copy of a)")))
    rec("cpy: derived name", t.tensor_name(t.op("cpy", [a, b], [])))
    y = t.new_tensor(F32, (8,), "y")
    t.set_name(y, _landing(TENSOR_KEPT, land))
    rec("set_name", t.tensor_name(y))


@example(land="limit-1", device="GPU0")
@example(land="limit", device="GPU0")
@example(land="past", device="GPU0")
@example(land="wide2", device="GPU0")
@example(land="limit", device=_ascii(62))
@example(land="limit", device=_ascii(63))
@check("SCHED-19", "CORE-80", "BUFT-1", "BACK-1", land=st.sampled_from(LANDINGS),
       device=st.sampled_from(["GPU0", _ascii(61), _ascii(62), _ascii(63), _ascii(61) + "\u00e9"]))
def copies_named_at_the_limit(t: Target, rec: Recorder, land: str, device: str) -> None:
    """The scheduler's copy of input x for a device named `device` (4 to 63 bytes), named
    `DEVICE#x`, with x named so that the copy's name is 62, 63 or 64 bytes long or has a
    multi-byte character starting at byte 63 (with a device of 62 bytes or more, the cut falls
    in or just after the device's name): the copy keeps the first 63 bytes. The device's,
    its buffer type's and its buffer's names are read back whole."""
    backends = make_backends(t, SchedSetup((VDevParams(name=device),)))
    rec("backend name", t.backend_name(backends[0]))
    buft = t.backend_get_default_buffer_type(backends[0])
    rec("buffer type name", t.buft_name(buft))
    rec("buffer name", t.buffer_name(t.buft_alloc_buffer(buft, 64)))
    run = measure(t, backends, COPY_X)
    prefix = len(device.encode()) + 1
    copy_x_named(t, rec, run, _landing(TENSOR_KEPT, land, prefix=min(prefix, TENSOR_KEPT - 1)))
    t.sched_free(run.sched)
