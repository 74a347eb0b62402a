"""ggspec's reference model of the ggml-backend C API.

The model follows **whisper.rn 0.4.0-rc.8** (`package/cpp/ggml-backend.c`, the same code as
upstream ggml's `src/ggml-backend.c` of 2024-01-18). Every rule is a clause of spec/; the place
that enforces a clause names it, with `require(cond, "ID")` for an assert-kind clause and the
`@implements("ID")` decorator for a behaviour clause.

Modules follow the API's areas, in the same order and with the same names as native/src/:
types, tensor, graph, ops (with quants), buffer, tdata, copy, backend, registry, cpu, vdev,
alloc, graph_copy. `world` holds what C keeps in
process memory: the address space, its static variables (the registry among them) and the
semantics profile.
"""

API_VERSION = "whisper.rn 0.4.0-rc.8 ggml-backend (upstream ggml 2024-01-18)"
