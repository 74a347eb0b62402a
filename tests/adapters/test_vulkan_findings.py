"""The Vulkan port's findings (conformance/known/llama-cpp-python-*.toml, entries whose reason starts
"Vulkan device"), each pinned: the example a `--device vulkan` run failed on, replayed on the real
device, fails the same way under any seed (replay draws nothing).

Skips where the Vulkan backend cannot be built (no g++ or libvulkan-dev), no Vulkan device is
found (lavapipe: mesa-vulkan-drivers) or the sdist cannot be fetched; fails on anything else.
Each replay starts the device in a worker of its own (about a second on lavapipe).
"""

from __future__ import annotations

from typing import Any

import pytest
from ggspec.conformance.adapters import prepare_target
from ggspec.conformance.adapters import vulkan_device as vd
from ggspec.conformance.adapters.ggml_python import CannotFetch, vulkan_buildable
from ggspec.conformance.errors import ReplayFailed
from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node
from ggspec.conformance.inputs.strategies import SchedCase, SchedGraph, SchedSetup, TensorSpec
from ggspec.conformance.target import DEVICE_ENV
from ggspec.conformance.tools.replay import replay
from ggspec.reference.vdev import VDevParams

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
FINDINGS = [
    ("0.2.38", "backend.synchronize_completes_pending_work",
     {"device": VDevParams(), "spec": TensorSpec(type=0, ne=(1,)), "seed": 0}, "target    22 00 00 00"),
    ("0.2.78", "backend.synchronize_completes_pending_work",
     {"device": VDevParams(), "spec": TensorSpec(type=0, ne=(1,)), "seed": 0}, "target    22 00 00 00"),
    ("0.2.38", "sched.allocation_graph", None, "vs 0.0"),
    ("0.2.78", "sched.allocation_graph", None, "vs 0.0"),
    ("0.2.38", "sched.buffer_owner", {"shape": (1, 1)}, "size > 0"),
    ("0.2.38", "sched.fixture_outputs", {"fixture": ("decoder", SchedSetup(devices=(_PLAIN,)))}, "Missing op: GET_ROWS"),
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
    with pytest.raises(ReplayFailed):
        replay(check, target=target, profile="fixed", args=args if args is not None else _allocation_graph(),
               device="vulkan")
    assert shows in capsys.readouterr().out
