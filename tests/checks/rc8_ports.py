"""Ports of our own making, as a porter's build would be: rc.8's sources (the npm package the
rc8 adapter fetches, conformance/adapters/rc8.py) with one deliberate line changed, compiled
into a shared library under a test's tmp_path and checked as `--target external`.

- PORT_A: tensor_set's bound `<` instead of `<=` (a write ending exactly at the tensor's end
  aborts): TDATA-3 must fail (tests/checks/test_port_edges.py).
- PORT_B: a scheduler split's inputs deduplicated off by one (the last input listed is not
  looked at, so an input used twice in a row is listed twice): SCHED-17 must be named first.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ggspec.conformance.adapters import external_target_name
from ggspec.conformance.adapters.rc8 import CFLAGS, LIBS, PREFIX, SOURCES


@dataclass(frozen=True)
class Port:
    """rc.8 with `old` replaced by `new` in `file` (`old` occurs exactly once there)."""

    name: str
    file: str
    old: str
    new: str


PORT_A = Port("port-a", "ggml-backend.c",
              '"tensor buffer not set");\n    WSP_GGML_ASSERT(offset + size <= wsp_ggml_nbytes(tensor) && "tensor write',
              '"tensor buffer not set");\n    WSP_GGML_ASSERT(offset + size < wsp_ggml_nbytes(tensor) && "tensor write')
PORT_B = Port("port-b", "ggml-backend.c",
              "for (int k = 0; k < sched->splits[cur_split].n_inputs; k++) {",
              "for (int k = 0; k < sched->splits[cur_split].n_inputs - 1; k++) {")


def build_port(port: Port, rc8_cpp: Path, out: Path) -> str:
    """Copy rc.8's sources (`rc8_cpp`: package/cpp) to `out/<name>`, make the port's change,
    compile them as rc8.py does (-O1 here: a test build) and return the external target's name."""
    src = out / port.name
    shutil.copytree(rc8_cpp, src)
    path = src / port.file
    text = path.read_text()
    assert text.count(port.old) == 1, f"{port.name}: {port.old!r} is not in {port.file} exactly once"
    path.write_text(text.replace(port.old, port.new))
    lib = out / f"lib{port.name.replace('-', '')}.so"
    flags = [f if f != "-O2" else "-O1" for f in CFLAGS]
    subprocess.run(["gcc", *flags, *(str(src / s) for s in SOURCES), "-o", str(lib), *LIBS], check=True,
                   capture_output=True)
    return external_target_name(str(src), str(lib), PREFIX)
