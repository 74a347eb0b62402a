"""Hand-written one-line defects in the WebGPU backend (native/src/webgpu.c, webgpu.wgsl), and how
many of them the suite alone catches: ``ggspec check --device webgpu --target native`` on a build
with one defect each.

Each `Defect` replaces one line's text (`old`, its `nth` occurrence in the file) with `new`. The
kinds are those issue 30 names: a kernel that skips the last row, a broadcast taken wrong, a
rounding mode changed, bytes read or written at the wrong place, an op claimed in supports_op and
computed as another. Defects are compiled only into variant builds (a patched copy of
native/src in a temporary or given folder), never into the library users load.

    python bench/webgpu_defects.py run --tree REV --out OUT.jsonl [--only NAME ...] [--seed S]
                                       [--size dev] [--work DIR] [--tree-dir DIR]
    python bench/webgpu_defects.py list
    python bench/webgpu_defects.py markdown BEFORE.jsonl AFTER.jsonl

``run`` unpacks commit REV (default HEAD; sources *and* suite, bench/mutation.py's `_snapshot`),
builds the unpatched sources and each defect's (one folder of sources, patched in place, so the
object cache recompiles only webgpu.c), runs the suite at `--size` with `--device webgpu` on each
build under one seed, and writes one JSON line per build: the verdict (``caught``: the run's
verdict is FAIL; the unpatched build must PASS), the failing clauses, CPU seconds.
`build_defect` is what tests call to get one defect's target (tests/native/test_webgpu_defects.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Defect:
    name: str
    file: str  # in native/src
    old: str
    new: str
    kind: str
    nth: int = 0  # which occurrence of `old` in the file

    def apply(self, text: str) -> str:
        """`text` with the defect planted (ValueError when `old` is not there as many times)."""
        at = -1
        for _ in range(self.nth + 1):
            at = text.find(self.old, at + 1)
            if at < 0:
                raise ValueError(f"{self.name}: occurrence {self.nth} of {self.old!r} is not in {self.file}")
        return text[:at] + self.new + text[at + len(self.old):]


W, C = "webgpu.wgsl", "webgpu.c"
DEFECTS: tuple[Defect, ...] = (
    Defect("norm_skips_last_row", W, "if (r >= pu(36u)) { return; }", "if (r + 1u >= pu(36u)) { return; }",
           "a kernel skips the last row (NORM)"),
    Defect("copy_blocks_short", W, "for (var j = 0u; j < size; j++) {", "for (var j = 0u; j + 1u < size; j++) {",
           "a kernel skips the last byte of each block (block copy)"),
    Defect("mul_mat_broadcast_dim2", W, "c.z / r2", "c.z % tne(1u, 2u)",
           "a broadcast taken wrong (MUL_MAT over dim 2)"),
    Defect("binary_broadcast_dim1", W, "c.y % tne(2u, 1u)", "c.y % tne(2u, 0u)",
           "a broadcast taken wrong (ADD / MUL over dim 1)"),
    Defect("soft_max_mask_row", W, "m0 = taddr(2u, vec4<u32>(0u, r % tne(2u, 1u), 0u, 0u));",
           "m0 = taddr(2u, vec4<u32>(0u, 0u, 0u, 0u));", "a broadcast taken wrong (SOFT_MAX's mask row)"),
    Defect("f16_ties_away", W, "(rem == 0x1000u && (h & 1u) == 1u)", "(rem == 0x1000u)",
           "a rounding mode changed (F32 -> F16 ties away from zero)"),
    Defect("f16_subnormals_flushed", W, "if (ee < -10) { return sign; }", "if (ee <= 0) { return sign; }",
           "a rounding mode changed (F16 subnormals flushed to zero)"),
    Defect("q4_0_truncates", W, "i32(rounded(x[j] * id) + 8.5)", "i32(rounded(x[j] * id) + 8.0)",
           "a rounding mode changed (Q4_0 quantization truncates)"),
    Defect("mul_mat_f16_b_unrounded", W, "if (half_a) { b = r16(b); }", "if (half_a) { b = b * 1.0; }",
           "a rounding step dropped (F16 weights take b unrounded)"),
    Defect("unaligned_write_misplaced", C, "merge_bytes(dev, enc, dst, off, scratch, 0, size);",
           "merge_bytes(dev, enc, dst, off & ~(uint64_t)3, scratch, 0, size);",
           "bytes written at the wrong place (unaligned set)"),
    Defect("unaligned_read_misplaced", C, ".skip = (size_t)(off - a),", ".skip = 0,",
           "bytes read from the wrong place (unaligned get)"),
    Defect("reads_delivered_reversed", C, "struct wg_readback * r = &dev->reads[i];",
           "struct wg_readback * r = &dev->reads[dev->n_reads - 1 - i];", "reads delivered out of order", nth=1),
    Defect("cpy_async_short", C, "copy_bytes(dev, d->buf, locate(d, dst, 0, n), s->buf, locate(s, src, 0, n), n);",
           "copy_bytes(dev, d->buf, locate(d, dst, 0, n), s->buf, locate(s, src, 0, n), n - 1);",
           "a device-to-device async copy one byte short"),
    Defect("mul_computed_as_add", C, "b.words[37] = node->op == VDU(OP_ADD) ? 0 : 1;", "b.words[37] = 0;",
           "an op claimed in supports_op and computed as another (MUL as ADD)"),
    Defect("gelu_silu_swapped", C, "b.words[37] = node->op_params[0] == VDU(UNARY_OP_GELU) ? 0 : 1;",
           "b.words[37] = node->op_params[0] == VDU(UNARY_OP_SILU) ? 0 : 1;",
           "an op claimed in supports_op and computed as another (GELU as SILU)"),
    Defect("scale_claimed_not_dispatched", C, "case VDU(OP_SCALE):", "case VDU(OP_COUNT):",
           "an op claimed in supports_op that graph_compute refuses (SCALE's dispatch dropped)", nth=1),
)
BY_NAME = {d.name: d for d in DEFECTS}


def patch_sources(src: Path, defect: Defect | None, pristine: Path) -> None:
    """`src` (a folder) holds `pristine`'s files (native/src) with `defect` planted (None: none)."""
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(pristine, src)
    if defect is not None:
        path = src / defect.file
        path.write_text(defect.apply(path.read_text(encoding="utf-8")), encoding="utf-8")


def build_sources(src: Path, out: Path, module: str) -> str:
    """Build the native module from the sources in `src` into `out`; returns the target name."""
    from ggspec.native import build

    saved = build.SRC_DIR, build.WGSL_SOURCE, build.WGSL_HEADER
    build.SRC_DIR = str(src)
    build.WGSL_SOURCE, build.WGSL_HEADER = str(src / "webgpu.wgsl"), str(src / "webgpu_wgsl.h")
    try:
        out.mkdir(parents=True, exist_ok=True)
        build.build_variant(module, str(out))
    finally:
        build.SRC_DIR, build.WGSL_SOURCE, build.WGSL_HEADER = saved
    return f"native:{out}:{module}"


def build_defect(name: str, out: Path) -> str:
    """The native build of the working tree's sources with defect `name` planted, in `out`
    (sources under out/src); returns its target name."""
    defect = BY_NAME[name]
    patch_sources(out / "src", defect, ROOT / "native" / "src")
    return build_sources(out / "src", out / "build", "_ggspec_wgdef_" + name)


def _run_suite(target: str, seed: int, size: str, report: Path) -> tuple[int, float]:
    """`ggspec check --device webgpu` on `target` (a child process); (exit code, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--device", "webgpu",
                           "--size", size, "--seed", str(seed), "--no-cache", "--no-c-reproducers", "--quiet",
                           "--json", str(report)], capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
    return proc.returncode, cpu


def _failing(report: Path) -> list[str]:
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return []
    clauses = data.get("clauses", data.get("results", []))
    out = []
    for c in clauses if isinstance(clauses, list) else clauses.values():
        if isinstance(c, dict) and c.get("status") in ("fail", "crash"):
            out.append(str(c.get("id") or c.get("clause")))
    return out


def _use_tree(tree: Path, dest: Path) -> None:
    """Import ggspec from `tree` (as bench/mutation.py's `_snapshot` does for a commit): dest/py/ggspec
    points at it, first on sys.path and PYTHONPATH."""
    (dest / "py" / "ggspec").mkdir(parents=True)
    for d in ("reference", "conformance", "native", "spec"):
        (dest / "py" / "ggspec" / d).symlink_to(tree / d)
    for so in (ROOT / "native").glob("_native.*.so"):
        if not (tree / "native" / so.name).exists():
            shutil.copy2(so, tree / "native" / so.name)
    sys.path.insert(0, str(dest / "py"))
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(dest / "py"), os.environ.get("PYTHONPATH")) if x)


def cmd_run(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT / "bench"))
    import mutation

    work = Path(args.work or tempfile.mkdtemp(prefix="ggspec-wgdef-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.tree_dir:  # a tree unpacked and changed by hand (a commit plus some files)
        tree, commit = Path(args.tree_dir).resolve(), f"{args.tree_dir} ({args.tree})"
        _use_tree(tree, work / "snap")
    else:
        commit = mutation._snapshot(args.tree, work / "snap")
        tree = work / "snap" / "tree"
    os.environ.setdefault("GGSPEC_BUILD_CACHE", str(work / "cache"))
    pristine = tree / "native" / "src"
    chosen = [BY_NAME[n] for n in args.only] if args.only else list(DEFECTS)
    with open(args.out, "w", encoding="utf-8") as out:
        for defect in [None, *chosen]:
            name = "unpatched" if defect is None else defect.name
            patch_sources(work / "src", defect, pristine)
            target = build_sources(work / "src", work / "build" / name, "_ggspec_wgdef")
            code, cpu = _run_suite(target, args.seed, args.size, work / f"{name}.json")
            record = {"defect": name, "kind": "" if defect is None else defect.kind, "commit": commit,
                      "seed": args.seed, "size": args.size, "exit": code, "caught": code == 1,
                      "failing": _failing(work / f"{name}.json"), "cpu_s": round(cpu, 1)}
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(f"{name}: {'CAUGHT' if code == 1 else 'missed' if code == 0 else f'exit {code}'} "
                  f"{record['failing'][:6]} ({cpu:.0f} CPU-s)", flush=True)
    return 0


def cmd_markdown(args: argparse.Namespace) -> int:
    runs = [[json.loads(ln) for ln in Path(p).read_text().splitlines() if ln.strip()] for p in args.reports]
    def label(commit: str) -> str:  # a commit, or "DIR (LABEL)" for a --tree-dir run
        return commit.split("(")[-1].rstrip(")") if "(" in commit else commit[:7]

    heads = [f"{label(r[0]['commit'])} ({r[0]['size']}, seed {r[0]['seed']})" for r in runs]
    print("| defect | kind | " + " | ".join(heads) + " |")
    print("|---|---|" + "---|" * len(runs))
    names = [d["defect"] for d in runs[0]]
    for name in names:
        cells = []
        for r in runs:
            rec = next((x for x in r if x["defect"] == name), None)
            cells.append("—" if rec is None else ("caught: " + ", ".join(rec["failing"][:4]) if rec["caught"]
                                                  else "PASS" if name == "unpatched" and rec["exit"] == 0
                                                  else "missed" if rec["exit"] == 0 else f"exit {rec['exit']}"))
        kind = next((x["kind"] for x in runs[0] if x["defect"] == name), "")
        print(f"| {name} | {kind} | " + " | ".join(cells) + " |")
    totals = [sum(1 for x in r if x["defect"] != "unpatched" and x["caught"]) for r in runs]
    counts = [sum(1 for x in r if x["defect"] != "unpatched") for r in runs]
    print("| **caught** | | " + " | ".join(f"**{t} of {n}**" for t, n in zip(totals, counts, strict=True)) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--tree", default="HEAD")
    run.add_argument("--tree-dir", help="an unpacked tree to use instead of a snapshot of --tree (--tree labels it)")
    run.add_argument("--out", required=True)
    run.add_argument("--only", nargs="*")
    run.add_argument("--seed", type=int, default=20261205)
    run.add_argument("--size", default="dev")
    run.add_argument("--work")
    sub.add_parser("list")
    md = sub.add_parser("markdown")
    md.add_argument("reports", nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "list":
        for d in DEFECTS:
            print(f"{d.name:28} {d.file:12} {d.kind}")
        return 0
    return cmd_run(args) if args.cmd == "run" else cmd_markdown(args)


if __name__ == "__main__":
    sys.exit(main())
