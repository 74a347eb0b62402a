/* backend.h - cffi declarations: backends and their interface
   (include/ggspec-backend.h, include/ggspec-backend-impl.h) */

typedef void * ggspec_backend_graph_plan_t;
typedef void * ggspec_backend_context_t;

struct ggspec_backend_i {
    const char * (*get_name)(ggspec_backend_t backend);
    void (*free)(ggspec_backend_t backend);
    ggspec_backend_buffer_type_t (*get_default_buffer_type)(ggspec_backend_t backend);
    void (*set_tensor_async)(ggspec_backend_t backend, struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
    void (*get_tensor_async)(ggspec_backend_t backend, const struct ggspec_tensor * tensor, void * data, size_t offset, size_t size);
    bool (*cpy_tensor_async)(ggspec_backend_t backend, const struct ggspec_tensor * src, struct ggspec_tensor * dst);
    void (*synchronize)(ggspec_backend_t backend);
    ggspec_backend_graph_plan_t (*graph_plan_create)(ggspec_backend_t backend, const struct ggspec_cgraph * cgraph);
    void (*graph_plan_free)(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
    void (*graph_plan_compute)(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
    bool (*graph_compute)(ggspec_backend_t backend, struct ggspec_cgraph * cgraph);
    bool (*supports_op)(ggspec_backend_t backend, const struct ggspec_tensor * op);
};

struct ggspec_backend {
    struct ggspec_backend_i iface;
    ggspec_backend_context_t context;
};

const char *                 ggspec_backend_name(ggspec_backend_t backend);
void                         ggspec_backend_free(ggspec_backend_t backend);
ggspec_backend_buffer_type_t ggspec_backend_get_default_buffer_type(ggspec_backend_t backend);
ggspec_backend_buffer_t      ggspec_backend_alloc_buffer(ggspec_backend_t backend, size_t size);
size_t                       ggspec_backend_get_alignment(ggspec_backend_t backend);
void                         ggspec_backend_synchronize(ggspec_backend_t backend);
bool                         ggspec_backend_supports_op(ggspec_backend_t backend, const struct ggspec_tensor * op);
