/*
 * backend.c - backends: dispatch through the backend interface, with the defaults the API
 * promises where an optional entry is NULL.
 */
#include "ggspec-backend-impl.h"

const char * ggspec_backend_name(ggspec_backend_t backend) {
    if (backend == NULL) {
        return "NULL";
    }
    return backend->iface.get_name(backend);
}

void ggspec_backend_free(ggspec_backend_t backend) {
    if (backend == NULL) {
        return;
    }
    backend->iface.free(backend);
}

ggspec_backend_buffer_type_t ggspec_backend_get_default_buffer_type(ggspec_backend_t backend) {
    return backend->iface.get_default_buffer_type(backend);
}

ggspec_backend_buffer_t ggspec_backend_alloc_buffer(ggspec_backend_t backend, size_t size) {
    return ggspec_backend_buft_alloc_buffer(ggspec_backend_get_default_buffer_type(backend), size);
}

size_t ggspec_backend_get_alignment(ggspec_backend_t backend) {
    return ggspec_backend_buft_get_alignment(ggspec_backend_get_default_buffer_type(backend));
}

void ggspec_backend_synchronize(ggspec_backend_t backend) {
    if (backend->iface.synchronize != NULL) {
        backend->iface.synchronize(backend);
    }
}

bool ggspec_backend_supports_op(ggspec_backend_t backend, const struct ggspec_tensor * op) {
    return backend->iface.supports_op(backend, op);
}
