/*
 * tdata.c - reading and writing tensor bytes (synchronously and through a backend's queue),
 * and placing tensors and views in buffers.
 *
 * The buffer a tensor's bytes live in is its "resolved" buffer: the root's buffer for a view
 * (a view made after its root was placed has data but no buffer of its own until view_init),
 * the tensor's own buffer otherwise. rc.8 checks the resolved buffer in tensor_set but then
 * dispatches through tensor->buffer, and tensor_get checks and dispatches through
 * tensor->buffer; both crash on such a view. ggspec's "fixed" profile checks and dispatches
 * through the resolved buffer in both.
 */
#include "ggspec-backend-impl.h"

#include "assert.h"
#include "fault.h"

static ggspec_backend_buffer_t resolved_buffer(const struct ggspec_tensor * tensor) {
    return tensor->view_src != NULL ? tensor->view_src->buffer : tensor->buffer;
}

/* [offset, offset + size) lies inside the tensor, computed without the size_t wrap-around of
 * rc.8's `offset + size <= nbytes` (erratum TDATA-3/7/10/12: offset SIZE_MAX - 3 with size 8
 * passes there) */
static bool range_in(size_t offset, size_t size, size_t n) {
    return offset <= n && size <= n - offset;
}

static bool write_in_bounds(const struct ggspec_tensor * tensor, size_t offset, size_t size) {
    return range_in(offset, size, ggspec_nbytes(tensor));
}

/* enforces TDATA-4 */
void ggspec_backend_tensor_set(struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size) {
    ggspec_backend_buffer_t buf = resolved_buffer(tensor);
    GGSPEC_FAULT_POINT(tensor_set);

    GGSPEC_ASSERT(tensor->data != NULL, "tensor not allocated"); /* TDATA-1 */
    GGSPEC_ASSERT(buf != NULL, "tensor buffer not set"); /* TDATA-2 */
    GGSPEC_ASSERT(write_in_bounds(tensor, offset, size), "tensor write out of bounds"); /* TDATA-3 */

    buf->iface.set_tensor(buf, tensor, data, offset, size);
}

/* enforces TDATA-8 */
void ggspec_backend_tensor_get(const struct ggspec_tensor * tensor, void * data, size_t offset, size_t size) {
    ggspec_backend_buffer_t buf = resolved_buffer(tensor);
    GGSPEC_FAULT_POINT(tensor_get);

    GGSPEC_ASSERT(tensor->data != NULL, "tensor not allocated"); /* TDATA-5 */
    GGSPEC_ASSERT(buf != NULL, "tensor buffer not set"); /* TDATA-6 */
    GGSPEC_ASSERT(range_in(offset, size, ggspec_nbytes(tensor)), "tensor read out of bounds"); /* TDATA-7 */

    buf->iface.get_tensor(buf, tensor, data, offset, size);
    GGSPEC_FAULT_CORRUPT(tensor_get, data, size);
}

/* enforces TDATA-13 */
void ggspec_backend_tensor_set_async(ggspec_backend_t backend, struct ggspec_tensor * tensor,
                                     const void * data, size_t offset, size_t size) {
    GGSPEC_ASSERT(tensor->data != NULL, "tensor not allocated"); /* TDATA-9 */
    GGSPEC_ASSERT(range_in(offset, size, ggspec_nbytes(tensor)), "tensor write out of bounds"); /* TDATA-10 */

    if (backend->iface.set_tensor_async == NULL) {
        ggspec_backend_tensor_set(tensor, data, offset, size);
    } else {
        backend->iface.set_tensor_async(backend, tensor, data, offset, size);
    }
}

/* enforces TDATA-13 */
void ggspec_backend_tensor_get_async(ggspec_backend_t backend, const struct ggspec_tensor * tensor,
                                     void * data, size_t offset, size_t size) {
    GGSPEC_ASSERT(tensor->data != NULL, "tensor not allocated"); /* TDATA-11 */
    GGSPEC_ASSERT(range_in(offset, size, ggspec_nbytes(tensor)), "tensor read out of bounds"); /* TDATA-12 */

    if (backend->iface.get_tensor_async == NULL) {
        ggspec_backend_tensor_get(tensor, data, offset, size);
    } else {
        backend->iface.get_tensor_async(backend, tensor, data, offset, size);
    }
}

/* give a view (whose root is already placed) its buffer and address */
/* enforces TDATA-18 */
void ggspec_backend_view_init(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor) {
    GGSPEC_ASSERT(tensor->buffer == NULL, "tensor->buffer == NULL"); /* TDATA-14 */
    /* data may already be set: views made after their root was placed get it at creation */
    GGSPEC_ASSERT(tensor->view_src != NULL, "tensor->view_src != NULL"); /* TDATA-15 */
    GGSPEC_ASSERT(tensor->view_src->buffer != NULL, "tensor->view_src->buffer != NULL"); /* TDATA-16 */
    GGSPEC_ASSERT(tensor->view_src->data != NULL, "tensor->view_src->data != NULL"); /* TDATA-17 */

    tensor->buffer  = buffer;
    tensor->data    = (char *)tensor->view_src->data + tensor->view_offs;
    tensor->backend = tensor->view_src->backend;
    ggspec_backend_buffer_init_tensor(buffer, tensor);
}

/* place a not yet placed, non-view tensor at addr inside buffer */
/* enforces TDATA-24 */
void ggspec_backend_tensor_alloc(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor, void * addr) {
    GGSPEC_ASSERT(tensor->buffer == NULL, "tensor->buffer == NULL"); /* TDATA-19 */
    GGSPEC_ASSERT(tensor->data == NULL, "tensor->data == NULL"); /* TDATA-20 */
    GGSPEC_ASSERT(tensor->view_src == NULL, "tensor->view_src == NULL"); /* TDATA-21 */
    /* compared as integers: addr may come from anywhere, and C orders only pointers into one object */
    GGSPEC_ASSERT((uintptr_t)addr >= (uintptr_t)ggspec_backend_buffer_get_base(buffer),
                  "addr >= ggml_backend_buffer_get_base(buffer)");
    GGSPEC_ASSERT((uintptr_t)addr + ggspec_backend_buffer_get_alloc_size(buffer, tensor) <=
                  (uintptr_t)ggspec_backend_buffer_get_base(buffer) + ggspec_backend_buffer_get_size(buffer),
                  "(char *)addr + ggml_backend_buffer_get_alloc_size(buffer, tensor) <= "
                  "(char *)ggml_backend_buffer_get_base(buffer) + ggml_backend_buffer_get_size(buffer)");

    tensor->buffer = buffer;
    tensor->data   = addr;
    ggspec_backend_buffer_init_tensor(buffer, tensor);
}
