"""bench/mutation.py's semantic operators (issue 30): the expected mutant text on small C and WGSL
snippets, and never a site inside a comment, a string or a preprocessor line (no compiling)."""

from __future__ import annotations

import re

from benchscripts import load_bench

HEADER = """\
typedef struct graph * graph_t;
struct graph {
    int size;
    int n_nodes;
    int n_leafs;
    float * data;
    void (*reset)(graph_t g);
    void (*clear)(graph_t g);
};
"""

C = """\
#define SWAP(a, b) free(a) /* a < b, free(p); in a comment */
static int visit(graph_t g, int a, int b, float * x) {
    const char * s = "free(g); ne[0] g->n_nodes";  // free(g); in a comment
    int ne[4] = {0};
    int total = ne[0] + ne[1];
    for (int i = 0; i < g->n_nodes; i++) {
        total += a;
        x[i] = 0.0f;
    }
    g->data = NULL;
    free(x);
    g->reset(g);
    total = total + b;
    return total + s[0] + g->n_leafs + g->size;
}
"""

WGSL = """\
// a comment: let k = 1u; gid.x
fn tne(k: u32, d: u32) -> u32 { return k * 4u + d; }
fn kern(gid: vec3<u32>) {
    let r = gid.x;
    let c = gid.y;
    var acc = 0.0;
    for (var j = 0u; j < tne(1u, 0u); j++) {
        acc = acc + f32(j);
    }
    let v = tne(r, c);
}
"""


def _mutants(text: str, file: str, headers: str = ""):  # type: ignore[no-untyped-def]
    tool = load_bench("mutation.py")
    return tool, tool.generate_mutants(text, file, "semantic", headers)


def _by(mutants, kind: str) -> set[tuple[int, str, str]]:  # type: ignore[no-untyped-def]
    return {(m.line, " ".join(m.original.split()), " ".join(m.replacement.split())) for m in mutants if m.kind == kind}


def _protected(text: str) -> list[tuple[int, int]]:
    """The spans of comments, string literals and preprocessor lines of `text`."""
    spans = [(m.start(), m.end()) for m in re.finditer(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', text, re.S)]
    spans += [(m.start(), m.end()) for m in re.finditer(r"^#[^\n]*", text, re.M)]
    return spans


def test_every_semantic_kind_on_c() -> None:
    tool, mutants = _mutants(C, "visit.c", HEADER)
    assert {m.kind for m in mutants} == set(tool.SEMANTIC_KINDS)
    # a variable for the latest-declared other one of its type in scope: in the loop, the loop's i;
    # after it (i out of scope), total
    var = _by(mutants, "var")
    assert (7, "a", "i") in var and (7, "total", "i") in var
    assert (13, "b", "total") in var
    assert not any(line > 9 and "i" in (orig, repl) for line, orig, repl in var)
    assert not any(orig == "x" or repl == "x" for _, orig, repl in var)  # float * x has no sibling
    assert not any(orig == "g" for _, orig, _ in var)  # nor graph_t g
    # a field for its neighbour of the same type, both used in the file (not `size` -> data: another type)
    field = _by(mutants, "field")
    assert (6, "n_nodes", "n_leafs") in field and (14, "n_leafs", "n_nodes") in field
    assert (14, "size", "n_nodes") in field
    assert not any(repl == "data" for _, _, repl in field)
    assert (12, "reset", "clear") not in field  # `clear` is not used in the file
    # a constant index for another the file uses with the same array
    assert _by(mutants, "index") == {(5, "0", "1"), (5, "1", "0")}  # not the declaration's ne[4], not s[0]
    # a reset, free or clear dropped
    assert _by(mutants, "reset") == {(10, "g->data = NULL;", ";"), (11, "free(x);", ";"), (12, "g->reset(g);", ";")}
    # two adjacent statements swapped (a declaration and a call, a call and a call)
    order = _by(mutants, "order")
    assert (10, "g->data = NULL; free(x);", "free(x); g->data = NULL;") in order
    assert (11, "free(x); g->reset(g);", "g->reset(g); free(x);") in order
    assert not any("ne[4]" in o and "total" in o for _, o, _ in order)  # two declarations are not swapped
    # a loop bound for a sibling count of the same struct
    assert _by(mutants, "bound") >= {(6, "g->n_nodes", "g->n_leafs")}


def test_no_site_in_comments_strings_or_preprocessor_lines() -> None:
    for text, file, headers in ((C, "visit.c", HEADER), (WGSL, "k.wgsl", "")):
        _, mutants = _mutants(text, file, headers)
        assert mutants
        for m in mutants:
            end = m.offset + len(m.original)
            for a, b in _protected(text):
                assert end <= a or m.offset >= b, (m.describe(), text[a:b])


def test_every_semantic_mutant_changes_one_place_and_keeps_the_lines() -> None:
    _, mutants = _mutants(C, "visit.c", HEADER)
    for m in mutants:
        mutated = m.apply(C)
        assert mutated != C
        assert mutated[:m.offset] == C[:m.offset]
        assert mutated[m.offset + len(m.replacement):] == C[m.offset + len(m.original):]
        assert mutated.count("\n") == C.count("\n")


def test_wgsl_types_come_from_parameters_and_initializers() -> None:
    tool, mutants = _mutants(WGSL, "k.wgsl")
    var = _by(mutants, "var")
    assert (2, "k", "d") in var and (2, "d", "k") in var  # parameters of one type
    assert (7, "j", "c") in var  # the loop's `var j = 0u` is a u32
    # `let r = gid.x` and `let c = gid.y` are u32 (a vec3<u32>'s component), `acc` f32, `j` u32
    assert (10, "c", "r") in var
    assert not any(orig == "acc" or repl == "acc" for _, orig, repl in var)
    assert (4, "x", "y") in _by(mutants, "field") and (5, "y", "x") in _by(mutants, "field")
    assert not any(m.line == 1 for m in mutants)  # the comment
    assert tool.generate_mutants(WGSL, "k.wgsl", "semantic") == mutants


def test_the_classic_operators_are_unchanged_by_default() -> None:
    tool = load_bench("mutation.py")
    classic = tool.generate_mutants(C, "visit.c")
    assert {m.kind for m in classic} <= set(tool.KINDS)
    assert classic == tool.generate_mutants(C, "visit.c", "classic")


def test_sample_by_kind_spreads_and_is_stable() -> None:
    tool, mutants = _mutants(C * 3, "visit.c", HEADER)
    picked = tool.sample_by_kind(mutants, 12, seed=1)
    assert picked == tool.sample_by_kind(mutants, 12, seed=1) and picked != tool.sample_by_kind(mutants, 12, seed=2)
    assert len(picked) == 12 and len(set(picked)) == 12
    counts = {k: sum(1 for m in picked if m.kind == k) for k in tool.SEMANTIC_KINDS}
    assert counts == dict.fromkeys(tool.SEMANTIC_KINDS, 2)
    assert [m.index for m in picked] == sorted(m.index for m in picked)


def test_ggml_c_scope_is_what_the_backend_files_call_outside_if_0() -> None:
    tool = load_bench("mutation.py")
    sources = {
        "ggml.c": "static int helper(int x) { return x + 1; }\n"
                  "int used(int x) { return helper(x); }\n"
                  "int debug_only(int x) { return x; }\n"
                  "static int kernel(int x) { return x * 2; }\n"
                  "int unused(int x) { return kernel(x); }\n",
        "ggml-backend.c": "int f(int x) { return used(x); }\n#if 0\nint g(int x) { return debug_only(x); }\n#endif\n",
        "ggml-alloc.c": "/* unused(1) in a comment */\n",
    }
    assert tool.ggml_c_scope(sources) == frozenset({"used", "helper"})
