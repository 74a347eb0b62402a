"""Build bench/vulkan_defects.c against a llama-cpp-python target's library (its Vulkan backend)
and run its cases: the port's defects shown without ggspec, on this machine's Vulkan driver.

    python bench/vulkan_defects.py [--target llama-cpp-python-0.2.38 ...]

Prints one line per case and version (docs/vulkan-port.md quotes them). The target is built as
`ggspec check --target` builds it (conformance/adapters/ggml_python.py, cached outside the
repository); the program is compiled into a temporary folder.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from ggspec.conformance.adapters.ggml_python import ensure_sdist_target

SOURCE = Path(__file__).with_name("vulkan_defects.c")
CASES = (("clear", "0xa5"), ("mul_mat", "4", "4", "1"), ("mul_mat", "64", "64", "1"), ("mul_mat", "64", "64", "8"),
         ("mul_mat", "32", "32", "8"), ("copy", "61"), ("empty",))
TARGETS = ("llama-cpp-python-0.2.38", "llama-cpp-python-0.2.56", "llama-cpp-python-0.2.78")


def build(target: str, out: Path) -> Path:
    include, lib = ensure_sdist_target(target)
    exe = out / f"vulkan_defects-{target}"
    subprocess.run(["gcc", "-O1", "-std=c11", str(SOURCE), f"-I{include}", f"-L{lib.parent}", f"-l:{lib.name}",
                    f"-Wl,-rpath,{lib.parent}", "-o", str(exe)], check=True)
    return exe


def run(exe: Path, case: tuple[str, ...]) -> tuple[int, str]:
    proc = subprocess.run([str(exe), *case], capture_output=True, text=True, timeout=300)
    if proc.returncode < 0:  # killed (an assertion of the port): its message, from stderr
        lines = [ln for ln in proc.stderr.splitlines() if "GGML_ASSERT" in ln] or proc.stderr.strip().splitlines()[-1:]
        return proc.returncode, f"aborted: {lines[-1].strip() if lines else f'signal {-proc.returncode}'}"
    return proc.returncode, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr.strip()[-200:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", help="default: the three Vulkan versions")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.target or TARGETS:
            exe = build(target, Path(tmp))
            for case in CASES:
                rc, line = run(exe, case)
                verdict = "ABORTS" if rc < 0 else "DIFFERS" if rc else "exact"
                print(f"{target}: {' '.join(case)}: {verdict}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
