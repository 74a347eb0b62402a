/*
 * ggspec-backend.h - the public backend API: buffer types, buffers, tensor data access and
 * copies, backends, the CPU backend, the registry and the tensor placement utilities.
 *
 * Every function has the name of its rc.8 counterpart with wsp_ggml_ replaced by ggspec_.
 * The scheduler belongs to a later area and is not declared here yet.
 */
#pragma once

#include "ggspec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggspec_backend_buffer_type * ggspec_backend_buffer_type_t;
typedef struct ggspec_backend_buffer      * ggspec_backend_buffer_t;
typedef struct ggspec_backend             * ggspec_backend_t;
typedef void                              * ggspec_backend_graph_plan_t;

/* buffer types */
const char *            ggspec_backend_buft_name            (ggspec_backend_buffer_type_t buft);
ggspec_backend_buffer_t ggspec_backend_buft_alloc_buffer    (ggspec_backend_buffer_type_t buft, size_t size);
size_t                  ggspec_backend_buft_get_alignment   (ggspec_backend_buffer_type_t buft);
size_t                  ggspec_backend_buft_get_alloc_size  (ggspec_backend_buffer_type_t buft, struct ggspec_tensor * tensor);
bool                    ggspec_backend_buft_supports_backend(ggspec_backend_buffer_type_t buft, ggspec_backend_t backend);
bool                    ggspec_backend_buft_is_host         (ggspec_backend_buffer_type_t buft);

/* buffers */
enum ggspec_backend_buffer_usage {
    GGSPEC_BACKEND_BUFFER_USAGE_ANY     = 0,
    GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
};

const char *                 ggspec_backend_buffer_name          (ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_free          (ggspec_backend_buffer_t buffer);
void *                       ggspec_backend_buffer_get_base      (ggspec_backend_buffer_t buffer);
size_t                       ggspec_backend_buffer_get_size      (ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_init_tensor   (ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);
size_t                       ggspec_backend_buffer_get_alignment (ggspec_backend_buffer_t buffer);
size_t                       ggspec_backend_buffer_get_alloc_size(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);
void                         ggspec_backend_buffer_clear         (ggspec_backend_buffer_t buffer, uint8_t value);
bool                         ggspec_backend_buffer_is_host       (ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_set_usage     (ggspec_backend_buffer_t buffer, enum ggspec_backend_buffer_usage usage);
ggspec_backend_buffer_type_t ggspec_backend_buffer_get_type      (ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_reset         (ggspec_backend_buffer_t buffer);

/* backends */
const char *                 ggspec_backend_name(ggspec_backend_t backend);
void                         ggspec_backend_free(ggspec_backend_t backend);
ggspec_backend_buffer_type_t ggspec_backend_get_default_buffer_type(ggspec_backend_t backend);
ggspec_backend_buffer_t      ggspec_backend_alloc_buffer(ggspec_backend_t backend, size_t size);
size_t                       ggspec_backend_get_alignment(ggspec_backend_t backend);

void ggspec_backend_tensor_set_async(ggspec_backend_t backend,       struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
void ggspec_backend_tensor_get_async(ggspec_backend_t backend, const struct ggspec_tensor * tensor,       void * data, size_t offset, size_t size);

void ggspec_backend_tensor_set(      struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
void ggspec_backend_tensor_get(const struct ggspec_tensor * tensor,       void * data, size_t offset, size_t size);

void ggspec_backend_synchronize(ggspec_backend_t backend);

/* graphs (no implicit synchronize) */
ggspec_backend_graph_plan_t ggspec_backend_graph_plan_create (ggspec_backend_t backend, struct ggspec_cgraph * cgraph);
void                        ggspec_backend_graph_plan_free   (ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
void                        ggspec_backend_graph_plan_compute(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
bool                        ggspec_backend_graph_compute     (ggspec_backend_t backend, struct ggspec_cgraph * cgraph);

bool ggspec_backend_supports_op(ggspec_backend_t backend, const struct ggspec_tensor * op);

/* copies between tensors, possibly in different backends' buffers */
void ggspec_backend_tensor_copy(struct ggspec_tensor * src, struct ggspec_tensor * dst);
void ggspec_backend_tensor_copy_async(ggspec_backend_t backend, struct ggspec_tensor * src, struct ggspec_tensor * dst);

/* the CPU backend */
ggspec_backend_t             ggspec_backend_cpu_init(void);
bool                         ggspec_backend_is_cpu(ggspec_backend_t backend);
void                         ggspec_backend_cpu_set_n_threads(ggspec_backend_t backend_cpu, int n_threads);
ggspec_backend_buffer_t      ggspec_backend_cpu_buffer_from_ptr(void * ptr, size_t size);
ggspec_backend_buffer_type_t ggspec_backend_cpu_buffer_type(void);

/* the registry (name or name:params strings) */
size_t                       ggspec_backend_reg_get_count(void);
size_t                       ggspec_backend_reg_find_by_name(const char * name);
ggspec_backend_t             ggspec_backend_reg_init_backend_from_str(const char * backend_str);
const char *                 ggspec_backend_reg_get_name(size_t i);
ggspec_backend_t             ggspec_backend_reg_init_backend(size_t i, const char * params);
ggspec_backend_buffer_type_t ggspec_backend_reg_get_default_buffer_type(size_t i);
ggspec_backend_buffer_t      ggspec_backend_reg_alloc_buffer(size_t i, size_t size);

/* placing tensors in buffers */
void ggspec_backend_tensor_alloc(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor, void * addr);
void ggspec_backend_view_init(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);

/*
 * Copying a graph onto another backend (graph_copy.c): every node, and every tensor they
 * reach, gets a copy with the same layout; non-views are allocated in one new buffer of the
 * backend and their bytes copied, views are initialised through their copied view_src. On
 * failure all four fields are NULL.
 */
struct ggspec_backend_graph_copy {
    ggspec_backend_buffer_t buffer;
    struct ggspec_context * ctx_allocated;
    struct ggspec_context * ctx_unallocated;
    struct ggspec_cgraph *  graph;
};

struct ggspec_backend_graph_copy ggspec_backend_graph_copy(ggspec_backend_t backend, struct ggspec_cgraph * graph);
void                             ggspec_backend_graph_copy_free(struct ggspec_backend_graph_copy copy);

/* called for each node that is not a view operation; returning false stops the comparison */
typedef bool (*ggspec_backend_eval_callback)(int node_index, struct ggspec_tensor * t1, struct ggspec_tensor * t2, void * user_data);

/* compute graph on backend1 and a copy of it on backend2 node by node, calling back after each */
bool ggspec_backend_compare_graph_backend(ggspec_backend_t backend1, ggspec_backend_t backend2, struct ggspec_cgraph * graph,
                                          ggspec_backend_eval_callback callback, void * user_data);

/*
 * ggspec extensions (no rc.8 counterpart): read-only looks at state that rc.8 keeps private,
 * for the conformance suite.
 */
int    ggspec_backend_cpu_get_n_threads(ggspec_backend_t backend_cpu);
/* bytes of the CPU backend's graph_compute work buffer (grows, never shrinks) */
size_t ggspec_backend_cpu_work_size(ggspec_backend_t backend_cpu);

#ifdef __cplusplus
}
#endif
