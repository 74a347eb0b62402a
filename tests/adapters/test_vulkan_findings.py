"""The Vulkan port's findings (conformance/known/llama-cpp-python-*.toml, entries whose reason starts
"Vulkan device"), each pinned: the example a `--device vulkan` run failed on, replayed on the real
device, fails the same way under any seed (replay draws nothing).

Skips where the Vulkan backend cannot be built (no g++ or libvulkan-dev), no Vulkan device is
found (lavapipe: mesa-vulkan-drivers) or the sdist cannot be fetched; fails on anything else.
Each replay starts the device in a worker of its own (about a second on lavapipe).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.adapters import prepare_target
from ggspec.conformance.adapters import vulkan_device as vd
from ggspec.conformance.adapters.ggml_python import CannotFetch, vulkan_buildable
from ggspec.conformance.errors import ReplayFailed
from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node
from ggspec.conformance.inputs.strategies import Placement, SchedCase, SchedGraph, SchedSetup, TensorSpec
from ggspec.conformance.target import DEVICE_ENV
from ggspec.conformance.tools.replay import replay
from ggspec.reference.vdev import ALL_OPS, VDevParams

_PLAIN = VDevParams(name="GPU0")


def _allocation_graph() -> dict[str, Any]:
    """sched.allocation_graph's failing example of the dev runs (seed 1): an F32 MUL_MAT of 4x4
    weights on the device, its input on the CPU."""
    spec = GraphSpec(leafs=(Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1)),
                     nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                     outputs=("mul_mat0",), graph_size=2048)
    return {"case": SchedCase(setup=SchedSetup(devices=(_PLAIN,)), graph=SchedGraph(spec=spec, assign=(("mul_mat0", 0),),
                                                                                     caches=()),
                              want=frozenset(), stop=frozenset())}


#: (version, check, args, what the replay shows)
#: stands for the check's first explicit example (the registry's), replayed as it is written there
_EXPLICIT = {"explicit": True}

FINDINGS = [
    ("0.2.38", "backend.synchronize_completes_pending_work",
     {"device": VDevParams(), "spec": TensorSpec(type=0, ne=(1,)), "seed": 0}, "target    22 00 00 00"),
    ("0.2.78", "backend.synchronize_completes_pending_work",
     {"device": VDevParams(), "spec": TensorSpec(type=0, ne=(1,)), "seed": 0}, "target    22 00 00 00"),
    ("0.2.38", "sched.allocation_graph", None, "vs 0.0"),
    ("0.2.78", "sched.allocation_graph", None, "vs 0.0"),
    ("0.2.38", "sched.buffer_owner", {"shape": (1, 1)}, "size > 0"),
    ("0.2.38", "sched.fixture_outputs", {"fixture": ("decoder", SchedSetup(devices=(_PLAIN,)))}, "Missing op: GET_ROWS"),
    # the two buffers cleared to 0x11 and 0x22 read back as words 11 00 00 00 (the clear finding)
    ("0.2.38", "backend.device_paths_on_the_plain_device", {"shift": 1, "seed": 0}, "target    11 00 00 00 11 00 00 00"),
    ("0.2.78", "backend.device_paths_on_the_plain_device", {"shift": 1, "seed": 0}, "target    11 00 00 00 11 00 00 00"),
    ("0.2.38", "copy.copies_on_the_plain_device", {"shift": 1, "seed": 0}, "target    11 00 00 00 11 00 00 00"),
    ("0.2.56", "copy.copies_on_the_plain_device", {"shift": 1, "seed": 0}, "target    11 00 00 00 11 00 00 00"),
    # MUL of a source whose rows are not adjacent: claimed by supports_op, then an assert (ci size, seed 1)
    *((v, "ops.mul_computes", {"case": (0, 0, (1, 1, 1), (1, 1, 1), "rows", "root"),
                               "where": Placement(kind="vdev", vdev=VDevParams(
                                   name="VDEV", alignment=32, lazy=False, async_entries=True, buffer_cpy_tensor=True,
                                   cpy_tensor_async=True, alloc_pad=0, ops=ALL_OPS)),
                               "seed": 0, "spread": 0}, "ggml_vk_dim01_contiguous(src0)") for v in ("0.2.38", "0.2.56")),
    # findings 9 to 11: the check's own explicit example on the plain device (test-backend-ops' case)
    ("0.2.56", "ops.scale_computes", _EXPLICIT, "10000 of 10000 element(s) out of tolerance"),
    *((v, "ops.norm_computes", _EXPLICIT, "64000 of 64000 element(s) out of tolerance") for v in ("0.2.38", "0.2.56")),
    *(("0.2.38", f"ops.{op}_computes", _EXPLICIT, "112 of 128 element(s) out of tolerance") for op in ("add", "mul")),
]


@pytest.fixture(autouse=True)
def _vulkan(monkeypatch: pytest.MonkeyPatch) -> None:
    if vulkan_buildable() is not None:
        pytest.skip(f"the Vulkan backend cannot be built here: {vulkan_buildable()}")
    if vd.vulkan_probe() is not None:
        pytest.skip(f"no Vulkan device here: {vd.vulkan_probe()}")
    monkeypatch.setenv(DEVICE_ENV, "vulkan")


@pytest.mark.parametrize(("version", "check", "args", "shows"), FINDINGS,
                         ids=[f"{v}-{c}" for v, c, _, _ in FINDINGS])
def test_the_finding_is_pinned(version: str, check: str, args: dict[str, Any] | None, shows: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    target = f"llama-cpp-python-{version}"
    try:
        prepare_target(target)
    except CannotFetch as exc:
        pytest.skip(f"{target} cannot be fetched here: {exc}")
    if args is _EXPLICIT:
        from ggspec.conformance.engine.runner import load_checks

        args = load_checks()[check].examples[0]
    with pytest.raises(ReplayFailed):
        replay(check, target=target, profile="fixed", args=args if args is not None else _allocation_graph(),
               device="vulkan")
    assert shows in capsys.readouterr().out


def _lifecycle_steps(version: str) -> Any:
    """stateful.lifecycle's crashing steps (seed 3 of the ci runs, shrunk by hand): a plain virtual
    device (the Vulkan device), then alloc_buffer(0) from it; in a forked worker."""
    from ggspec.conformance.checks import stateful
    from ggspec.conformance.engine import isolate
    from ggspec.reference.clauses import Profile

    target = f"llama-cpp-python-{version}"
    try:
        prepare_target(target)
    except CannotFetch as exc:
        pytest.skip(f"{target} cannot be fetched here: {exc}")

    def steps() -> int:  # in the forked worker only
        vd.note_target(target)
        stateful.note = lambda value: None  # hypothesis's note() works only inside a test
        machine = stateful.LifecycleMachine.for_target(target, Profile.FIXED)()
        backend = machine.init_vdev(name="GPU0", alignment=VDevParams().alignment, alloc_pad=0, lazy=False)
        buf = machine.alloc_buffer(backend, 0)
        return int(machine.target.buffer_get_size(buf.target))

    return isolate.run_forked(steps, timeout=120, reports=False)


@pytest.mark.parametrize(("version", "where", "shows"), [
    ("0.2.38", "ggml_backend_alloc_buffer", "size > 0"),
    ("0.2.56", "ggml_backend_buffer_clear", "dst->ctx == ctx"),
    ("0.2.78", "ggml_backend_buffer_clear", "dst->ctx == ctx")])
def test_an_empty_device_buffer_aborts_the_lifecycle_machine(version: str, where: str, shows: str) -> None:
    """stateful.lifecycle's crash (BUF-4/9/11/13, BACK-2 blamed): on 0.2.38 the Vulkan device's
    alloc_buffer(0) asserts size > 0 (finding 3); 0.2.56 returns an empty buffer, but one with no
    Vulkan buffer behind it (ggml_vk_create_buffer returns before setting its ctx), so the clear
    the machine gives every new buffer asserts in ggml_vk_buffer_memset (dst->ctx == ctx), on
    0.2.78 too."""
    crashed = _lifecycle_steps(version)
    assert crashed.status == "signal" and where in crashed.describe() and shows in crashed.stderr, (
        crashed.describe(), crashed.stderr)


@pytest.mark.parametrize(("version", "reversed_"), [("0.2.38", True), ("0.2.56", False), ("0.2.78", False)])
def test_a_copy_between_vulkan_buffers_goes_the_right_way_from_0_2_56(version: str, reversed_: bool,
                                                                      tmp_path: Path) -> None:
    """Without ggspec (bench/vulkan_defects.c `copy 61`): 0.2.38's buffer cpy_tensor hands
    ggml_vk_buffer_copy (dst first) its source first, so tensor_copy between two Vulkan buffers
    writes the destination's bytes over the source (copy.copies_on_the_plain_device, COPY-9);
    0.2.56 passes them in the right order."""
    from benchscripts import load_bench

    bench = load_bench("vulkan_defects.py")
    target = f"llama-cpp-python-{version}"
    try:
        exe = bench.build(target, tmp_path)
    except CannotFetch as exc:
        pytest.skip(f"{target} cannot be fetched here: {exc}")
    rc, line = bench.run(exe, ("copy", "61"))
    if reversed_:
        assert rc == 1 and "61 destination bytes lack the source's, 61 source bytes changed" in line, line
    else:
        assert rc == 0 and "0 destination bytes lack the source's, 0 source bytes changed" in line, line


def test_the_scheduler_machine_meets_copy_6_on_the_vulkan_device() -> None:
    """stateful.scheduler on 0.2.38 with the Vulkan device, seed 1 at ci size (40 examples): the
    scheduler copies a split input out of a Vulkan buffer through the source buffer's cpy_tensor
    (rc.8's erratum COPY-6, kept in 0.2.38), whose Vulkan entry reads the mock destination's extra
    as its own: SIGSEGV under sched_graph_compute, in the same example every time."""
    from ggspec.conformance.engine.results import RunConfig
    from ggspec.conformance.engine.runner import load_checks, run_check
    from ggspec.reference.clauses import Profile

    name = "llama-cpp-python-0.2.38"
    try:
        prepare_target(name)
    except CannotFetch as exc:
        pytest.skip(f"{name} cannot be fetched here: {exc}")
    vd.note_target(name)
    cfg = RunConfig(name, Profile.FIXED, max_examples=40, seed=1, c_reproducers=False)
    res = run_check(load_checks()["stateful.scheduler"], cfg)
    assert res.status == "crash" and "SIGSEGV in ggml_backend_sched_graph_compute" in res.detail, res.detail
