"""The model calls a backend's entries only where rc.8 does (issue 20: the model's traffic is an
observable). Under profile rc8 the scheduler asks no supports_op (SCHED-33): a backend whose
supports_op counts, logs or costs anything sees from the model what it sees from rc.8. The
erratum is attributed from the backend's known answer instead; profile fixed asks the entry, as
its correction says. Printing a model object calls no entry either."""

from __future__ import annotations

import pytest
from ggspec.reference import cpu, ops, sched, vdev
from ggspec.reference.clauses import Profile
from ggspec.reference.graph import build_forward_expand, new_graph
from ggspec.reference.tensor import Context, Tensor
from ggspec.reference.types import GGMLType, Op
from ggspec.reference.world import World


def _pass2_refused(profile: Profile, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], World, str]:
    """SCHED-33's pass-2 scene: a device without ADD gets s0 and s2 pinned; pass 2 gives it the
    ADD between them. (supports_op entries called, the world, the ADD's backend after the passes)."""
    calls: list[str] = []
    real_vdev, real_cpu = vdev._supports_op, cpu._backend_supports_op

    def counted_vdev(backend: object, op: Tensor) -> bool:
        calls.append(f"DEV:{op.name}")
        return real_vdev(backend, op)  # type: ignore[arg-type]

    def counted_cpu(backend: object, op: Tensor) -> bool:
        calls.append(f"CPU:{op.name}")
        return real_cpu(backend, op)  # type: ignore[arg-type]

    monkeypatch.setattr(vdev, "_supports_op", counted_vdev)
    monkeypatch.setattr(cpu, "_backend_supports_op", counted_cpu)
    w = World(profile)
    dev = vdev.vdev_init(w, vdev.VDevParams(name="DEV", ops=frozenset(Op) - {Op.ADD}))
    host = cpu.cpu_init(w)
    ctx = Context(w)
    a, b = ctx.new_tensor(GGMLType.F32, [4, 2], "a"), ctx.new_tensor(GGMLType.F32, [4, 2], "b")
    s0 = ops.scale(ctx, a, 2.0)
    total = ops.add(ctx, s0, b)
    s2 = ops.scale(ctx, total, -1.0)
    s0.name, total.name, s2.name = "s0", "sum", "s2"
    g = new_graph(ctx)
    build_forward_expand(g, s2)
    s = sched.sched_new(w, [dev, host], None, 64)
    sched.set_node_backend(s, s0, dev)
    sched.set_node_backend(s, s2, dev)
    sched.split_graph(s, g)
    got = sched.get_node_backend(s, total)
    return calls, w, got.label if got is not None else "NULL"


def test_rc8_asks_no_supports_op_and_still_attributes_the_erratum(monkeypatch: pytest.MonkeyPatch) -> None:
    calls, w, backend_of_sum = _pass2_refused(Profile.RC8, monkeypatch)
    assert calls == []
    assert backend_of_sum == "DEV"  # rc.8's choice stands
    assert "SCHED-33" in w.errata_taken  # from the device's known answer


def test_fixed_asks_supports_op_as_its_correction_says(monkeypatch: pytest.MonkeyPatch) -> None:
    calls, w, backend_of_sum = _pass2_refused(Profile.FIXED, monkeypatch)
    assert calls == ["DEV:sum", "DEV:sum", "CPU:sum"]  # the refused node, then the backends in priority order
    assert backend_of_sum == "CPU"
    assert "SCHED-33" in w.errata_taken


def test_printing_model_objects_calls_no_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(Profile.RC8)
    dev = vdev.vdev_init(w, vdev.VDevParams(name="DEV"))
    buft = vdev.vdev_buffer_type(dev)
    buf = buft.iface.alloc_buffer(buft, 64)

    def refuse(*args: object) -> str:
        raise AssertionError("an entry was called to print a model object")

    for obj in (dev.iface, buft.iface, buf.iface):
        monkeypatch.setattr(obj, "get_name", refuse)
    assert (repr(dev), repr(buft), repr(buf)) == ("<backend 'DEV'>", "<buffer type 'DEV'>", "<buffer 'DEV' size=64>")
