"""bench/mutation.py's mutant generator: deterministic, one change per mutant (no compiling)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SNIPPET = """\
#include <stddef.h>
#define LIMIT 16 /* a < b in a comment is not a site */
static int clamp(int a, int b) {
    const char * s = "a < b";  /* nor in a string */
    if (a < b) {
        return b - a;
    }
    total += a / b;
    n_calls++;
    report(a, b);
    return a == 0 ? 1 : 0;
}
"""


def _tool() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "bench" / "mutation.py"
    spec = importlib.util.spec_from_file_location("ggspec_bench_mutation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_mutant_changes_one_place() -> None:
    tool = _tool()
    mutants = tool.generate_mutants(SNIPPET, "snippet.c")
    kinds = {m.kind for m in mutants}
    assert kinds == {"cmp", "const", "swap", "delete", "negate"}
    for m in mutants:
        mutated = m.apply(SNIPPET)
        assert mutated != SNIPPET
        # exactly one contiguous region differs: the same prefix up to the site, the same suffix after it
        assert mutated[:m.offset] == SNIPPET[:m.offset]
        assert mutated[m.offset + len(m.replacement):] == SNIPPET[m.offset + len(m.original):]
        line_text = SNIPPET.splitlines()[m.line - 1]
        assert line_text[m.column - 1:].startswith(m.original.splitlines()[0])


def test_the_expected_sites() -> None:
    tool = _tool()
    described = {(m.line, m.original, m.replacement) for m in tool.generate_mutants(SNIPPET, "snippet.c")}
    assert (5, "<", "<=") in described
    assert (5, "(a < b)", "(!(a < b))") in described
    assert (6, "b - a", "a - b") in described
    assert (6, "return b - a;", "return 0;") in described
    assert (9, "n_calls++;", ";") in described
    assert (10, "report(a, b);", ";") in described
    assert (11, "==", "!=") in described
    assert (11, "1", "2") in described and (11, "1", "0") in described
    # nothing from the comment, the string, the preprocessor line or the declarations
    assert all(line not in (1, 2, 3, 4) for line, _, _ in described)
    # `+=` delimits an operand, so `a / b` is swapped as well as its statement deleted
    assert (8, "a / b", "b / a") in described


def test_stable_for_a_seed() -> None:
    tool = _tool()
    mutants = tool.generate_mutants(SNIPPET * 4, "snippet.c")
    first = tool.sample(mutants, 10, seed=7)
    assert first == tool.sample(mutants, 10, seed=7)
    assert first != tool.sample(mutants, 10, seed=8)
    assert len(first) == 10 and len(set(first)) == 10
    assert tool.generate_mutants(SNIPPET, "snippet.c") == tool.generate_mutants(SNIPPET, "snippet.c")
    # the list for a seed is fixed: these records, not only their number
    assert [(m.line, m.kind, m.replacement) for m in tool.sample(tool.generate_mutants(SNIPPET, "s.c"), 3, seed=1)] \
        == [(5, "cmp", "<="), (6, "delete", "return 0;"), (11, "cmp", "!=")]
