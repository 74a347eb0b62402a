/*
 * ggspec-backend-impl.h - the interfaces a backend implements. Each struct has rc.8's fields
 * in rc.8's order; an entry documented as optional may be NULL and the public function then
 * does its documented default.
 */
#pragma once

#include "ggspec-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* buffer types */
typedef void * ggspec_backend_buffer_type_context_t;

struct ggspec_backend_buffer_type_i {
    const char *            (*get_name)        (ggspec_backend_buffer_type_t buft);
    ggspec_backend_buffer_t (*alloc_buffer)    (ggspec_backend_buffer_type_t buft, size_t size);
    size_t                  (*get_alignment)   (ggspec_backend_buffer_type_t buft);
    /* optional: bytes a tensor needs in a buffer of this type; default nbytes */
    size_t                  (*get_alloc_size)  (ggspec_backend_buffer_type_t buft, const struct ggspec_tensor * tensor);
    bool                    (*supports_backend)(ggspec_backend_buffer_type_t buft, ggspec_backend_t backend);
    /* optional: whether the buffers' data is addressable host memory; default false */
    bool                    (*is_host)         (ggspec_backend_buffer_type_t buft);
};

struct ggspec_backend_buffer_type {
    struct ggspec_backend_buffer_type_i  iface;
    ggspec_backend_buffer_type_context_t context;
};

/* buffers */
typedef void * ggspec_backend_buffer_context_t;

struct ggspec_backend_buffer_i {
    const char * (*get_name)   (ggspec_backend_buffer_t buffer);
    void         (*free_buffer)(ggspec_backend_buffer_t buffer);  /* optional */
    void *       (*get_base)   (ggspec_backend_buffer_t buffer);  /* required */
    void         (*init_tensor)(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor); /* optional */
    void         (*set_tensor) (ggspec_backend_buffer_t buffer,       struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
    void         (*get_tensor) (ggspec_backend_buffer_t buffer, const struct ggspec_tensor * tensor,       void * data, size_t offset, size_t size);
    /* optional: copy src (any buffer) into dst (in this buffer); false when it cannot */
    bool         (*cpy_tensor) (ggspec_backend_buffer_t buffer, const struct ggspec_tensor * src, struct ggspec_tensor * dst);
    void         (*clear)      (ggspec_backend_buffer_t buffer, uint8_t value);
    void         (*reset)      (ggspec_backend_buffer_t buffer);  /* optional */
};

struct ggspec_backend_buffer {
    struct ggspec_backend_buffer_i   iface;
    ggspec_backend_buffer_type_t     buft;
    ggspec_backend_buffer_context_t  context;
    size_t                           size;
    enum ggspec_backend_buffer_usage usage;
};

ggspec_backend_buffer_t ggspec_backend_buffer_init(
        ggspec_backend_buffer_type_t    buft,
        struct ggspec_backend_buffer_i  iface,
        ggspec_backend_buffer_context_t context,
        size_t                          size);

/* used by ggspec_backend_tensor_copy; true when dst's buffer copied src itself */
bool ggspec_backend_buffer_copy_tensor(const struct ggspec_tensor * src, struct ggspec_tensor * dst);

/* backends */
typedef void * ggspec_backend_context_t;

struct ggspec_backend_i {
    const char * (*get_name)(ggspec_backend_t backend);

    void (*free)(ggspec_backend_t backend);

    ggspec_backend_buffer_type_t (*get_default_buffer_type)(ggspec_backend_t backend);

    /* optional asynchronous data access; a NULL entry means the synchronous call is used */
    void (*set_tensor_async)(ggspec_backend_t backend,       struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
    void (*get_tensor_async)(ggspec_backend_t backend, const struct ggspec_tensor * tensor,       void * data, size_t offset, size_t size);
    bool (*cpy_tensor_async)(ggspec_backend_t backend, const struct ggspec_tensor * src, struct ggspec_tensor * dst);

    /* optional: wait for every queued operation */
    void (*synchronize)(ggspec_backend_t backend);

    ggspec_backend_graph_plan_t (*graph_plan_create) (ggspec_backend_t backend, const struct ggspec_cgraph * cgraph);
    void                        (*graph_plan_free)   (ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
    void                        (*graph_plan_compute)(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);

    bool (*graph_compute)(ggspec_backend_t backend, struct ggspec_cgraph * cgraph);

    bool (*supports_op)(ggspec_backend_t backend, const struct ggspec_tensor * op);
};

struct ggspec_backend {
    struct ggspec_backend_i  iface;
    ggspec_backend_context_t context;
};

/* registry */
typedef ggspec_backend_t (*ggspec_backend_init_fn)(const char * params, void * user_data);

void ggspec_backend_register(const char * name, ggspec_backend_init_fn init_fn,
                             ggspec_backend_buffer_type_t default_buffer_type, void * user_data);

/* test hook, not part of the ggml API: empty the registry as in a fresh process */
void ggspec_backend_reg_reset_for_tests(void);

#ifdef __cplusplus
}
#endif
