"""Upstream's own check of a llama-cpp-python build's Vulkan backend: tests/test-backend-ops.cpp
of the same sdist, built at run time, run on this machine's Vulkan device (lavapipe here) op by
op, its verdicts kept in a JSON file for the side-by-side table of docs/vulkan-port.md.

    python bench/vulkan_upstream_ops.py --target llama-cpp-python-0.2.38 [--json FILE]

The build is the sdist's sources as upstream's CMake compiles them with LLAMA_VULKAN=ON (every
source with GGML_USE_VULKAN, so ggml-backend.c registers the Vulkan device for test-backend-ops
to find), into `<cache>/<target>/upstream-ops/` (outside the repository; ggspec's own target
library, whose C sources are compiled without it, is left as it is). Each op runs in a process
of its own (`test-backend-ops test -b <device> -o OP`): an abort (0.2.38's `dmmv != nullptr`)
ends that op's run, recorded as its last case's verdict `abort: <message>`, and the others go on.

A build whose registry does not list the Vulkan device (0.2.56: `ggml_backend_vk_reg_devices`
walks the instance's device list before anything has made the instance, so test-backend-ops
reports "Testing 1 backends", the CPU alone; 0.2.78's makes the instance first) is recorded as
`"registered": false`, and its ops are run by a second executable, the same objects linked with
one constructor of ours (`vk_instance_first.c`) that calls the header's
`ggml_backend_vk_get_device_count()`, which makes the instance, before main.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from ggspec.conformance.adapters.ggml_python import CFLAGS, VULKAN_CXXFLAGS, ensure_sdist_target, sdist_of, target_dir

#: the operations ggspec models, as test-backend-ops names them (op_desc: a unary op by its own name)
OPS = ("ADD", "MUL", "SCALE", "MUL_MAT", "GET_ROWS", "NORM", "SOFT_MAX", "CPY", "DUP", "CONT", "GELU", "SILU")
SOURCES = ("ggml.c", "ggml-alloc.c", "ggml-backend.c", "ggml-quants.c")
_CASE = re.compile(r"^  (\w+)\((.*)\): (.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def build(target: str) -> Path:
    """test-backend-ops of `target`'s sdist with its Vulkan backend (cached)."""
    ensure_sdist_target(target)  # fetched, verified, unpacked
    sd = sdist_of(target)
    root = target_dir(target)
    src = root / "ggml" / sd.src
    out = root / "upstream-ops"
    exe = out / "test-backend-ops"
    stamp = out / ".build"
    recipe = f"{sd.sha256} {' '.join(CFLAGS)} {' '.join(VULKAN_CXXFLAGS)} -DGGML_USE_VULKAN instance-first"
    if exe.is_file() and stamp.is_file() and stamp.read_text().strip() == recipe:
        return exe
    out.mkdir(parents=True, exist_ok=True)
    cflags = [f for f in CFLAGS if f != "-shared"]
    objs = []
    for s in SOURCES:
        obj = out / (s + ".o")
        _run(["gcc", *cflags, "-DGGML_USE_VULKAN", f"-I{src}", "-c", str(src / s), "-o", str(obj)])
        objs.append(str(obj))
    for s in ("ggml-vulkan.cpp", "tests/test-backend-ops.cpp"):
        obj = out / (Path(s).name + ".o")
        _run(["g++", *VULKAN_CXXFLAGS, "-DGGML_USE_VULKAN", f"-I{src}", "-c", str(src / s), "-o", str(obj)])
        objs.append(str(obj))
    first = out / "vk_instance_first.c"
    first.write_text(INSTANCE_FIRST)
    _run(["gcc", *cflags, "-c", str(first), "-o", str(out / "vk_instance_first.o")])
    for name, extra in ((exe, []), (out / "test-backend-ops-instance-first", [str(out / "vk_instance_first.o")])):
        _run(["g++", *objs, *extra, "-o", str(name), "-lvulkan", "-lm", "-lpthread"])
    stamp.write_text(recipe + "\n")
    return exe


#: linked into the second executable only: makes the Vulkan instance before main (see the module's text)
INSTANCE_FIRST = """int ggml_backend_vk_get_device_count(void);
__attribute__((constructor)) static void vk_instance_first(void) { (void) ggml_backend_vk_get_device_count(); }
"""


def registered(exe: Path, device: str) -> bool:
    """Whether test-backend-ops finds `device` in the build's registry ("Backend 2/2 (Vulkan0)")."""
    proc = subprocess.run([str(exe), "test", "-b", device, "-o", "SCALE"], capture_output=True, text=True,
                          timeout=300, cwd=exe.parent)
    return re.search(rf"^Backend \d+/\d+ \({re.escape(device)}\)", _ANSI.sub("", proc.stdout), re.M) is not None


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")


def device_name(target: str) -> str:
    """The Vulkan backend's name in `target` (test-backend-ops' -b)."""
    from ggspec.conformance.adapters.vulkan_device import VULKAN

    return VULKAN.shapes[target].name


def run_op(exe: Path, device: str, op: str, timeout: float) -> dict[str, object]:
    """One op's cases: [(case, verdict)], where verdict is OK, FAIL (with upstream's reason),
    not supported, or abort/timeout for the case the process died in."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run([str(exe), "test", "-b", device, "-o", op], capture_output=True, text=True,
                              timeout=timeout, cwd=exe.parent)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr, rc = "", None
    cases: list[tuple[str, str]] = []
    pending = None
    for raw in _ANSI.sub("", stdout).splitlines():
        m = _CASE.match(raw)
        if not m:
            continue
        desc, params, rest = m.groups()
        rest = rest.strip()
        if rest.endswith("OK"):
            cases.append((f"{desc}({params})", "OK"))
        elif rest.endswith("FAIL"):
            cases.append((f"{desc}({params})", "FAIL " + rest[:-4].strip()))
        elif rest.startswith("not supported"):
            cases.append((f"{desc}({params})", "not supported"))
        else:
            pending = f"{desc}({params})"
    finished = rc in (0, 1) and "backends passed" in stdout  # 1: some case failed, the run ended normally
    if not finished:
        why = "timeout" if rc is None else next((ln for ln in stderr.splitlines() if "GGML_ASSERT" in ln),
                                                f"exit {rc}")
        cases.append((pending or f"{op}(?)", f"abort: {why.strip()}"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"op": op, "cases": cases, "cpu_seconds": round(cpu, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--json", type=Path, help="write the verdicts here (default: stdout)")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds one op's run may take")
    args = ap.parse_args()
    if shutil.which("g++") is None:
        sys.exit("needs g++ and libvulkan-dev")
    exe = build(args.target)
    device = device_name(args.target)
    on_its_own = registered(exe, device)
    if not on_its_own:
        print(f"{args.target}: test-backend-ops does not find {device} in the registry; running the ops with "
              "the instance made first (vk_instance_first.c)", file=sys.stderr)
        exe = exe.parent / "test-backend-ops-instance-first"
        if not registered(exe, device):
            sys.exit(f"{args.target}: {device} is not registered even with the instance made first")
    results = [run_op(exe, device, op, args.timeout) for op in args.ops.split(",")]
    data = {"target": args.target, "device": device, "registered": on_its_own, "ops": results}
    text = json.dumps(data, indent=1) + "\n"
    if args.json:
        args.json.write_text(text)
    else:
        print(text)
    for r in results:
        verdicts = [v.split(" ")[0].rstrip(":") for _, v in r["cases"]]  # type: ignore[attr-defined]
        print(f"{r['op']}: " + ", ".join(f"{verdicts.count(k)} {k}" for k in ("OK", "FAIL", "not", "abort")
                                          if verdicts.count(k)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
