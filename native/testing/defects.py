"""The planted defects of the suite's self-tests, kept out of the library users load.

native/src/ has no trace of them: a defect variant (`native.build.build_variant` with a
`GGSPEC_DEFECT_*` define, as the tests and bench/ build them) compiles a copy of the one source
file a defect touches, with that defect's lines in place of the correct ones (`patched_sources`),
instead of the production file. Each defect is the smallest change that breaks one rule; the
test that plants it names the clause that must then fail.

This folder is not part of the package (pyproject's `packages`): a wheel cannot build a defect
variant, only a checkout can.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SRC_DIR = Path(__file__).resolve().parents[1] / "src"


@dataclass(frozen=True)
class Defect:
    source: str
    #: the correct lines of native/src/<source>, exactly once there
    correct: str
    #: what the variant compiles in their place
    planted: str
    #: what goes wrong, and the clause that must catch it
    why: str


DEFECTS: dict[str, Defect] = {
    "GGSPEC_DEFECT_BOUNDS": Defect(
        "tdata.c",
        "    return range_in(offset, size, ggspec_nbytes(tensor));\n",
        "    return range_in(offset, size, ggspec_nbytes(tensor) + 1); /* planted: one byte past the end */\n",
        "tensor_set's bounds check lets one byte past the end through (TDATA-3)"),
    "GGSPEC_DEFECT_COPY_VIEW_OFFSET": Defect(
        "copy.c",
        "static const void * host_source(const struct ggspec_tensor * src) {\n    return src->data;\n}\n",
        "static const void * host_source(const struct ggspec_tensor * src) {\n"
        "    return src->view_src != NULL ? src->view_src->data : src->data; /* planted: the view's offset skipped */\n"
        "}\n",
        "tensor_copy from a host view reads from its view_src's start, skipping the view's offset (COPY-1)"),
    "GGSPEC_DEFECT_PERMUTE_STRIDES": Defect(
        "ops.c",
        "        r->nb[axes[i]] = a->nb[i];\n",
        "        r->nb[axes[i]] = a->nb[axes[i]]; /* planted: the stride does not move with its axis */\n",
        "PERMUTE moves each extent to its new axis but not its stride (CORE: permute)"),
    "GGSPEC_DEFECT_SCHED_PASS2": Defect(
        "sched.c",
        "    const bool skip_lowest_up = true;\n",
        "    const bool skip_lowest_up = false; /* planted: 2.1 spreads the fallback too */\n",
        "pass 2.1 does not skip the lowest-priority backend (SCHED-8 to SCHED-11)"),
    "GGSPEC_DEFECT_SCHED_DEDUP": Defect(
        "sched.c",
        "    for (int k = 0; k < split->n_inputs; k++) {\n        if (split->inputs[k] == src) {\n            return;\n"
        "        }\n    }\n",
        "    /* planted: every use of an input is listed */\n",
        "pass 4 lists a repeated input of a split again (SCHED-17)"),
    "GGSPEC_DEFECT_SCHED_EVAL_BATCH": Defect(
        "sched.c",
        "        struct ggspec_cgraph gv = ggspec_graph_view(g, j0, j1 + 1);\n",
        "        struct ggspec_cgraph gv = ggspec_graph_view(g, j0, j1); /* planted off-by-one */\n",
        "eval batching computes [j0, j1) instead of [j0, j1]: the wanted node is never computed (SCHED-24)"),
    # issue 30, class 1: state kept past one graph (tests/checks/test_lifetimes_defects.py)
    "GGSPEC_DEFECT_SCHED_RESET_KEYS": Defect(
        "sched.c",
        "    memset(sched->hash_set.keys, 0, n * sizeof(sched->hash_set.keys[0]));\n",
        "    /* planted: the hash set keeps the earlier graphs' tensors */\n",
        "sched reset forgets assignments and copies but leaves the hash set's keys: a scheduler fills "
        "up over several graphs (SCHED-26, CORE-11)"),
    "GGSPEC_DEFECT_GALLOC_NO_GROW": Defect(
        "alloc.c",
        "    if (!galloc->keys_owned || galloc->hash_set.size < hash_size) {\n",
        "    if (!galloc->keys_owned) { /* planted: the table keeps the first graph's size */\n",
        "a graph allocator sizes its tables for the first graph only: a larger graph later fills them "
        "(ALLOC-13, CORE-11)"),
    # issue 30, class 2: a name cut a byte early (tests/checks/test_names_defect.py)
    "GGSPEC_DEFECT_REG_FROM_STR_NAME": Defect(
        "registry.c",
        '        snprintf(name, sizeof(name), "%s", backend_str);\n',
        '        snprintf(name, sizeof(name) - 1, "%s", backend_str); /* planted: one byte short */\n',
        "init_backend_from_str without params keeps 126 bytes of the name where the registry keeps 127: "
        "an entry of a 127-byte (or longer) name is not found by it (REG-12, REG-5)"),
    # issue 30, class 5: a ggml.h graph function (tests/checks/test_graphcpy_defect.py)
    "GGSPEC_DEFECT_GRAPH_CPY_LEAFS": Defect(
        "graph.c",
        "    for (int i = 0; i < src->n_leafs; i++) {\n        dst->leafs[i] = src->leafs[i];\n",
        "    for (int i = 0; i < src->n_nodes; i++) { /* planted: the leafs copied up to the node count */\n"
        "        dst->leafs[i] = src->leafs[i];\n",
        "graph_cpy copies as many leafs as the source has nodes: a graph with more leafs than nodes "
        "loses its last leafs in the copy (CORE-81)"),
    # issue 30, class 4: one optional entry's fallback decided by another's
    # (tests/checks/test_optional_entries.py)
    "GGSPEC_DEFECT_GET_ASYNC_BY_SET": Defect(
        "tdata.c",
        "    if (backend->iface.get_tensor_async == NULL) {\n        ggspec_backend_tensor_get(",
        "    if (backend->iface.set_tensor_async == NULL) { /* planted: the set entry decides */\n"
        "        ggspec_backend_tensor_get(",
        "get_async falls back to tensor_get when the backend lacks set_tensor_async, not get_tensor_async: "
        "a device with only one of the two calls NULL or skips its entry (TDATA-13)"),
    "GGSPEC_DEFECT_RESET_BY_INIT": Defect(
        "buffer.c",
        "    if (buffer->iface.reset != NULL) {\n",
        "    if (buffer->iface.init_tensor != NULL) { /* planted: the init_tensor entry decides */\n",
        "buffer_reset calls the reset entry when the buffer has init_tensor: a buffer with only one of "
        "the two calls NULL or skips its reset (BUF-13)"),
}


def patched_sources(defines: list[str] | tuple[str, ...], out_dir: str) -> dict[str, str]:
    """For the `GGSPEC_DEFECT_*` names among `defines`: the native/src file each touches, patched
    (several defects of one file together), written under `out_dir`; file name -> its path.
    ValueError for a defect name that is not in DEFECTS, or whose lines are not in the source."""
    names = [d.partition("=")[0] for d in defines if d.startswith("GGSPEC_DEFECT_")]
    unknown = [n for n in names if n not in DEFECTS]
    if unknown:
        raise ValueError(f"unknown planted defect {unknown[0]} (native/testing/defects.py has {', '.join(DEFECTS)})")
    texts: dict[str, str] = {}
    for name in names:
        d = DEFECTS[name]
        text = texts.get(d.source) or (SRC_DIR / d.source).read_text(encoding="utf-8")
        if text.count(d.correct) != 1:
            raise ValueError(f"{name}: its lines are not once in native/src/{d.source} (the source changed: "
                             "update native/testing/defects.py)")
        texts[d.source] = text.replace(d.correct, d.planted)
    os.makedirs(out_dir, exist_ok=True)
    out = {}
    for source, text in texts.items():
        path = os.path.join(out_dir, source)
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"/* {source} with planted defects (native/testing/defects.py): not the library users load */\n")
            f.write(f'#line 1 "{SRC_DIR / source}"\n')
            f.write(text)
        out[source] = path
    return out
