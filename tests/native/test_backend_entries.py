"""native's own asserts for backend entries a backend leaves NULL (BACK-10).

rc.8 calls a NULL graph-plan or graph_compute entry unchecked (undefined behaviour, BACK-10),
so no conformance check can ask for an abort there; native aborts with a message instead, and
these death tests keep it doing so (backend.c:57's mutant, the plan_free assert deleted, survived
`ggspec check`: no backend in the suite lacks the entries). The backend here is a copy of a CPU
backend's struct with one entry set to NULL.
"""

from __future__ import annotations

import pytest
from forked import assert_aborts  # the shared death-test helper (tests/native is on sys.path)
from ggspec.native import load_lib

ffi, lib = load_lib()

ENTRIES = ("graph_plan_create", "graph_plan_free", "graph_plan_compute", "graph_compute")


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_null_graph_entry_aborts(entry: str) -> None:
    def body() -> None:
        cpu = lib.ggspec_backend_cpu_init()
        backend = ffi.new("struct ggspec_backend *")
        backend.iface = cpu.iface
        backend.context = cpu.context
        setattr(backend.iface, entry, ffi.NULL)
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 16, "no_alloc": True})
        graph = lib.ggspec_new_graph_custom(lib.ggspec_init(params[0]), 8, False)
        if entry == "graph_plan_create":
            lib.ggspec_backend_graph_plan_create(backend, graph)
        elif entry == "graph_plan_free":
            lib.ggspec_backend_graph_plan_free(backend, ffi.NULL)
        elif entry == "graph_plan_compute":
            lib.ggspec_backend_graph_plan_compute(backend, ffi.NULL)
        else:
            lib.ggspec_backend_graph_compute(backend, graph)

    assert_aborts(body, f"backend->iface.{entry} != NULL")
