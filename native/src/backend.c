/*
 * backend.c - backends: dispatch through the backend interface, with the defaults the API
 * promises where an optional entry is NULL.
 */
#include "ggspec-backend-impl.h"

#include "assert.h"
#include "fault.h"

const char * ggspec_backend_name(ggspec_backend_t backend) {
    if (backend == NULL) {
        return "NULL";
    }
    return backend->iface.get_name(backend);
}

/* enforces BACK-2 */
void ggspec_backend_free(ggspec_backend_t backend) {
    if (backend == NULL) {
        return;
    }
    backend->iface.free(backend);
}

/* enforces BACK-3 */
ggspec_backend_buffer_type_t ggspec_backend_get_default_buffer_type(ggspec_backend_t backend) {
    return backend->iface.get_default_buffer_type(backend);
}

/* enforces BACK-4 */
ggspec_backend_buffer_t ggspec_backend_alloc_buffer(ggspec_backend_t backend, size_t size) {
    return ggspec_backend_buft_alloc_buffer(ggspec_backend_get_default_buffer_type(backend), size);
}

/* enforces BACK-5 */
size_t ggspec_backend_get_alignment(ggspec_backend_t backend) {
    return ggspec_backend_buft_get_alignment(ggspec_backend_get_default_buffer_type(backend));
}

/* enforces BACK-6, BACK-9 */
void ggspec_backend_synchronize(ggspec_backend_t backend) {
    if (backend->iface.synchronize != NULL) {
        backend->iface.synchronize(backend);
    }
}

/* enforces BACK-7 */
bool ggspec_backend_supports_op(ggspec_backend_t backend, const struct ggspec_tensor * op) {
    return backend->iface.supports_op(backend, op);
}

/*
 * Graphs: plain dispatch, no implicit synchronize (a backend with a queue may still be working
 * when these return). rc.8 calls the entry unchecked, so a backend without one crashes there;
 * ggspec aborts with a message instead.
 */
/* enforces BACK-10 */
ggspec_backend_graph_plan_t ggspec_backend_graph_plan_create(ggspec_backend_t backend, struct ggspec_cgraph * cgraph) {
    GGSPEC_ASSERT(backend->iface.graph_plan_create != NULL, "backend->iface.graph_plan_create != NULL");
    return backend->iface.graph_plan_create(backend, cgraph);
}

/* enforces BACK-10 */
void ggspec_backend_graph_plan_free(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan) {
    GGSPEC_ASSERT(backend->iface.graph_plan_free != NULL, "backend->iface.graph_plan_free != NULL");
    backend->iface.graph_plan_free(backend, plan);
}

/* enforces BACK-10, BACK-11 */
void ggspec_backend_graph_plan_compute(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan) {
    GGSPEC_ASSERT(backend->iface.graph_plan_compute != NULL, "backend->iface.graph_plan_compute != NULL");
    backend->iface.graph_plan_compute(backend, plan);
}

/* enforces BACK-12, BACK-13 */
bool ggspec_backend_graph_compute(ggspec_backend_t backend, struct ggspec_cgraph * cgraph) {
    GGSPEC_FAULT_POINT(graph_compute);
    GGSPEC_ASSERT(backend->iface.graph_compute != NULL, "backend->iface.graph_compute != NULL");
    return backend->iface.graph_compute(backend, cgraph);
}
