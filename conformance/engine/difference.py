"""How a difference between the reference's and a target's observations is described.

`describe(expected, actual, args)` names the first observation that differs by its label and
shows the reference's value against the target's, the way a pytest assertion does:

    observation 3 'buffer': 4 of 96 bytes differ, first at byte 40
      reference: b'\\xa5\\xa5...' (96 bytes)
      target:    b'\\xa5\\xa5...' (96 bytes)
      bytes 32..63:  reference a5 a5 a5 a5 00 00 80 3f ...
                     target    a5 a5 a5 a5 00 00 00 40 ...
      as F32 (the tensor's type), elements 8..15: reference [1.0, ...] vs target [2.0, ...]

Inside tuples, lists, dicts and dataclasses (a `TensorInfo`, say) the first line names the
path of what differs (`'view'.ne: reference (4, 1, 1, 1) vs target (4, 2, 1, 1)`). Bytes are
also shown as numbers of the tensor's type where the type is known: from an earlier
observation of the same tensor's layout (`x: layout` before `x: bytes`, `view` before `view
bytes`), else from the example's arguments when all their tensors share one type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np
from ggspec.reference.types import GGMLType

#: the element types whose bytes read as numbers with numpy (quantized blocks stay bytes)
_DTYPES: dict[GGMLType, str] = {
    GGMLType.F32: "<f4", GGMLType.F16: "<f2", GGMLType.I8: "i1", GGMLType.I16: "<i2", GGMLType.I32: "<i4",
}
#: the longest repr shown of one value
_WIDTH = 160
#: bytes shown around the first difference
_WINDOW = 32


def describe(expected: list[tuple[str, Any]], actual: list[tuple[str, Any]], args: dict[str, Any] | None = None) -> str:
    """The first differing observation, labelled, reference value vs target value."""
    for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
        if e == a:
            continue
        if e[0] != a[0]:
            return (f"observation {i}: the reference recorded {e[0]!r}, the target {a[0]!r}\n"
                    f"  reference: {e[0]} = {_short(e[1])}\n  target:    {a[0]} = {_short(a[1])}")
        label = e[0]
        type_ = _type_for(label, expected[:i], args or {})
        head, body = _value_difference(repr(label), e[1], a[1], type_)
        if not isinstance(e[1], (bytes, bytearray)) or not isinstance(a[1], (bytes, bytearray)):
            body += [f"reference: {label} = {_short(e[1], 400)}", f"target:    {label} = {_short(a[1], 400)}"]
        return f"observation {i} {head}\n" + "\n".join("  " + line for line in body)
    if len(expected) != len(actual):
        n = min(len(expected), len(actual))
        longer, side = (expected, "reference") if len(expected) > len(actual) else (actual, "target")
        label, value = longer[n]
        return (f"the reference recorded {len(expected)} observations, the target {len(actual)}; "
                f"only the {side} recorded observation {n} {label!r} = {_short(value)}")
    return "observations equal"


def _value_difference(path: str, e: Any, a: Any, type_: GGMLType | None) -> tuple[str, list[str]]:
    """(first line, further lines) describing how `e` (reference) and `a` (target) differ."""
    if isinstance(e, (bytes, bytearray)) and isinstance(a, (bytes, bytearray)):
        return _bytes_difference(path, bytes(e), bytes(a), type_)
    if dataclasses.is_dataclass(e) and type(e) is type(a) and not isinstance(e, type):
        fields = [f.name for f in dataclasses.fields(e) if getattr(e, f.name) != getattr(a, f.name)]
        if len(fields) == 1:
            name = fields[0]
            return _value_difference(f"{path}.{name}", getattr(e, name), getattr(a, name), type_)
        return (f"{path}: fields {', '.join(fields)} differ",
                [f"{path}.{n}: reference {_short(getattr(e, n))} vs target {_short(getattr(a, n))}" for n in fields])
    if isinstance(e, (tuple, list)) and isinstance(a, (tuple, list)) and type(e) is type(a):
        if len(e) == len(a):
            bad = [i for i, (x, y) in enumerate(zip(e, a, strict=True)) if x != y]
            if len(bad) == 1:
                return _value_difference(f"{path}[{bad[0]}]", e[bad[0]], a[bad[0]], type_)
            head, body = _value_difference(f"{path}[{bad[0]}]", e[bad[0]], a[bad[0]], type_)
            return (f"{path}: items {_ranges(bad)} of {len(e)} differ; first: {head}", body)
        return f"{path}: {len(e)} items on the reference, {len(a)} on the target", []
    if isinstance(e, dict) and isinstance(a, dict):
        keys = [k for k in {**e, **a} if e.get(k, _MISSING) != a.get(k, _MISSING)]
        if len(keys) == 1 and keys[0] in e and keys[0] in a:
            return _value_difference(f"{path}[{keys[0]!r}]", e[keys[0]], a[keys[0]], type_)
        return (f"{path}: keys {', '.join(map(repr, keys))} differ",
                [f"{path}[{k!r}]: reference {_short(e.get(k, _MISSING))} vs target {_short(a.get(k, _MISSING))}"
                 for k in keys])
    mismatch = getattr(e, "mismatch", "") or getattr(a, "mismatch", "")  # an Approx says where and by how much
    if mismatch:
        return f"{path}: {mismatch}", []
    return f"{path}: reference {_short(e)} vs target {_short(a)}", []


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING = _Missing()


def _bytes_difference(path: str, e: bytes, a: bytes, type_: GGMLType | None) -> tuple[str, list[str]]:
    n = min(len(e), len(a))
    bad = [i for i in range(n) if e[i] != a[i]]
    if len(e) != len(a):
        head = f"{path}: {len(e)} bytes on the reference, {len(a)} on the target"
        if bad:
            head += f"; {len(bad)} of the first {n} differ, first at byte {bad[0]}"
    else:
        head = f"{path}: {len(bad)} of {n} bytes differ, first at byte {bad[0]}"
    body = [f"reference: {_short(e)} ({len(e)} bytes)", f"target:    {_short(a)} ({len(a)} bytes)"]
    first = bad[0] if bad else n
    lo = first // 16 * 16
    hi = min(max(len(e), len(a)), lo + _WINDOW)
    if hi > lo:
        where = f"bytes {lo}..{hi - 1}:  "
        body.append(f"{where}reference {e[lo:hi].hex(' ')}")
        body.append(f"{'':{len(where)}s}target    {a[lo:hi].hex(' ')}")
    if type_ is not None and type_ in _DTYPES:
        size = np.dtype(_DTYPES[type_]).itemsize
        if len(e) % size == 0 and len(a) % size == 0:
            k0, k1 = lo // size, -(-hi // size)
            ev = np.frombuffer(e, dtype=_DTYPES[type_])[k0:k1].tolist()
            av = np.frombuffer(a, dtype=_DTYPES[type_])[k0:k1].tolist()
            body.append(f"as {type_.name} (the tensor's type), elements {k0}..{k1 - 1}: reference {ev} vs target {av}")
    return head, body


def _type_for(label: str, before: list[tuple[str, Any]], args: dict[str, Any]) -> GGMLType | None:
    """The element type of the bytes observed under `label`, where one is known."""
    stem = label.rsplit(":", 1)[0].strip() if ":" in label else label.rsplit(" ", 1)[0]
    for lbl, value in reversed(before):
        own = lbl.rsplit(":", 1)[0].strip() if ":" in lbl else lbl
        if own in (stem, label) and _is_tensor_layout(value):
            return _as_type(value.type)
    types = {t for t in _arg_types(args.values(), depth=0)}
    return _as_type(types.pop()) if len(types) == 1 else None


def _is_tensor_layout(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and hasattr(value, "type") and hasattr(value, "ne")


def _arg_types(values: Iterable[Any], depth: int) -> Iterable[int]:
    """The `type` of every tensor-like dataclass (type and ne fields) among the arguments."""
    if depth > 4:
        return
    for v in values:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            if hasattr(v, "type") and hasattr(v, "ne") and isinstance(v.type, int):
                yield int(v.type)
            else:
                yield from _arg_types((getattr(v, f.name) for f in dataclasses.fields(v)), depth + 1)
        elif isinstance(v, (tuple, list)):
            yield from _arg_types(v, depth + 1)


def _as_type(value: int) -> GGMLType | None:
    try:
        return GGMLType(value)
    except ValueError:
        return None


def _ranges(idx: list[int]) -> str:
    """[1, 2, 3, 7] → '1..3, 7' (at most six runs)."""
    runs: list[tuple[int, int]] = []
    for i in idx:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    text = ", ".join(f"{a}..{b}" if b > a else f"{a}" for a, b in runs[:6])
    return text + (", ..." if len(runs) > 6 else "")


def _short(value: Any, width: int = _WIDTH) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + " ..."
