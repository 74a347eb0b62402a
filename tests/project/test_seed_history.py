"""Every public function the seed's diff changes has a "Changed in rc.8" note (spec/README.md,
"Which clause covers a function").

The seed (`../shared/seed/*.txt` from the repository root, or $GGSPEC_SEED_DIR) is the diff of
ggml-backend.c from rc.6 to rc.8. Its two sides are rebuilt hunk by hunk (context lines on both),
the public function definitions of each side are read, and a function counts as changed when it
is defined on one side only (added or removed) or with another signature (return type or
arguments). `WSP_GGML_CALL` (a calling-convention macro, empty on every platform but Windows'
CUDA builds) and `static` functions (not API) are left out.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"

_DEF = re.compile(r"^(?!static\b)([A-Za-z_][\w \t*]*?)\b(wsp_ggml_\w+)\s*\(([^(){};]*)\)\s*\{", re.M)
_HEAD = re.compile(r"^### ([A-Z]+-\d+): (.*)$")
_NOTE = "**Changed in rc.8.**"


def _seed_files() -> list[Path]:
    where = os.environ.get("GGSPEC_SEED_DIR")
    folder = Path(where) if where else ROOT.parent / "shared" / "seed"
    return sorted(folder.glob("*.txt"))


def sides(diff: str) -> tuple[str, str]:
    """The rc.6 and the rc.8 side of a unified diff: context lines go to both, hunks apart."""
    old: list[str] = []
    new: list[str] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            old.append("")
            new.append("")
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
    return "\n".join(old), "\n".join(new)


def definitions(source: str) -> dict[str, str]:
    """Public function name (prefix `wsp_` removed) → its normalised signature."""
    source = re.sub(r"\bWSP_GGML_CALL[ \t]+", "", source)
    found: dict[str, str] = {}
    for m in _DEF.finditer(source):
        ret = " ".join(m.group(1).split())
        args = " ".join(m.group(3).split())
        found[m.group(2).removeprefix("wsp_")] = f"{ret} ({args})".replace("wsp_", "")
    return found


def changed_functions(diff: str) -> dict[str, str]:
    """Function → "added" | "removed" | "signature" for every public function the diff changes."""
    old_side, new_side = sides(diff)
    old, new = definitions(old_side), definitions(new_side)
    out: dict[str, str] = {}
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            out[name] = "added"
        elif name not in new:
            out[name] = "removed"
        elif old[name] != new[name]:
            out[name] = "signature"
    return out


def clause_texts() -> dict[str, str]:
    """Clause ID → its head line and prose, from every chapter of spec/ (fences included)."""
    texts: dict[str, str] = {}
    for path in sorted(SPEC.glob("*.md")):
        if path.name == "README.md":
            continue
        current: str | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            m = _HEAD.match(line)
            if m:
                current = m.group(1)
                texts[current] = line + "\n"
            elif line.startswith("## ") or line.startswith("# "):
                current = None
            elif current is not None:
                texts[current] += line + "\n"
    return texts


def names(text: str, function: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(function)}(?![\w])", text) is not None


def notes(text: str) -> list[str]:
    """The "Changed in rc.8" paragraphs of a clause's text."""
    return [p for p in text.split("\n\n") if p.lstrip().startswith(_NOTE)]


def missing_notes(changes: dict[str, str], texts: dict[str, str]) -> list[str]:
    """The changed functions the spec does not account for, each with the reason."""
    missing: list[str] = []
    for function, how in changes.items():
        if how == "removed":
            if not any(names(note, function) for text in texts.values() for note in notes(text)):
                missing.append(f"{function} (removed in rc.8): no 'Changed in rc.8' note names it")
            continue
        covering = [cid for cid, text in texts.items() if names(text, function)]
        if not covering:
            missing.append(f"{function} ({how}): no clause names it")
        elif not any(notes(texts[cid]) for cid in covering):
            missing.append(f"{function} ({how}): none of the clauses naming it ({', '.join(covering)}) "
                           "has a 'Changed in rc.8' note")
    return missing


def test_the_parser_reads_a_known_change() -> None:
    """sides/definitions on a small diff: one signature change, one addition, one static left out."""
    diff = "\n".join([
        "@@ -1,3 +1,7 @@",
        "-void wsp_ggml_f(int a) {",
        "+WSP_GGML_CALL bool wsp_ggml_f(int a) {",
        " }",
        "+void wsp_ggml_g(void) {",
        "+}",
        "+static void wsp_ggml_h(void) {",
        "+}",
    ])
    assert changed_functions(diff) == {"ggml_f": "signature", "ggml_g": "added"}


def test_missing_notes_finds_an_unnoted_function() -> None:
    texts = {"X-1": "### X-1: f\n\n`ggml_f(a)` does it.\n", "X-2": "### X-2: g\n\n`ggml_g()`.\n\n**Changed in rc.8.** New.\n"}
    assert missing_notes({"ggml_f": "signature", "ggml_g": "added"}, texts) == [
        "ggml_f (signature): none of the clauses naming it (X-1) has a 'Changed in rc.8' note"
    ]


def test_every_function_the_seed_changes_has_a_note() -> None:
    files = _seed_files()
    if not files:
        pytest.skip("the seed is not beside the repository (../shared/seed) and GGSPEC_SEED_DIR is not set")
    changes: dict[str, str] = {}
    for path in files:
        changes.update(changed_functions(path.read_text(encoding="utf-8")))
    assert "ggml_backend_sched_new" in changes, "the seed's diff was not read (no change to sched_new found)"
    missing = missing_notes(changes, clause_texts())
    assert not missing, "functions the seed changes without a 'Changed in rc.8' note:\n  " + "\n  ".join(missing)


# --- function bodies --------------------------------------------------------------------------------
#
# A function can change what a caller sees without changing its signature (rc.8's scheduler passes
# are the largest case). `body_changes` attributes every changed code line of the diff to the
# function it lies in (static functions included; comments, blank lines, whitespace and
# `WSP_GGML_CALL` left out, a line removed and added again cancelled) and keeps the functions
# whose head is on both sides (or in neither: only a part of its body is in the diff). Each must
# be in BODY_CHANGES (the clauses whose "Changed in rc.8" note says what changed) or in
# NOT_OBSERVABLE (why no caller can see it), so a seed with another change fails until it is
# written up.

_FN_HEAD = re.compile(r"^(?!(?:if|for|while|switch|return|else|do)\b)[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;]*$")

#: function (prefix `wsp_` removed) -> the clauses whose "Changed in rc.8" note covers its change
BODY_CHANGES: dict[str, tuple[str, ...]] = {
    "sched_split_graph": ("SCHED-7", "SCHED-8", "SCHED-9", "SCHED-10", "SCHED-11", "SCHED-12", "SCHED-13",
                          "SCHED-14", "SCHED-16", "SCHED-17", "SCHED-20", "SCHED-21"),
    "sched_compute_splits": ("SCHED-22", "SCHED-23", "SCHED-24"),
    "sched_reset": ("SCHED-26",),
    "ggml_backend_sched_graph_compute": ("SCHED-26", "SCHED-27"),
    "ggml_backend_sched_init_measure": ("SCHED-28",),
    "ggml_backend_sched_get_buffer": ("SCHED-31",),
    "ggml_backend_sched_get_tallocr": ("SCHED-31",),
    "ggml_backend_sched_free": ("SCHED-34",),
    # the scheduler's struct (fields outside any function): buffer types, reset flag, eval callback
    "(no function)": ("SCHED-3", "SCHED-24", "SCHED-26"),
    # the hunk that holds `#define GGML_MAX_BACKENDS` follows reg_cpu_init in the file
    "ggml_backend_reg_cpu_init": ("SCHED-2",),
    "ggml_backend_cpu_graph_compute": ("BACK-12",),
    "ggml_backend_cpu_graph_plan_create": ("BACK-10",),
    "ggml_backend_cpu_supports_op": ("CPU-11",),
    "ggml_backend_graph_plan_compute": ("BACK-11",),
    "ggml_backend_is_cpu": ("CPU-12",),
    "ggml_backend_reg_init_backend_from_str": ("REG-5",),
    "ggml_backend_tensor_copy": ("COPY-4", "COPY-5", "COPY-6", "COPY-7"),
    "ggml_backend_tensor_set": ("TDATA-2",),
    "ggml_backend_tensor_get": ("TDATA-8",),
    "ggml_backend_tensor_set_async": ("TDATA-13",),
    "ggml_backend_tensor_get_async": ("TDATA-13",),
    "ggml_backend_view_init": ("TDATA-18",),
    "ggml_backend_graph_copy": ("GCOPY-4",),
    "graph_init_tensor": ("GCOPY-3",),
}

#: function -> why its body change is invisible to a caller
NOT_OBSERVABLE: dict[str, str] = {
    "get_allocr_backend": "the hunk is the size of the debug-only `causes` table, compiled out (#if 0)",
    "sched_print_assignments": "debug printing, called only under DEBUG_PASSn, which rc.8 leaves undefined",
    "ggml_backend_buffer_get_alignment": "reads the type through the renamed accessor buffer_get_type: same value",
    "ggml_backend_buffer_get_alloc_size": "reads the type through the renamed accessor buffer_get_type: same value",
    "ggml_backend_cpu_buffer_free_buffer": "a GGML_UNUSED(buffer) dropped",
    "ggml_backend_cpu_buffer_get_tensor": "its bounds asserts dropped: the public tensor_get asserts the same first",
    "ggml_backend_cpu_buffer_set_tensor": "its bounds asserts dropped: the public tensor_set asserts the same first",
    "ggml_backend_cpu_buffer_type": "the static type object renamed",
    "ggml_backend_register": "the slot index's C type (int to size_t) for at most 16 entries",
}


def _normalised(line: str) -> str:
    line = re.sub(r"\bWSP_GGML_CALL\s+", "", re.sub(r"//.*", "", line))
    return " ".join(line.split()).replace("wsp_", "").replace("WSP_", "")


def body_changes(diff: str) -> dict[str, int]:
    """Function → its changed code lines, for functions whose head is on both sides of the diff
    or in neither (see above); `(no function)` for lines before any function head of a hunk."""
    removed: dict[str, Counter[str]] = {}
    added: dict[str, Counter[str]] = {}
    heads_old: set[str] = set()
    heads_new: set[str] = set()
    current = "(no function)"
    for line in diff.splitlines():
        if line.startswith("@@"):
            m = _FN_HEAD.match(re.sub(r"^@@ [^@]+ @@ ?", "", line))
            current = m.group(1).removeprefix("wsp_") if m else "(no function)"
            continue
        if not line or line[0] not in " +-":
            continue
        m = _FN_HEAD.match(line[1:])
        if m:
            current = m.group(1).removeprefix("wsp_")
            if line[0] in " -":
                heads_old.add(current)
            if line[0] in " +":
                heads_new.add(current)
        text = _normalised(line[1:])
        if line[0] == " " or not text or text.startswith(("/*", "*")):
            continue
        (removed if line[0] == "-" else added).setdefault(current, Counter())[text] += 1
    out: dict[str, int] = {}
    for name in sorted(removed.keys() | added.keys()):
        old, new = removed.get(name, Counter()), added.get(name, Counter())
        n = sum((old - new).values()) + sum((new - old).values())
        if n and (name in heads_old) == (name in heads_new):
            out[name] = n
    return out


def test_body_changes_reads_a_known_change() -> None:
    """A changed line in a function whose head is context counts; a moved line, a comment and a
    function added whole do not (the last is the signature test's)."""
    diff = "\n".join([
        "@@ -1,6 +1,9 @@",
        " static void sched_f(int a) {",
        "-    g(a);",
        "+    h(a); // new",
        "     k(a);",
        "-    m(a);",
        "+    m(a);",
        "+    // a comment",
        " }",
        "+static void sched_new_one(void) {",
        "+    n();",
        "+}",
    ])
    assert body_changes(diff) == {"sched_f": 2}


def test_every_body_the_seed_changes_is_written_up() -> None:
    files = _seed_files()
    if not files:
        pytest.skip("the seed is not beside the repository (../shared/seed) and GGSPEC_SEED_DIR is not set")
    diff = "\n".join(path.read_text(encoding="utf-8") for path in files)
    signatures = changed_functions(diff)
    bodies = {f: n for f, n in body_changes(diff).items() if f not in signatures}
    assert "sched_split_graph" in bodies, "the seed's diff was not read (no change to sched_split_graph found)"
    unlisted = sorted(set(bodies) - set(BODY_CHANGES) - set(NOT_OBSERVABLE))
    assert not unlisted, f"function bodies the seed changes that are neither in BODY_CHANGES nor in NOT_OBSERVABLE: {unlisted}"
    stale = sorted((set(BODY_CHANGES) | set(NOT_OBSERVABLE)) - set(bodies))
    assert not stale, f"listed as changed but the seed's diff does not change their bodies: {stale}"
    texts = clause_texts()
    unnoted = [f"{f}: {cid}" for f, cids in BODY_CHANGES.items() for cid in cids if not notes(texts.get(cid, ""))]
    assert not unnoted, "clauses named for a changed body without a 'Changed in rc.8' note:\n  " + "\n  ".join(unnoted)
