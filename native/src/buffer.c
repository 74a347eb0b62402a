/*
 * buffer.c - buffer types and buffers: thin dispatch through their interfaces, with the
 * defaults the API promises where an optional entry is NULL.
 */
#include "ggspec-backend-impl.h"

#include <stdlib.h>

#include "assert.h"

/* buffer types */

const char * ggspec_backend_buft_name(ggspec_backend_buffer_type_t buft) {
    return buft->iface.get_name(buft);
}

/* enforces BUFT-2 */
ggspec_backend_buffer_t ggspec_backend_buft_alloc_buffer(ggspec_backend_buffer_type_t buft, size_t size) {
    return buft->iface.alloc_buffer(buft, size);
}

/* enforces BUFT-3 */
size_t ggspec_backend_buft_get_alignment(ggspec_backend_buffer_type_t buft) {
    return buft->iface.get_alignment(buft);
}

/* enforces BUFT-4 */
size_t ggspec_backend_buft_get_alloc_size(ggspec_backend_buffer_type_t buft, struct ggspec_tensor * tensor) {
    if (buft->iface.get_alloc_size == NULL) {
        return ggspec_nbytes(tensor);
    }
    return buft->iface.get_alloc_size(buft, tensor);
}

/* enforces BUFT-5 */
bool ggspec_backend_buft_supports_backend(ggspec_backend_buffer_type_t buft, ggspec_backend_t backend) {
    return buft->iface.supports_backend(buft, backend);
}

/* enforces BUFT-6 */
bool ggspec_backend_buft_is_host(ggspec_backend_buffer_type_t buft) {
    if (buft->iface.is_host == NULL) {
        return false;
    }
    return buft->iface.is_host(buft);
}

/* buffers */

/* enforces BUF-1, BUF-2 */
ggspec_backend_buffer_t ggspec_backend_buffer_init(
        ggspec_backend_buffer_type_t    buft,
        struct ggspec_backend_buffer_i  iface,
        ggspec_backend_buffer_context_t context,
        size_t                          size) {
    GGSPEC_ASSERT(iface.get_base != NULL, "iface.get_base != NULL"); /* BUF-1 */

    ggspec_backend_buffer_t buffer = malloc(sizeof(*buffer));
    GGSPEC_ASSERT(buffer != NULL, "buffer != NULL");

    *buffer = (struct ggspec_backend_buffer) {
        .iface   = iface,
        .buft    = buft,
        .context = context,
        .size    = size,
        .usage   = GGSPEC_BACKEND_BUFFER_USAGE_ANY,
    };
    return buffer;
}

const char * ggspec_backend_buffer_name(ggspec_backend_buffer_t buffer) {
    return buffer->iface.get_name(buffer);
}

/* enforces BUF-4 */
void ggspec_backend_buffer_free(ggspec_backend_buffer_t buffer) {
    if (buffer == NULL) {
        return;
    }
    if (buffer->iface.free_buffer != NULL) {
        buffer->iface.free_buffer(buffer);
    }
    free(buffer);
}

/* enforces BUF-6 */
size_t ggspec_backend_buffer_get_size(ggspec_backend_buffer_t buffer) {
    return buffer->size;
}

/* enforces BUF-5 */
void * ggspec_backend_buffer_get_base(ggspec_backend_buffer_t buffer) {
    void * base = buffer->iface.get_base(buffer);
    GGSPEC_ASSERT(base != NULL, "backend buffer base cannot be NULL"); /* BUF-5 */
    return base;
}

/* enforces BUF-7 */
void ggspec_backend_buffer_init_tensor(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor) {
    if (buffer->iface.init_tensor != NULL) {
        buffer->iface.init_tensor(buffer, tensor);
    }
}

/* enforces BUF-8 */
size_t ggspec_backend_buffer_get_alignment(ggspec_backend_buffer_t buffer) {
    return ggspec_backend_buft_get_alignment(ggspec_backend_buffer_get_type(buffer));
}

/* enforces BUF-8 */
size_t ggspec_backend_buffer_get_alloc_size(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor) {
    return ggspec_backend_buft_get_alloc_size(ggspec_backend_buffer_get_type(buffer), tensor);
}

/* enforces BUF-9 */
void ggspec_backend_buffer_clear(ggspec_backend_buffer_t buffer, uint8_t value) {
    buffer->iface.clear(buffer, value);
}

/* enforces BUF-10 */
bool ggspec_backend_buffer_is_host(ggspec_backend_buffer_t buffer) {
    return ggspec_backend_buft_is_host(ggspec_backend_buffer_get_type(buffer));
}

/* enforces BUF-11 */
void ggspec_backend_buffer_set_usage(ggspec_backend_buffer_t buffer, enum ggspec_backend_buffer_usage usage) {
    buffer->usage = usage;
}

/* enforces BUF-12 */
ggspec_backend_buffer_type_t ggspec_backend_buffer_get_type(ggspec_backend_buffer_t buffer) {
    return buffer->buft;
}

/* enforces BUF-13 */
void ggspec_backend_buffer_reset(ggspec_backend_buffer_t buffer) {
    if (buffer->iface.reset != NULL) {
        buffer->iface.reset(buffer);
    }
}
