/*
 * internal.h - what the native modules share with each other and nobody else: objects in a
 * context's pool, the tensor constructor behind every view, the compute kernels' entry points
 * and small helpers. Included as "internal.h" from this directory only.
 */
#pragma once

#include "ggspec.h"

/* the kinds of object a context's pool holds; only tensors are walked by get_first/next */
enum ggspec_object_kind {
    GGSPEC_OBJECT_KIND_TENSOR      = 0,
    GGSPEC_OBJECT_KIND_GRAPH       = 1,
    GGSPEC_OBJECT_KIND_WORK_BUFFER = 2,
};

/* bytes of the header in front of every object in a pool */
size_t ggspec_internal_object_overhead(void);

/* reserve `size` bytes (padded to GGSPEC_MEM_ALIGN) at the end of the pool; aborts when full */
void * ggspec_internal_new_object(struct ggspec_context * ctx, enum ggspec_object_kind kind, size_t size);

/* a tensor, or (view_src != NULL) a view at byte view_offs of view_src, re-rooted to the root */
struct ggspec_tensor * ggspec_internal_new_tensor(struct ggspec_context * ctx, enum ggspec_type type,
                                                  int n_dims, const int64_t * ne,
                                                  struct ggspec_tensor * view_src, size_t view_offs);

/* shape predicates the constructors (ops.c) and the kernels (kernels.c) both check */
bool ggspec_internal_can_repeat(const struct ggspec_tensor * a, const struct ggspec_tensor * b);
bool ggspec_internal_is_padded_1d(const struct ggspec_tensor * t);
/* same type, same shape, same strides (copy.c: tensor_copy's precondition, COPY-1; the graph
   allocator's test for computing a node in its parent's memory) */
bool ggspec_internal_same_layout(const struct ggspec_tensor * a, const struct ggspec_tensor * b);

/*
 * Compute kernels (kernels.c; executor.c runs them). A node is computed in up to three phases: init (once, by one
 * thread, before the others start: e.g. converting MUL_MAT's second operand), then compute on
 * threads ith = 0 .. nth-1, each doing its share of whole rows. wdata is the work buffer.
 */
int    ggspec_internal_n_tasks(const struct ggspec_tensor * node, int n_threads);
size_t ggspec_internal_work_size(const struct ggspec_tensor * node, int n_threads);
void   ggspec_internal_compute_init(struct ggspec_tensor * node, void * wdata, size_t wsize);
void   ggspec_internal_compute(struct ggspec_tensor * node, int ith, int nth, void * wdata, size_t wsize);

/* the bytes per cache line the per-thread scratch areas are spaced by */
#define GGSPEC_CACHE_LINE_SIZE 64

/* quantized row helpers (quants.c): n is a multiple of the type's block size */
void  ggspec_internal_to_float(enum ggspec_type type, const void * src, float * dst, int64_t n);
void  ggspec_internal_from_float(enum ggspec_type type, const float * src, void * dst, int64_t n);
float ggspec_internal_vec_dot(enum ggspec_type type, int64_t n, const void * x, const void * y);
bool  ggspec_internal_has_from_float(enum ggspec_type type);
bool  ggspec_internal_has_to_float(enum ggspec_type type);
