"""Bad arguments to reference/'s public functions raise the reference's typed errors, naming the
argument (issue 32): each case here was an untyped exception (KeyError, IndexError, struct.error,
OverflowError, AttributeError, MemoryError) found by the fuzz test (tests/fuzzcalls_reference.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from ggspec.reference import alloc, clauses, cpu, ops, sched
from ggspec.reference.clauses import (
    ModelOutOfMemory,
    SpecError,
    UndefinedBehaviour,
    UnknownClause,
    clause,
    parse_chapter,
    require,
    required,
)
from ggspec.reference.ops import HostMemory
from ggspec.reference.types import GGMLType as T
from graph_helpers import host_ctx, tensor, world


@pytest.mark.parametrize(("call", "named", "nearest"), [
    (lambda: clause("TDAT-3"), "'TDAT-3'", "TDATA-3"),
    (lambda: clause("sched-40"), "'sched-40'", "SCHED-40"),
    (lambda: require(False, "CORE-9999"), "'CORE-9999'", "CORE-"),
    (lambda: required(None, "TDATA-3x"), "'TDATA-3x'", "TDATA-3"),
])
def test_an_unknown_clause_id_is_a_lookup_error_naming_it_and_the_nearest(call: object, named: str, nearest: str) -> None:
    with pytest.raises(UnknownClause) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, LookupError) and isinstance(info.value, SpecError)
    text = str(info.value)
    assert f"no clause {named} in spec/" in text and f"(the nearest is {nearest}" in text, text


def test_a_clause_id_that_is_not_a_str_is_refused_even_where_the_condition_holds() -> None:
    with pytest.raises(UnknownClause, match="clause_id must be a clause ID .* not a int: 5"):
        require(True, 5)  # type: ignore[arg-type]
    with pytest.raises(UnknownClause, match="not a list"):
        required(1, ["TDATA-3"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="require: cond must be a bool, got object"):
        require(object(), "TDATA-3")  # type: ignore[arg-type]
    require(True, "TDATA-3")  # the ordinary call: nothing
    assert required(7, "TDATA-3") == 7


def test_parse_chapter_refuses_what_is_not_text_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="parse_chapter: text must be a str, got bytes"):
        parse_chapter(b"### TDATA-3: x", "tdata.md")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="parse_chapter: chapter must be a str, got int"):
        parse_chapter("", 3)  # type: ignore[arg-type]
    assert [c.id for c in parse_chapter("### TDATA-3: x\n- kind: behaviour\n", "t.md")] == ["TDATA-3"]


def test_an_allocator_of_another_scheduler_is_undefined_behaviour_not_an_index_error() -> None:
    w = world()
    s = sched.sched_new(w, [cpu.cpu_init(w)], None, 64)
    foreign = alloc.tallocr_new_measure(w, 32)
    with pytest.raises(UndefinedBehaviour, match=r"\[SCHED-4\].*talloc is none of the scheduler's 1 allocators"):
        sched.allocr_backend(s, foreign)
    node = ops.add(host_ctx(w), tensor(host_ctx(w), T.F32, None, [4]), tensor(host_ctx(w), T.F32, None, [4]))
    with pytest.raises(UndefinedBehaviour, match=r"\[SCHED-4\]"):
        sched.accepting(s, node, foreign)
    assert sched.allocr_backend(s, s.tallocs[0]) is s.backends[0]


@pytest.mark.parametrize("i", [16, 64, -1, 2**70])
def test_an_op_param_slot_outside_op_params_is_a_value_error_naming_i(i: int) -> None:
    t = ops.scale(host_ctx(world()), tensor(host_ctx(world()), T.F32, None, [4]), 0.5)
    for read in (ops.op_param_f32, ops.op_param_i32):
        with pytest.raises(ValueError, match=rf"i is a slot of op_params, 0 to 15, got {i}"):
            read(t, i)
    assert ops.op_param_f32(t, 0) == 0.5 and ops.op_param_i32(t, 15) == 0


def test_get_rows_on_a_node_not_shaped_by_get_rows_is_undefined_behaviour() -> None:
    ctx = host_ctx(world())
    table = tensor(ctx, T.F32, [[1, 2], [3, 4], [5, 6]], [2, 3])
    rows = tensor(ctx, T.I32, [2, 0], [2])
    node = ops.get_rows(ctx, table, rows)
    node.src[1] = tensor(ctx, T.I32, [0, 1, 2, 0, 1], [5])  # more rows than the node holds
    with pytest.raises(UndefinedBehaviour, match=r"\[CORE-65\].*not shaped as ggml_get_rows makes it"):
        ops.compute_get_rows(node, HostMemory(ctx.world))


def test_the_reference_out_of_memory_is_a_typed_error_saying_it_is_ggspecs_own() -> None:
    """Under an address-space limit the model cannot hold a huge buffer's bytes: ModelOutOfMemory
    (a MemoryError), through a world's host memory and through any @checked function."""
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))\n"
        "from ggspec.reference import backend, cpu\n"
        "from ggspec.reference.clauses import ModelOutOfMemory\n"
        "from ggspec.reference.world import World\n"
        "w = World()\n"
        "big = 1 << 34\n"
        "for call in (lambda: w.host_alloc(big, 'the test'), lambda: backend.backend_alloc_buffer(cpu.cpu_init(w), big)):\n"
        "    try:\n"
        "        call()\n"
        "    except ModelOutOfMemory as exc:\n"
        "        print(type(exc).__name__, '|', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2, out.stdout + out.stderr
    assert "the 17179869184 bytes of the test" in lines[0] and "ggspec's own limit" in lines[0]
    assert all(ln.startswith("ModelOutOfMemory |") and "ulimit -v" in ln for ln in lines)
    assert issubclass(ModelOutOfMemory, MemoryError)


def test_clauses_module_is_fuzzed() -> None:
    """The fuzz test covers clauses' public functions too (the KeyErrors above were found there)."""
    from fuzzcalls_reference import reference_api

    names = {fn.name for fn in reference_api().fns}
    assert {"clauses.clause", "clauses.require", "clauses.required", "clauses.parse_chapter",
            "ops.op_param_f32+optional"} <= names
    assert clauses.catalogue() is clauses.catalogue()
