"""bench/mutation.py's mutant generator: deterministic, one change per mutant (no compiling)."""

from __future__ import annotations

from benchscripts import load_bench

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


def test_every_mutant_changes_one_place() -> None:
    tool = load_bench("mutation.py")
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
    tool = load_bench("mutation.py")
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
    tool = load_bench("mutation.py")
    mutants = tool.generate_mutants(SNIPPET * 4, "snippet.c")
    first = tool.sample(mutants, 10, seed=7)
    assert first == tool.sample(mutants, 10, seed=7)
    assert first != tool.sample(mutants, 10, seed=8)
    assert len(first) == 10 and len(set(first)) == 10
    assert tool.generate_mutants(SNIPPET, "snippet.c") == tool.generate_mutants(SNIPPET, "snippet.c")
    # the list for a seed is fixed: these records, not only their number
    assert [(m.line, m.kind, m.replacement) for m in tool.sample(tool.generate_mutants(SNIPPET, "s.c"), 3, seed=1)] \
        == [(5, "cmp", "<="), (6, "delete", "return 0;"), (11, "cmp", "!=")]


def test_a_deleted_statement_keeps_the_line_numbers() -> None:
    tool = load_bench("mutation.py")
    text = "void f(void) {\n    report(1,\n           2);\n    done();\n}\n"
    m = next(m for m in tool.generate_mutants(text, "f.c") if m.kind == "delete" and "report" in m.original)
    mutated = m.apply(text)
    assert mutated.count("\n") == text.count("\n")
    assert mutated.splitlines()[3] == "    done();"
    assert m.ident == f"f.c#{m.index}" and tool.generate_mutants(text, "f.c")[m.index] == m


def test_areas_by_call_site() -> None:
    # a helper whose name maps to no area gets the areas of its callers (rc.8's wsp_ggml_is_view_op
    # is called from the scheduler's passes and graph_copy); a public function without callers the default
    tool = load_bench("mutation.py")
    text = """\
static bool is_view_op(int op) { return op == 1; }
static void sched_split_graph(int op) { if (is_view_op(op)) { return; } }
void wsp_ggml_backend_graph_copy(int op) { (void) is_view_op(op); }
void wsp_ggml_backend_free(void * p) { (void) p; }
"""
    areas = tool.function_areas(text)
    assert areas["is_view_op"] == ("GCOPY", "SCHED")
    assert areas["sched_split_graph"] == ("SCHED",)
    assert areas["wsp_ggml_backend_free"] == ("BACK", "BUF", "TDATA")
    assert tool.enclosing_function(text, text.index("return op")) == "is_view_op"
    assert tool.enclosing_function(text, 0) == "" and tool.enclosing_function(text, len(text) - 1) == ""
