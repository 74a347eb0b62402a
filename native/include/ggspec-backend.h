/*
 * ggspec-backend.h - the public backend API: buffer types, buffers, tensor data access and
 * copies, backends, the CPU backend, the registry and the tensor placement utilities.
 *
 * Every function has the name of its rc.8 counterpart with wsp_ggml_ replaced by ggspec_.
 * The scheduler (sched.c) is declared after the graph utilities.
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
 * The backend scheduler (sched.c): one graph over several backends, given in priority order
 * (index 0 most wanted, the last one the fallback). See spec/sched.md.
 */
typedef struct ggspec_tallocr * ggspec_tallocr_t; /* the tensor allocator (ggspec-alloc.h) */

struct ggspec_backend_sched;
typedef struct ggspec_backend_sched * ggspec_backend_sched_t;

/* ask == true: does the caller want to see t (lets the scheduler batch the nodes before it)?
   ask == false: t is computed; returning false stops the graph computation */
typedef bool (*ggspec_backend_sched_eval_callback)(struct ggspec_tensor * t, bool ask, void * user_data);

ggspec_backend_sched_t  ggspec_backend_sched_new(ggspec_backend_t * backends, ggspec_backend_buffer_type_t * bufts, int n_backends, size_t graph_size);
void                    ggspec_backend_sched_free(ggspec_backend_sched_t sched);
/* split and allocate a measure graph, then give every backend a buffer of the measured size */
void                    ggspec_backend_sched_init_measure(ggspec_backend_sched_t sched, struct ggspec_cgraph * measure_graph);
/* the number of splits of the last graph split */
int                     ggspec_backend_sched_get_n_splits(ggspec_backend_sched_t sched);

ggspec_tallocr_t        ggspec_backend_sched_get_tallocr(ggspec_backend_sched_t sched, ggspec_backend_t backend);
ggspec_backend_buffer_t ggspec_backend_sched_get_buffer (ggspec_backend_sched_t sched, ggspec_backend_t backend);

void                    ggspec_backend_sched_set_node_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * node, ggspec_backend_t backend);
ggspec_backend_t        ggspec_backend_sched_get_node_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * node);

/* split, allocate and compute (no synchronize) */
void                    ggspec_backend_sched_graph_compute(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph);
/* forget all assignments and copies, reset the allocators */
void                    ggspec_backend_sched_reset(ggspec_backend_sched_t sched);
void                    ggspec_backend_sched_set_eval_callback(ggspec_backend_sched_t sched, ggspec_backend_sched_eval_callback callback, void * user_data);

/*
 * Scheduler test hooks (ggspec extensions, no rc.8 counterpart): the plan of the last split
 * graph, for comparison with the reference model. Backends are given by index (-1: none).
 * Looking a tensor up does not add it to the scheduler's hash set. A split or input index out
 * of range aborts.
 */
int                    ggspec_backend_sched_debug_n_splits       (ggspec_backend_sched_t sched);
int                    ggspec_backend_sched_debug_split_backend  (ggspec_backend_sched_t sched, int k);
int                    ggspec_backend_sched_debug_split_i_start  (ggspec_backend_sched_t sched, int k);
int                    ggspec_backend_sched_debug_split_i_end    (ggspec_backend_sched_t sched, int k);
int                    ggspec_backend_sched_debug_split_n_inputs (ggspec_backend_sched_t sched, int k);
struct ggspec_tensor * ggspec_backend_sched_debug_split_input    (ggspec_backend_sched_t sched, int k, int j);
/* the tensor's assigned backend, -1 when it has none or the scheduler has not seen it */
int                    ggspec_backend_sched_debug_tensor_backend (ggspec_backend_sched_t sched, struct ggspec_tensor * t);
/* which pass decided it: "1.dst", "1.vsrc", "1.wgtN", "2.1" .. "2.4", "3.vsrc", "3.cur",
   "4.cpy", "user"; "" when unassigned */
const char *           ggspec_backend_sched_debug_tensor_cause   (ggspec_backend_sched_t sched, struct ggspec_tensor * t);
/* the copy of an input on a backend, or NULL */
struct ggspec_tensor * ggspec_backend_sched_debug_tensor_copy    (ggspec_backend_sched_t sched, struct ggspec_tensor * t, int backend_index);
bool                   ggspec_backend_sched_debug_is_reset       (ggspec_backend_sched_t sched);
/* the allocation graph of the last split (SCHED-20), NULL after a reset */
struct ggspec_cgraph * ggspec_backend_sched_debug_alloc_graph    (ggspec_backend_sched_t sched);

/*
 * ggspec extensions (no rc.8 counterpart): read-only looks at state that rc.8 keeps private,
 * for the conformance suite.
 */
int    ggspec_backend_cpu_get_n_threads(ggspec_backend_t backend_cpu);
/* bytes of the CPU backend's graph_compute work buffer (grows, never shrinks) */
size_t ggspec_backend_cpu_work_size(ggspec_backend_t backend_cpu);
/* its address (NULL while empty) */
void * ggspec_backend_cpu_work_data(ggspec_backend_t backend_cpu);
/* a CPU plan's own work buffer size (0: none) and the thread count it computes with */
size_t ggspec_backend_cpu_plan_work_size(ggspec_backend_graph_plan_t plan);
int    ggspec_backend_cpu_plan_n_threads(ggspec_backend_graph_plan_t plan);
/* the compute kernels in use: "portable", "avx2" or "avx512" (native/src/simd.h: GGSPEC_NATIVE_PORTABLE=1 forces portable, GGSPEC_NATIVE_KERNELS caps the choice) */
const char * ggspec_backend_cpu_kernels(void);

#ifdef __cplusplus
}
#endif
