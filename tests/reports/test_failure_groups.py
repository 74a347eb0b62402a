"""One defect, one block (conformance/reports/groups.py): failing checks grouped by their first
difference, the clause most likely at fault named first. The details below are real ones, from
port B (tests/checks/rc8_ports.py: rc.8 with a split's inputs deduplicated off by one) under
profile rc8, and from native's TDATA-3 assert."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ggspec.conformance.engine.results import CheckResult
from ggspec.conformance.reports.groups import first_difference, group_failures

#: the device log of a split input copied twice into the GPU (target next repeats the last entry)
TWICE_IN = ("{check} [{clauses}]: the virtual devices' entry logs part at entry 41 (reference 47 entries, target 48):\n"
            "  reference: GPU0 graph_compute backend 2 'mul_mat0' 'scale1'\n"
            "  target:    GPU0 set_tensor_async backend 'GPU0#in1' 0 16\n"
            "  before, in both: GPU0 init_tensor buffer#2 'mul_mat0' | GPU0 init_tensor buffer#2 'scale1' | "
            "GPU0 set_tensor_async backend 'GPU0#in1' 0 16\n"
            "  reference next: GPU0 graph_compute backend 2 'mul_mat0' 'scale1' | GPU0 synchronize backend\n"
            "  target next:    GPU0 set_tensor_async backend 'GPU0#in1' 0 16 | GPU0 graph_compute backend 2 'mul_mat0' "
            "'scale1' | GPU0 synchronize backend")
#: ... and a weight copied twice out of it (the last two entries again)
TWICE_OUT = ("{check} [{clauses}]: the virtual devices' entry logs part at entry 35 (reference 36 entries, target 38):\n"
             "  reference: GPU0 free_buffer buffer#2\n"
             "  target:    GPU0 supports_backend buft CPU\n"
             "  before, in both: GPU0 supports_backend buft GPU0 | GPU0 supports_backend buft CPU | "
             "GPU0 get_tensor buffer#3 'w0' 0 64\n"
             "  reference next: GPU0 free_buffer buffer#2\n"
             "  target next:    GPU0 supports_backend buft CPU | GPU0 get_tensor buffer#3 'w0' 0 64 | "
             "GPU0 free_buffer buffer#2")
OTHER = ("{check} [{clauses}]: the virtual devices' entry logs part at entry 3 (reference 9 entries, target 9):\n"
         "  reference: GPU0 graph_compute backend 2 'a' 'b'\n"
         "  target:    GPU0 synchronize backend\n"
         "  before, in both: GPU0 init_tensor buffer#2 'a'\n"
         "  reference next: GPU0 graph_compute backend 2 'a' 'b' | GPU0 synchronize backend\n"
         "  target next:    GPU0 synchronize backend | GPU0 graph_compute backend 2 'a' 'b'")
ABORT = ("{check} [{clauses}]: the reference finished, the target ended with abort: killed by SIGABRT\n"
         "stderr:\n  WSP_GGML_ASSERT: /tmp/x/port-a/ggml-backend.c:199: "
         "offset + size < wsp_ggml_nbytes(tensor) && \"tensor write out of bounds\"")


def failed(check: str, clauses: tuple[str, ...], text: str) -> CheckResult:
    return CheckResult(check, clauses, "fail", 3, text.format(check=check, clauses=", ".join(clauses))
                       + "\nreproducer:\npython - <<'EOF'\nreplay(...)\nEOF")


def test_first_differences_in_words_that_do_not_depend_on_the_example() -> None:
    assert first_difference(failed("a", ("SCHED-22",), TWICE_IN).detail) == \
        first_difference(failed("b", ("SCHED-19",), TWICE_OUT).detail) == \
        "the target repeats device calls it has just made"
    assert first_difference(failed("c", ("SCHED-24",), OTHER).detail) == \
        "the device logs part: the reference calls graph_compute, the target synchronize"
    assert first_difference(failed("d", ("TDATA-4",), ABORT).detail) == \
        'the target aborts at ggml-backend.c:199: offset + size < wsp_ggml_nbytes(tensor) && "tensor write out of bounds"'


def test_port_b_is_one_group_naming_sched_17() -> None:
    """Port B's 18 failing scheduler checks (their clauses as registered) share one first
    difference: one group, SCHED-17 first (two failing checks of its own, as SCHED-19 and
    SCHED-22 have, and it comes first in the spec), its checks first."""
    port_b = [("sched.allocation_graph", ("SCHED-20", "SCHED-21"), TWICE_OUT),
              ("sched.compute_copies_then_runs", ("SCHED-22",), TWICE_IN),
              ("sched.fixture_copies", ("SCHED-19",), TWICE_IN),
              ("sched.fixture_inputs", ("SCHED-17",), TWICE_IN),
              ("sched.fixture_outputs", ("SCHED-22",), TWICE_IN),
              ("sched.fixture_plan", ("SCHED-7", "SCHED-8", "SCHED-9", "SCHED-10", "SCHED-11", "SCHED-12", "SCHED-13"),
               TWICE_IN),
              ("sched.pass2_devices_up", ("SCHED-8",), TWICE_IN),
              ("sched.pass4_copies", ("SCHED-19",), TWICE_OUT),
              ("sched.pass4_inputs_once", ("SCHED-17",), TWICE_OUT)]
    groups = group_failures([failed(*r) for r in port_b] + [CheckResult("sched.ok", ("SCHED-1",), "pass", 5)])
    assert len(groups) == 1
    g = groups[0]
    assert g.culprit == "SCHED-17" and g.clauses[0] == "SCHED-17" and len(g.results) == len(port_b)
    assert {r.check for r in g.results[:2]} == {"sched.fixture_inputs", "sched.pass4_inputs_once"}
    assert g.clauses[1:4] == ("SCHED-7", "SCHED-8", "SCHED-9")  # the consequences, in the spec's order


def test_an_abort_names_the_clause_whose_assert_fired() -> None:
    groups = group_failures([failed("tdata.set_writes_the_range", ("TDATA-4",), ABORT),
                             failed("tdata.get_reads_the_range", ("TDATA-8",), ABORT),
                             failed("tdata.set_to_the_edge", ("TDATA-3", "TDATA-4"), ABORT),
                             failed("sched.x", ("SCHED-24",), OTHER)])
    assert [(g.culprit, len(g.results)) for g in groups] == [("TDATA-3", 3), ("SCHED-24", 1)]
    assert "its own" in groups[0].why


def test_port_b_under_profile_rc8_prints_one_group_naming_sched_17(rc8_or_skip: Any, tmp_path: Path) -> None:
    """The real run: port B built from rc.8's sources, `ggspec check --profile rc8` on the
    scheduler's checks prints one group, SCHED-17 named as the clause most likely at fault, its
    block first; the consequences' blocks are left out."""
    from rc8_ports import PORT_B, build_port

    cpp, _ = rc8_or_skip.sources()
    env = {**os.environ, "GGSPEC_CACHE": str(tmp_path / "cache")}  # the port's adapter module: a throwaway build
    os.environ["GGSPEC_CACHE"], saved = env["GGSPEC_CACHE"], os.environ.get("GGSPEC_CACHE")
    try:
        target = build_port(PORT_B, cpp, tmp_path)
    finally:
        if saved is None:
            del os.environ["GGSPEC_CACHE"]
        else:
            os.environ["GGSPEC_CACHE"] = saved
    _, _, include, lib = target.split(":")
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "external", "--include",
                           include, "--lib", lib, "--prefix", "wsp_ggml_", "--profile", "rc8", "--select", "SCHED",
                           "--max-examples", "10", "--seed", "1", "--quiet", "--no-c-reproducers"],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if "failing clause(s)" in ln)
    blocks = [ln for ln in lines[start:] if ln.startswith(("GROUP:", "FAIL ", "CRASH ", "TIMEOUT "))]
    assert [ln for ln in blocks if ln.startswith("GROUP:")] == blocks[:1], blocks
    assert lines[lines.index(blocks[0]) + 1].startswith("  most likely at fault: SCHED-17 "), lines[start:start + 6]
    assert blocks[1].startswith("FAIL SCHED-17:"), blocks
    assert "SCHED-7" in lines[lines.index(blocks[0]) + 2]  # pass 1, a consequence
