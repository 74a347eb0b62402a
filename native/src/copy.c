/*
 * copy.c - copying one tensor's bytes into another of the same layout, possibly across
 * buffers of different backends.
 *
 * tensor_copy picks the cheapest route that works: write from a host source, read into a
 * host destination, let the destination's buffer copy, or stage through a host block.
 * tensor_copy_async first offers the copy to the backend's queue.
 */
#include "ggspec-backend-impl.h"

#include <stdlib.h>

#include "assert.h"
#include "internal.h"

/* same type, same shape, same strides (internal.h: the graph allocator asks it too) */
/* enforces COPY-1 */
bool ggspec_internal_same_layout(const struct ggspec_tensor * a, const struct ggspec_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < GGSPEC_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

/*
 * Ask dst's buffer to copy src into dst. rc.8 checks that dst's buffer has a cpy_tensor entry
 * but then calls src's buffer's entry; ggspec calls the entry it checked.
 */
/* enforces COPY-6 */
bool ggspec_backend_buffer_copy_tensor(const struct ggspec_tensor * src, struct ggspec_tensor * dst) {
    ggspec_backend_buffer_t dst_buf = dst->view_src != NULL ? dst->view_src->buffer : dst->buffer;
    if (dst_buf->iface.cpy_tensor == NULL) {
        return false;
    }
    return dst_buf->iface.cpy_tensor(dst_buf, src, dst);
}

/* the host address tensor_copy writes from when src is in host memory */
static const void * host_source(const struct ggspec_tensor * src) {
    return src->data;
}

/* enforces COPY-2, COPY-3, COPY-4, COPY-5, COPY-7 */
void ggspec_backend_tensor_copy(struct ggspec_tensor * src, struct ggspec_tensor * dst) {
    GGSPEC_ASSERT(ggspec_internal_same_layout(src, dst), "cannot copy tensors with different layouts"); /* COPY-2 */

    if (src == dst) {
        return;
    }

    if (ggspec_backend_buffer_is_host(src->buffer)) {
        ggspec_backend_tensor_set(dst, host_source(src), 0, ggspec_nbytes(src));
    } else if (ggspec_backend_buffer_is_host(dst->buffer)) {
        ggspec_backend_tensor_get(src, dst->data, 0, ggspec_nbytes(src));
    } else if (!ggspec_backend_buffer_copy_tensor(src, dst)) {
        /* neither side is host memory and dst's buffer cannot copy: stage through the host */
        const size_t nbytes = ggspec_nbytes(src);
        void * staging = malloc(nbytes);
        GGSPEC_ASSERT(staging != NULL || nbytes == 0, "staging != NULL");
        ggspec_backend_tensor_get(src, staging, 0, nbytes);
        ggspec_backend_tensor_set(dst, staging, 0, nbytes);
        free(staging);
    }
}

/* enforces COPY-8, COPY-9, COPY-10, COPY-11 */
void ggspec_backend_tensor_copy_async(ggspec_backend_t backend, struct ggspec_tensor * src, struct ggspec_tensor * dst) {
    GGSPEC_ASSERT(ggspec_internal_same_layout(src, dst), "cannot copy tensors with different layouts"); /* COPY-8 */

    if (src == dst) {
        return;
    }

    if (ggspec_backend_buft_supports_backend(src->buffer->buft, backend) &&
        ggspec_backend_buft_supports_backend(dst->buffer->buft, backend) &&
        backend->iface.cpy_tensor_async != NULL &&
        backend->iface.cpy_tensor_async(backend, src, dst)) {
        return;
    }

    if (ggspec_backend_buffer_is_host(src->buffer)) {
        ggspec_backend_tensor_set_async(backend, dst, src->data, 0, ggspec_nbytes(src));
    } else {
        ggspec_backend_tensor_copy(src, dst);
    }
}
