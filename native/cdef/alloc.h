/* alloc.h - cffi declarations: tensor, graph and legacy allocators (include/ggspec-alloc.h) */

typedef struct ggspec_allocr * ggspec_allocr_t;
typedef struct ggspec_tallocr * ggspec_tallocr_t;
typedef struct ggspec_gallocr * ggspec_gallocr_t;

ggspec_allocr_t ggspec_allocr_new(void * data, size_t size, size_t alignment);
ggspec_allocr_t ggspec_allocr_new_measure(size_t alignment);
ggspec_allocr_t ggspec_allocr_new_from_buffer(ggspec_backend_buffer_t buffer);
ggspec_allocr_t ggspec_allocr_new_from_backend(ggspec_backend_t backend, size_t size);
ggspec_allocr_t ggspec_allocr_new_measure_from_backend(ggspec_backend_t backend);
ggspec_backend_buffer_t ggspec_allocr_get_buffer(ggspec_allocr_t alloc);
void   ggspec_allocr_set_parse_seq(ggspec_allocr_t alloc, const int * list, int n);
void   ggspec_allocr_free(ggspec_allocr_t alloc);
bool   ggspec_allocr_is_measure(ggspec_allocr_t alloc);
void   ggspec_allocr_reset(ggspec_allocr_t alloc);
void   ggspec_allocr_alloc(ggspec_allocr_t alloc, struct ggspec_tensor * tensor);
size_t ggspec_allocr_max_size(ggspec_allocr_t alloc);
size_t ggspec_allocr_alloc_graph(ggspec_allocr_t alloc, struct ggspec_cgraph * graph);

ggspec_tallocr_t ggspec_tallocr_new(void * data, size_t size, size_t alignment);
ggspec_tallocr_t ggspec_tallocr_new_measure(size_t alignment);
ggspec_tallocr_t ggspec_tallocr_new_from_buft(ggspec_backend_buffer_type_t buft, size_t size);
ggspec_tallocr_t ggspec_tallocr_new_from_backend(ggspec_backend_t backend, size_t size);
ggspec_tallocr_t ggspec_tallocr_new_from_buffer(ggspec_backend_buffer_t buffer);
ggspec_tallocr_t ggspec_tallocr_new_measure_from_buft(ggspec_backend_buffer_type_t buft);
ggspec_tallocr_t ggspec_tallocr_new_measure_from_backend(ggspec_backend_t backend);
ggspec_backend_buffer_t ggspec_tallocr_get_buffer(ggspec_tallocr_t talloc);
void   ggspec_tallocr_free(ggspec_tallocr_t talloc);
bool   ggspec_tallocr_is_measure(ggspec_tallocr_t talloc);
void   ggspec_tallocr_reset(ggspec_tallocr_t talloc);
void   ggspec_tallocr_alloc(ggspec_tallocr_t talloc, struct ggspec_tensor * tensor);
size_t ggspec_tallocr_max_size(ggspec_tallocr_t talloc);
int    ggspec_tallocr_free_blocks(ggspec_tallocr_t talloc, size_t * offsets, size_t * sizes, int max);

ggspec_gallocr_t ggspec_gallocr_new(void);
void   ggspec_gallocr_free(ggspec_gallocr_t galloc);
void   ggspec_gallocr_set_parse_seq(ggspec_gallocr_t galloc, const int * list, int n);
size_t ggspec_gallocr_alloc_graph(ggspec_gallocr_t galloc, ggspec_tallocr_t talloc, struct ggspec_cgraph * graph);
void   ggspec_gallocr_alloc_graph_n(ggspec_gallocr_t galloc, struct ggspec_cgraph * graph,
                                    struct ggspec_hash_set hash_set, ggspec_tallocr_t * hash_node_talloc);

ggspec_backend_buffer_t ggspec_backend_alloc_ctx_tensors_from_buft(struct ggspec_context * ctx, ggspec_backend_buffer_type_t buft);
ggspec_backend_buffer_t ggspec_backend_alloc_ctx_tensors(struct ggspec_context * ctx, ggspec_backend_t backend);
