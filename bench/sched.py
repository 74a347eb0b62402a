"""Scheduler timings: the reference model and the native build on graphs of 1k to 8k nodes over
2 and 4 backends (virtual devices, then the CPU), tiny tensors (4 x 1 F32), so what is timed is
the scheduler, not the arithmetic.

The graph is a stack of layers, each `x = x + gelu(w_l·x + b_l)` (4 nodes), the layers' weights
in WEIGHTS buffers of the backends in contiguous blocks (the devices first, the last block on
the CPU, as a partially offloaded model), the input on the CPU: a few splits, every node
assigned by passes 1 and 2.

Columns (seconds, best of `--repeat`):

- `split`: the reference's `split_graph` alone (passes 1 to 4 and the allocation graph), on a
  fresh scheduler; native has no public entry for it;
- `measure`: `init_measure` (split + placement with measuring allocators + buffers);
- `compute`: `graph_compute` of a second build after measuring (reset, split, placement, the
  copies and the computation of every node).

Run from the repository root:

    python bench/sched.py                      # 1k 2k 4k 8k nodes, 2 and 4 backends
    python bench/sched.py --nodes 1000 --backends 2 --repeat 1
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ggspec.conformance.adapters import make_target  # noqa: E402
from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node, build  # noqa: E402
from ggspec.conformance.target import Target, VDevParams  # noqa: E402
from ggspec.reference import sched as S  # noqa: E402
from ggspec.reference.clauses import Profile  # noqa: E402
from ggspec.reference.types import GGMLType  # noqa: E402

F32 = int(GGMLType.F32)
D = 4


def layered_graph(n_nodes: int, n_backends: int) -> GraphSpec:
    """`n_nodes // 4` layers of 4 nodes; layer l's weights on backend l * n_backends // layers."""
    layers = max(1, n_nodes // 4)
    leafs = [Leaf("x", F32, (D, 1), n_backends - 1, seed=1)]
    nodes: list[Node] = []
    x = "x"
    for i in range(layers):
        place = i * n_backends // layers
        leafs += [Leaf(f"w{i}", F32, (D, D), place, weights=True, seed=2 + 2 * i),
                  Leaf(f"b{i}", F32, (D,), place, weights=True, seed=3 + 2 * i)]
        nodes += [Node(f"mm{i}", "mul_mat", (f"w{i}", x)), Node(f"lin{i}", "add", (f"mm{i}", f"b{i}")),
                  Node(f"act{i}", "gelu", (f"lin{i}",)), Node(f"x{i}", "add", (x, f"act{i}"))]
        x = f"x{i}"
    return GraphSpec(tuple(leafs), tuple(nodes), (x,), graph_size=2 * len(nodes) + len(leafs) + 64)


def backends_for(t: Target, n: int) -> list[object]:
    return [t.vdev_init(VDevParams(name=f"GPU{i}")) for i in range(n - 1)] + [t.cpu_init()]


def best(repeat: int, setup: Callable[[], Callable[[], object]]) -> float:
    """The best of `repeat` timings of the callable `setup()` returns (setup itself untimed)."""
    times = []
    for _ in range(repeat):
        fn = setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def time_target(name: str, spec: GraphSpec, n_backends: int, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}

    def fresh() -> tuple[Target, list[object], object]:
        t = make_target(name, Profile.FIXED)
        backends = backends_for(t, n_backends)
        return t, backends, t.sched_new(backends, None, spec.graph_size)

    if name == "reference":
        def split() -> Callable[[], object]:
            t, backends, s = fresh()
            g = build(t, spec, backends, weights_apart=True).graph
            return lambda: S.split_graph(s, g)  # type: ignore[arg-type]

        out["split"] = best(repeat, split)

    def measure() -> Callable[[], object]:
        t, backends, s = fresh()
        g = build(t, spec, backends, weights_apart=True).graph
        return lambda: t.sched_init_measure(s, g)

    out["measure"] = best(repeat, measure)

    def compute() -> Callable[[], object]:
        t, backends, s = fresh()
        t.sched_init_measure(s, build(t, spec, backends, weights_apart=True).graph)
        g = build(t, spec, backends, weights_apart=True).graph

        def run() -> None:
            t.sched_graph_compute(s, g)
            for b in backends:
                t.backend_synchronize(b)

        return run

    out["compute"] = best(repeat, compute)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--backends", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--targets", nargs="+", default=["reference", "native"])
    args = parser.parse_args(argv)
    print("| nodes | backends | splits | reference split | reference measure | reference compute "
          "| native measure | native compute |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.nodes:
        for nb in args.backends:
            spec = layered_graph(n, nb)
            rows = {name: time_target(name, spec, nb, args.repeat) for name in args.targets}
            t = make_target("reference", Profile.FIXED)
            backends = backends_for(t, nb)
            s = S.sched_new(t.world, backends, None, spec.graph_size)  # type: ignore[arg-type]
            S.split_graph(s, build(t, spec, backends, weights_apart=True).graph)
            ref, nat = rows.get("reference", {}), rows.get("native", {})

            def cell(row: dict[str, float], key: str) -> str:
                return f"{row[key]:.4f}" if key in row else "-"

            print(f"| {len(spec.nodes)} | {nb} | {len(s.splits)} | {cell(ref, 'split')} | {cell(ref, 'measure')} "
                  f"| {cell(ref, 'compute')} | {cell(nat, 'measure')} | {cell(nat, 'compute')} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
