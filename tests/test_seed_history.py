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
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
