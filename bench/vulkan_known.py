"""The CPU side of the llama-cpp-python 0.2.38 / 0.2.56 / 0.2.78 known-failures files: the entries of
the ggml-python build whose ggml-backend.c and ggml-alloc.c are the same code, for the same clauses.

    python bench/vulkan_known.py --write        # (re)write the part between the markers of each file

What each version shares with a ggml-python sdist (diff of the vendored sources, both sdists as
pinned in conformance/adapters/ggml_python.py):

- 0.2.38's ggml-backend.c and ggml-alloc.c are ggml-python 0.0.26's byte for byte (ggml.c: 135
  lines differ);
- 0.2.56's ggml-backend.c is 0.0.30's, its ggml-alloc.c 0.0.28's (= 0.0.30's) byte for byte;
- 0.2.78's ggml-backend.c is 0.0.36's but for two changes: buffer_copy_tensor calls the
  destination buffer's own cpy_tensor (COPY-6's erratum fixed) and view_init takes no buffer
  (the suite's view_init(buffer, tensor) is then missing: unsupported); its ggml-alloc.c differs
  in 8 lines.

Those entries were each diagnosed on the ggml-python build (their reasons say how); the
llama-cpp-python file repeats them for its target, with the shared reason key where there is one,
else the reason prefixed by what makes it apply. The Vulkan entries follow the marker, written by
hand from the `--device vulkan` runs (docs/vulkan-port.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import tomllib

KNOWN = Path(__file__).resolve().parents[1] / "conformance" / "known"
#: llama-cpp-python version -> (the ggml-python version of the same ggml-backend.c, how they relate)
SAME_CODE = {
    "0.2.38": ("0.0.26", "ggml-backend.c and ggml-alloc.c identical to ggml-python 0.0.26's"),
    "0.2.56": ("0.0.30", "ggml-backend.c and ggml-alloc.c identical to ggml-python 0.0.30's"),
    "0.2.78": ("0.0.36", "ggml-backend.c ggml-python 0.0.36's but for the COPY-6 fix and view_init's signature"),
}
#: how the reason of each entry of the device's own failures starts
VULKAN_PREFIX = "Vulkan device"

_DEFECTS = "bench/vulkan_defects.c (no ggspec; python bench/vulkan_defects.py)"


def clear_reason(v: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; still in 0.2.78, the last of this API "
            "generation): ggml_backend_vk_buffer_clear hands its byte to vkCmdFillBuffer (ggml_vk_buffer_memset), "
            "whose data is a 32-bit word repeated, so clear(0x22) leaves 22 00 00 00 in every word and the bytes a "
            "check reads back after it differ (BUF-9). Shown without ggspec by " + _DEFECTS + ": `clear 0xa5` reads "
            "back a5 00 00 00 on 0.2.38, 0.2.56 and 0.2.78 on lavapipe. Pinned: the check's explicit example on the "
            "plain device (deterministic.DEVICE_CASES; tests/adapters/test_vulkan_findings.py replays it)")


def mul_mat_reason(v: str, more: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}): the scheduler gives the device an F32 "
            "MUL_MAT of 4x4 weights; supports_op accepts it and graph_compute returns success, but the node is not "
            "computed (its tensor keeps the buffer's zeros: 'vs 0.0'), CORE-61 as SCHED-20/21/22/38 observe it. Shown "
            "without ggspec by " + _DEFECTS + ": `mul_mat 4 4 1` leaves 0 on 0.2.38 and 0.2.78 (0.2.56 computes "
            "wrong values), while `mul_mat 64 64 1` is exact on all three on the same driver, so not the driver's "
            "arithmetic" + more + ". Pinned: tests/adapters/test_vulkan_findings.py replays the check's example")


def empty_buffer_reason(v: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; fixed in 0.2.56): the device's "
            "alloc_buffer(0) aborts (GGML_ASSERT ggml-vulkan.cpp:658 'size > 0' in ggml_vk_create_buffer), which the "
            "scheduler's measuring allocator asks for (BUFT-2: any size is an allocation), so ggml_backend_sched_"
            "init_measure dies with SIGABRT. 0.2.56's ggml_vk_create_buffer returns an empty buffer for size 0 "
            "(those checks pass there). Every example of these checks that gives the scheduler the device")


def missing_op_reason(v: str) -> str:
    return (f"{VULKAN_PREFIX} (llama-cpp-python {v}): rc.8's scheduler (0.2.38's ggml-backend.c is rc.8's lineage) "
            "never asks supports_op (SCHED-33) and gives the decoder fixture's GET_ROWS to the device, whose "
            "supports_op refuses it (truthfully); graph_compute then aborts ('ggml_vulkan: Error: Missing op: "
            "GET_ROWS', GGML_ASSERT ggml-vulkan.cpp:3888) where spec/core.md ('supports_op tells the truth') asks it "
            "to refuse the graph (return false, compute nothing). A defect of the port against that rule; note for "
            "the lead: every upstream GPU backend of this generation aborts there, so the rule may be stricter than "
            "upstream's contract. 0.2.78 computes GET_ROWS on the device. The fixtures are fixed (every seed)")

HEADER = """# Known failures of target llama-cpp-python-{v}: llama.cpp {what}, vendored in llama-cpp-python {v}, with its
# Vulkan backend (`--device vulkan`, conformance/adapters/vulkan_device.py; docs/vulkan-port.md).
# `ggspec check --target llama-cpp-python-{v} [--device vulkan]` uses this file by default.
# Part 1 (generated by bench/vulkan_known.py): the CPU side, the same code as ggml-python {gp}
# ({rel}), so the entries of conformance/known/ggml-python-{gp}.toml, each diagnosed on that build,
# apply here for the same clauses and checks.
# Part 2 (the entries whose reason starts "Vulkan device"): the device's own failures, each with its diagnosis.
"""


def _toml(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def cpu_part(version: str) -> str:
    from ggspec.conformance.adapters.ggml_python import SDISTS

    gp, rel = SAME_CODE[version]
    src = tomllib.loads((KNOWN / f"ggml-python-{gp}.toml").read_text(encoding="utf-8"))
    shared = tomllib.loads((KNOWN / "_reasons.toml").read_text(encoding="utf-8")).get("reasons", {})
    own = src.get("reasons", {})
    name = f"llama-cpp-python-{version}"
    what = SDISTS[name].what.split("llama.cpp of ", 1)[-1].split(", vendored")[0]
    lines = [HEADER.format(v=version, what=what, rel=rel, gp=gp).rstrip("\n"), ""]
    extra = dict(VULKAN.get(version, {}))
    for e in src.get("known", []):
        kind = next(k for k in ("clause", "check", "area") if k in e)
        reason = e["reason"]
        if (kind, e[kind], reason) in NOT_HERE.get(version, {}):
            continue
        device = extra.pop((kind, e[kind]), None)
        if device is not None:  # the same check fails on the device for another reason: both said
            cpu = shared.get(reason) or own.get(reason, reason)
            reason = f"{device}. On the mock (without --device vulkan), as on ggml-python {gp}: {cpu}"
        elif reason not in shared:  # inline (or the file's own key): say why it applies here
            text = own.get(reason, reason)
            reason = f"As on ggml-python {gp} ({rel}): {text}"
        lines.append("[[known]]")
        lines.append(f"{kind} = {_toml(e[kind])}")
        lines.append(f"reason = {_toml(reason)}")
        lines.append(f"targets = [{_toml(name)}]")
        if e.get("flaky"):
            lines.append("flaky = true")
        lines.append("")
    for (kind, item), reason in CPU_HERE.get(version, {}).items():  # this version's own, on the CPU side
        lines += ["[[known]]", f"{kind} = {_toml(item)}", f"reason = {_toml(reason)}", f"targets = [{_toml(name)}]", ""]
    for (kind, item), reason in extra.items():  # the device's own failures
        lines += ["[[known]]", f"{kind} = {_toml(item)}", f"reason = {_toml(reason)}", f"targets = [{_toml(name)}]"]
        lines += ["flaky = true", ""] if item in FLAKY else [""]
    made = {(k, e[k]) for e in src.get("known", []) for k in ("clause", "check", "area") if k in e}
    made |= set(VULKAN.get(version, {})) | set(CPU_HERE.get(version, {}))
    for e in kept(version, made):  # written into the file by hand, for this version only: kept as they are
        kind = next(k for k in ("clause", "check", "area") if k in e)
        lines += ["[[known]]", f"{kind} = {_toml(e[kind])}", f"reason = {_toml(e['reason'])}",
                  f"targets = [{', '.join(_toml(t) for t in e.get('targets', [name]))}]"]
        lines += ["flaky = true", ""] if e.get("flaky") else [""]
    return "\n".join(lines)


def kept(version: str, made: set[tuple[str, str]]) -> list[dict[str, object]]:
    """The entries of the version's file as it is that this script does not write (another part of
    the suite's diagnosis of this version, e.g. a check that only its ggml-backend.c fails): kept."""
    path = KNOWN / f"llama-cpp-python-{version}.toml"
    if not path.is_file():
        return []
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get("known", [])
    return [e for e in entries if not any((k, e[k]) in made for k in ("clause", "check", "area") if k in e)]


def cont_reason(v: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; still in 0.2.78): supports_op answers true "
            "for CONT of any type (it is in the list of operations accepted unconditionally), but the device copies "
            "through ggml_vk_get_cpy_pipeline, which has pipelines for F32->F32, F32->F16 and F16->F16 only: an I32 "
            "CONT aborts graph_compute ('Missing CPY op for types: i32 i32', GGML_ASSERT(false)). supports_op does "
            "not tell the truth (BACK-15; BACK-7 as the check observes it). The check's explicit example (seed=0) "
            "pins it: every seed")


def rows_reason(v: str, line: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; not judged on 0.2.78, which lacks "
            "view_init): supports_op answers true for MUL of any layout (ADD, SCALE, NORM and SOFT_MAX too: the list "
            "of operations accepted unconditionally), but ggml_vk_op_f32, which computes them all, asserts "
            f"'op == GGML_OP_CPY || ggml_vk_dim01_contiguous(src0)' (ggml-vulkan.cpp:{line}): a source whose rows are "
            "not adjacent (every other row of a root, a view CORE-56 allows: elements adjacent) aborts graph_compute, "
            "even with one row. supports_op does not tell the truth (BACK-15), seen as CORE-57. Drawn at ci size, "
            "seed 1 (case 'rows', shape (1, 1, 1), on the plain device); pinned by tests/adapters/test_vulkan_findings.py "
            "(that example replayed)")


def _upstream_case(fails: str, case: str) -> str:
    """The end of a kernel finding's reason: upstream's own test agrees, and the explicit example pins it."""
    return (f"Upstream's own test-backend-ops fails {fails}; bench/vulkan_upstream_ops.py). Pinned: the check's "
            f"explicit example, {case} on the plain device (every seed); tests/adapters/test_vulkan_findings.py "
            "replays it")


def scale_reason() -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python 0.2.56; fixed in 0.2.78): SCALE adds its "
            "factor instead of multiplying by it: the scale_f32 shader of 0.2.56's ggml_vk_generate_shaders.py "
            "(scale_body, the SPIR-V in ggml-vulkan-shaders.hpp) writes data_a[i] + p.param1, where 0.2.78's writes "
            "data_a[i] * p.param1 (0.2.38's older shader multiplies too). CORE-59: every element differs "
            "(x + 2 for 2x). " + _upstream_case("the same case on this build (SCALE ne [10,10,10,10], scale 2: NMSE 0.99",
                                                 "that case"))


def norm_reason(v: str, line: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; fixed in 0.2.78): NORM ignores its eps: "
            f"the norm_f32 shader of {v}'s ggml_vk_generate_shaders.py fixes 'const float eps = 1e-5f' (line {line}) "
            "and ggml_vk_norm passes no op_params (its RMS_NORM passes its eps); 0.2.78's ggml_vk_norm passes "
            "op_params[0]. CORE-66: with eps 0.1 every element differs (x/sqrt(var + 1e-5) for x/sqrt(var + 0.1)). "
            + _upstream_case("the same cases on this build (NORM eps 0.001 and 0.1",
                             "test-backend-ops' NORM case (ne [64,10,10,10], eps 0.1)"))


def repeat_reason(op: str) -> str:
    return (f"a defect of the port (llama-cpp-python 0.2.38; fixed in 0.2.56): {op} with b repeated along "
            "dimension 0 is wrong: 0.2.38's add/mul shaders read b at the destination's flat index modulo b's "
            "element count (data_b[idx % p.KY], ggml_vk_add/ggml_vk_mul pass ggml_nelements(src1)), which is right "
            "only when b repeats as one whole block (rows, or dimension 2); with a [16,4,2] and b [8,4,2] 112 of "
            "128 elements differ. Upstream's own test-backend-ops fails the same broadcasts on this build (ADD and "
            "MUL with nr > 1 in dims 0 to 2; bench/vulkan_upstream_ops.py); 0.2.56 indexes b by its own extents. "
            "Pinned: the check's explicit example (b repeated along dim 0, on the plain device: every seed); "
            "tests/adapters/test_vulkan_findings.py replays it")


def broadcast_reason(v: str, what: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}): {what} computed on the device with "
            "each operand in a buffer of its own is off by whole values (BACK-15's device paths; upstream's own "
            "test-backend-ops fails the same shapes on this build: broadcast ADD/MUL, batched MUL_MAT). The check's "
            "explicit example (seed=0) pins it: every seed")


def paths_reason(v: str, check: str, more: str = "") -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; still in 0.2.78): the check's two device "
            "buffers are cleared to 0x11 and 0x22 and compared whole, and ggml_backend_vk_buffer_clear fills 32-bit "
            "words (vkCmdFillBuffer), so every byte the check did not write reads 11 00 00 00 / 22 00 00 00 (BUF-9's "
            "clear finding, bench/vulkan_defects.c `clear 0xa5`). Only that: replayed with the device buffers "
            "cleared byte by byte (tensor_set of the whole buffer), the check's explicit examples and seed 12345 "
            f"agree with the reference on {v}{more}. Pinned: the explicit example (shift=1, seed=0), "
            f"tests/adapters/test_vulkan_findings.py ({check})")


def reversed_copy_reason() -> str:
    return paths_reason("0.2.38", "copy.copies_on_the_plain_device", (
        " but for a second defect of the port, fixed in 0.2.56: 0.2.38's ggml_backend_vk_buffer_cpy_tensor passes "
        "its source first to ggml_vk_buffer_copy, whose first argument is the destination, so tensor_copy between "
        "two Vulkan buffers writes the destination's bytes over the source and leaves the destination as it was "
        "(COPY-9; COPY-6 as observed). Shown without ggspec by " + _DEFECTS + ": `copy 61` changes all 61 source "
        "bytes on 0.2.38, none on 0.2.56 and 0.2.78 (they pass dst_buf first)"))


def view_reason(v: str, more: str = "") -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; still in 0.2.78): the check clears its two "
            "device buffers to 0x11 and 0x22 and reads bytes around the view's data, and ggml_backend_vk_buffer_clear "
            "fills 32-bit words (bench/vulkan_defects.c `clear 0xa5`), so the bytes it did not write read 11 00 00 00 "
            "(TDATA-4/8/13, COPY-12 as observed). Replayed with the device buffers cleared byte by byte, the explicit "
            f"view_init example (offset 3, seed 0) " + (more or f"agrees with the reference on {v}") + ". The gallocr "
            "and allocr examples are unsupported from 0.2.56 (no ggml_tallocr_new_from_buffer), the view_init ones on "
            "0.2.78 (view_init takes no buffer), so the check judges nothing there. Pinned: that explicit example, "
            "every seed")


def sched_copy_reason() -> str:
    return (f"{VULKAN_PREFIX} (llama-cpp-python 0.2.38): the machine's scheduler copies a split input from a Vulkan "
            "buffer into the second device's buffer (the mock's) with ggml_backend_tensor_copy, and 0.2.38's "
            "ggml_backend_buffer_copy_tensor calls the *source* buffer's cpy_tensor (rc.8's erratum COPY-6, kept "
            "here: see the COPY-6 entry). Vulkan's cpy_tensor checks only that the source is a Vulkan tensor and "
            "reads the destination's extra as a Vulkan tensor's (NULL on the mock): SIGSEGV in "
            "ggml_backend_vk_buffer_cpy_tensor under ggml_backend_tensor_copy under ggml_backend_sched_graph_compute "
            "(a core dump of the crashed worker, read with gdb). So the erratum of ggml-backend.c, as the Vulkan "
            "device meets it; ggml-backend.c calls the destination buffer's entry from 0.2.78 (COPY-6 fixed). "
            "Seed-dependent in the run: seed 1 at ci size reaches it (example 72, every time); pinned by "
            "tests/adapters/test_vulkan_findings.py, which runs the check so")


def budget_reason(v: str, dev: str) -> str:
    return (f"{VULKAN_PREFIX} (llama-cpp-python {v}), a cost, not a defect found: the check's budget runs out at ci "
            "size before its examples finish. Each example is expected to abort (a GGML_ASSERT of the scheduler), so "
            "it runs in a worker of its own, which starts the Vulkan device again (ggml_vk_init builds every "
            "pipeline on lavapipe; a Vulkan instance does not cross a fork): watched on 0.2.38, a new example worker "
            "every 10 to 13 s, each running (not blocked) but given about 15% of a core on the shared machine (load "
            "10 to 19 on 2 cores). At dev size (10 examples, seed 1) the check passed on the device in "
            f"{dev}; at ci size it timed out at 300 s, and once alone at --check-budget 1200 (niced, load 10 to 15). "
            "Not measured on an idle machine. Flaky: by the machine's load, not by the seed; a run that finishes in "
            "its budget is judged as usual")


def load_reason(v: str, passed: str) -> str:
    return (f"{VULKAN_PREFIX} (llama-cpp-python {v}), a cost, not a defect found: the check's 300 s budget ran out "
            f"in the ci run of seed 2 (.ci/run's Vulkan step, load 10 to 13 on the shared 2 cores), where the ci run "
            f"of seed 1 passed it, all 40 examples, in {passed}. Its examples start the Vulkan device (on lavapipe "
            "ggml_vk_init builds every pipeline on the CPU) and run the scheduler on it; the time is the machine's "
            "load, not the seed. Flaky: a run that finishes in its budget is judged as usual")


def empty_clear_reason(v: str) -> str:
    return (f"{VULKAN_PREFIX}, a defect of the port (llama-cpp-python {v}; still in 0.2.78 and 0.2.79): "
            "stateful.lifecycle clears every buffer it makes, and its alloc_buffer rule may ask the device for 0 bytes "
            "(BUFT-2: any size is an allocation). Since 0.2.56 ggml_vk_create_buffer returns an empty vk_buffer for "
            "size 0 without setting its ctx, so buffer_clear of that buffer aborts in ggml_vk_buffer_memset "
            "(GGML_ASSERT 'dst->ctx == ctx') where BUF-9 asks a clear of no bytes to do nothing; the run blames the "
            "machine's clauses (BUF-4/9/11/13, BACK-2). Seed-dependent in the run (seed 3 draws it at ci size); "
            "shown without ggspec by " + _DEFECTS + ": `empty` aborts there; pinned by "
            "tests/adapters/test_vulkan_findings.py (the machine's steps init_vdev plain, alloc_buffer 0)")


#: version -> the ggml-python file's entries (kind, name, reason key) that do not hold for this
#: version's code -> why; left out of its file
NOT_HERE: dict[str, dict[tuple[str, str, str], str]] = {
    "0.2.78": {
        ("clause", "COPY-7", "keeps-erratum-copy-copy-12"): (
            "COPY-6's erratum (a copy calls the source buffer's cpy_tensor, NULL on the virtual device) is fixed in "
            "0.2.78's buffer_copy_tensor: COPY-7's three checks pass on the mock and with --device vulkan at ci "
            "size, seeds 1 and 2"),
        ("clause", "GCOPY-1", "keeps-erratum-copy-copy-12"): (
            "the same fix: GCOPY-1 fails on 0.2.78 by its other entry (the NULL source slot skipped) and by "
            "backends_compute_in_their_memory's check entry (the allocator over a buffer), not by a SIGSEGV"),
        ("clause", "GCOPY-3", "keeps-erratum-copy-copy-12"): (
            "the same fix: GCOPY-3 fails on 0.2.78 only through gcopy.copy_keeps_every_source_slot, whose "
            "difference is the allocator over a buffer (the check entry CPU_HERE adds)"),
        ("clause", "GCOPY-5", "keeps-erratum-copy-copy-12"): (
            "the same fix; GCOPY-5's checks are unsupported on 0.2.78 or pass (it lacks ggml_tallocr_new_from_buft)"),
    },
}

#: version -> entries of its own for the CPU side, (kind, name) -> a reason key of _reasons.toml
CPU_HERE: dict[str, dict[tuple[str, str], str]] = {
    "0.2.78": {("check", "gcopy.copy_keeps_every_source_slot"): "0.0.27-where-allocator-over-buffer"},
}

#: the device's entries whose difference depends on the machine, not the seed (known.py: flaky)
FLAKY = frozenset({"sched.buffer_no_backend_supports", "sched.foreign_backend", "sched.input_without_buffer",
                   "sched.measure_twice"})

#: version -> (kind, name) -> the device's reason: for a copied CPU entry, said beside its reason
#: (the check fails on the mock for that one and on the device for this one); else a new entry
VULKAN: dict[str, dict[tuple[str, str], str]] = {
    "0.2.38": {
        ("check", "backend.synchronize_completes_pending_work"): clear_reason("0.2.38"),
        ("check", "ops.mul_computes"): rows_reason("0.2.38", "2785") + ". And " + repeat_reason("MUL"),
        ("check", "ops.add_computes"): f"{VULKAN_PREFIX}, " + repeat_reason("ADD"),
        ("check", "ops.norm_computes"): norm_reason("0.2.38", "1784"),
        ("check", "sched.allocation_graph"): mul_mat_reason("0.2.38", ""),
        ("check", "sched.cpu_first_device_last"): mul_mat_reason("0.2.38", " (here the n2 node)"),
        **{("check", c): empty_buffer_reason("0.2.38") for c in (
            "sched.buffer_owner", "sched.free_releases_everything", "sched.graph_of_views_only",
            "alloc.cpu_spare_bytes_after_a_compute")},
        **{("check", f"sched.fixture_{c}"): missing_op_reason("0.2.38") for c in ("copies", "inputs", "outputs", "plan")},
        ("check", "backend.supports_op_tells_the_truth"): cont_reason("0.2.38"),
        ("check", "backend.three_buffers_on_the_plain_device"): broadcast_reason(
            "0.2.38", "ADD with b broadcast (16 of 48 elements wrong; fixed in 0.2.56, exact there and in 0.2.78)"),
        ("check", "backend.device_paths_on_the_plain_device"): paths_reason(
            "0.2.38", "backend.device_paths_on_the_plain_device"),
        ("check", "copy.copies_on_the_plain_device"): reversed_copy_reason(),
        ("check", "stateful.scheduler"): sched_copy_reason(),
        ("check", "sched.buffer_no_backend_supports"): budget_reason("0.2.38", "125 s"),
        ("check", "sched.foreign_backend"): budget_reason("0.2.38", "120 s"),
        ("check", "sched.input_without_buffer"): load_reason("0.2.38", "199 s"),
        ("check", "sched.measure_twice"): load_reason("0.2.38", "98 s"),
        ("check", "views.data_through_a_view_placed_elsewhere"): view_reason("0.2.38", (
            "still differs on 0.2.38, by the second defect of copies.copies_on_the_plain_device's entry, fixed in "
            "0.2.56: tensor_copy(view, other) between two Vulkan buffers copies the wrong way (buffer cpy_tensor "
            "passes its source first to ggml_vk_buffer_copy), so A ends with B's 0x22 where the root's bytes were; "
            "0.2.56 agrees")),
        ("check", "stateful.lifecycle"): empty_buffer_reason("0.2.38").replace(
            "which the scheduler's measuring allocator asks for (BUFT-2: any size is an allocation), so "
            "ggml_backend_sched_init_measure dies with SIGABRT. 0.2.56's ggml_vk_create_buffer returns an empty buffer "
            "for size 0 (those checks pass there). Every example of these checks that gives the scheduler the device",
            "which stateful.lifecycle's alloc_buffer rule asks for on the plain device (BUFT-2: any size is an "
            "allocation); the run blames the machine's clauses (BUF-4/9/11/13, BACK-2). Seed-dependent in the run "
            "(seed 3 draws it at ci size); pinned by tests/adapters/test_vulkan_findings.py (the machine's steps "
            "init_vdev plain, alloc_buffer 0) and bench/vulkan_defects.c `empty`. 0.2.56 returns an empty buffer, "
            "whose clear then aborts (see 0.2.56's entry)"),
    },
    "0.2.56": {
        ("check", "backend.synchronize_completes_pending_work"): clear_reason("0.2.56"),
        ("check", "backend.supports_op_tells_the_truth"): cont_reason("0.2.56"),
        ("check", "ops.mul_computes"): rows_reason("0.2.56", "3172"),
        ("check", "ops.scale_computes"): scale_reason(),
        ("check", "ops.norm_computes"): norm_reason("0.2.56", "1896"),
        ("check", "backend.device_paths_on_the_plain_device"): paths_reason(
            "0.2.56", "backend.device_paths_on_the_plain_device"),
        ("check", "copy.copies_on_the_plain_device"): paths_reason("0.2.56", "copy.copies_on_the_plain_device"),
        ("check", "views.data_through_a_view_placed_elsewhere"): view_reason("0.2.56"),
        ("check", "sched.buffer_no_backend_supports"): budget_reason("0.2.56", "184 s"),
        ("check", "stateful.lifecycle"): empty_clear_reason("0.2.56"),
    },
    "0.2.78": {
        ("check", "backend.synchronize_completes_pending_work"): clear_reason("0.2.78"),
        ("check", "sched.allocation_graph"): mul_mat_reason("0.2.78", ""),
        ("check", "backend.supports_op_tells_the_truth"): cont_reason("0.2.78"),
        ("check", "backend.three_buffers_on_the_plain_device"): broadcast_reason(
            "0.2.78", "MUL_MAT broadcast over dim 2 (every element left 0: not computed; ADD's broadcast is exact here)"),
        ("check", "backend.device_paths_on_the_plain_device"): paths_reason(
            "0.2.78", "backend.device_paths_on_the_plain_device"),
        ("check", "copy.copies_on_the_plain_device"): paths_reason("0.2.78", "copy.copies_on_the_plain_device"),
        ("check", "stateful.lifecycle"): empty_clear_reason("0.2.78"),
    },
}


def write(version: str) -> Path:
    """Write the version's file and put it in tools/known_files.py's form (a reason two entries give
    moves into the shared _reasons.toml, which is written too; no other file may change)."""
    from ggspec.conformance.tools.known_files import REASONS_FILE, rewrite

    path = KNOWN / f"llama-cpp-python-{version}.toml"
    path.write_text(cpu_part(version), encoding="utf-8")
    formed = rewrite(KNOWN)
    mine = {KNOWN / f"llama-cpp-python-{v}.toml" for v in SAME_CODE} | {KNOWN / REASONS_FILE}
    others = [p for p, text in formed.items() if p not in mine and p.read_text(encoding="utf-8") != text]
    if others:
        sys.exit(f"rewriting would change {', '.join(p.name for p in others)}: not ours")
    for p in mine:
        if p in formed:
            p.write_text(formed[p], encoding="utf-8")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    for v in SAME_CODE:
        print(write(v) if args.write else cpu_part(v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
