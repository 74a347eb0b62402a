/*
 * tensor.c - contexts, tensors, views and their byte sizes.
 *
 * A context owns one memory pool. Each tensor is carved out of the pool as one record:
 *
 *     [ record header ][ struct ggspec_tensor ][ data (only when the context allocates) ]
 *
 * Records are padded to GGSPEC_MEM_ALIGN and chained, so the tensors of a context can be
 * walked in creation order. Nothing is ever released individually; ggspec_free drops the
 * whole pool.
 */
#include "ggspec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"
#include "fault.h"
#include "internal.h"

struct record {
    size_t          offs; /* where the object starts, from the pool's start */
    size_t          size; /* bytes after the header: tensor + data, or a graph, padded */
    struct record * next;
    int             kind; /* enum ggspec_object_kind: tensors are walked, graphs skipped */
    char            pad[4];
};

_Static_assert(sizeof(struct record) % GGSPEC_MEM_ALIGN == 0, "record header must keep alignment");
_Static_assert(sizeof(struct ggspec_tensor) % GGSPEC_MEM_ALIGN == 0, "tensor must keep alignment");

struct ggspec_context {
    size_t          mem_size;
    void *          mem_buffer;
    bool            mem_buffer_owned;
    bool            no_alloc;
    struct record * first;
    struct record * last;
};

static size_t pad_to(size_t n, size_t align) {
    return (n + align - 1) / align * align;
}

#ifdef GGSPEC_FAULT_INJECTION
__attribute__((constructor)) static void fault_at_load(void) {
    GGSPEC_FAULT_POINT(load);
}
#endif

/* enforces CORE-79 */
struct ggspec_context * ggspec_init(struct ggspec_init_params params) {
    GGSPEC_FAULT_POINT(init);
    struct ggspec_context * ctx = malloc(sizeof(*ctx));
    GGSPEC_ASSERT(ctx != NULL, "ctx != NULL");

    /* a zero-sized pool is allowed; it just holds nothing */
    size_t mem_size = params.mem_size == 0 ? GGSPEC_MEM_ALIGN : params.mem_size;
    void * mem = params.mem_buffer;
    if (mem == NULL) {
        /* CORE-79: a pool size whose rounding wraps (to 0, in rc.8) cannot be allocated */
        if (mem_size <= SIZE_MAX - (GGSPEC_MEM_ALIGN - 1)) {
            mem_size = pad_to(mem_size, GGSPEC_MEM_ALIGN);
            mem = aligned_alloc(GGSPEC_MEM_ALIGN, mem_size);
        }
    }
    GGSPEC_ASSERT(mem != NULL, "ctx->mem_buffer != NULL"); /* CORE-79 */

    *ctx = (struct ggspec_context) {
        .mem_size         = mem_size,
        .mem_buffer       = mem,
        .mem_buffer_owned = params.mem_buffer == NULL,
        .no_alloc         = params.no_alloc,
        .first            = NULL,
        .last             = NULL,
    };
    return ctx;
}

void ggspec_free(struct ggspec_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    if (ctx->mem_buffer_owned) {
        free(ctx->mem_buffer);
    }
    free(ctx);
}

size_t ggspec_tensor_overhead(void) {
    return sizeof(struct record) + sizeof(struct ggspec_tensor);
}

size_t ggspec_used_mem(const struct ggspec_context * ctx) {
    return ctx->last == NULL ? 0 : ctx->last->offs + ctx->last->size;
}

bool ggspec_get_no_alloc(const struct ggspec_context * ctx) {
    return ctx->no_alloc;
}

/* the first tensor record at or after rec (graphs and other objects are skipped) */
static struct ggspec_tensor * tensor_from(const struct ggspec_context * ctx, const struct record * rec) {
    while (rec != NULL && rec->kind != GGSPEC_OBJECT_KIND_TENSOR) {
        rec = rec->next;
    }
    return rec == NULL ? NULL : (struct ggspec_tensor *)((char *)ctx->mem_buffer + rec->offs);
}

struct ggspec_tensor * ggspec_get_first_tensor(const struct ggspec_context * ctx) {
    return tensor_from(ctx, ctx->first);
}

struct ggspec_tensor * ggspec_get_next_tensor(const struct ggspec_context * ctx, struct ggspec_tensor * tensor) {
    const struct record * rec = (const struct record *)((char *)tensor - sizeof(struct record));
    return tensor_from(ctx, rec->next);
}

size_t ggspec_internal_object_overhead(void) {
    return sizeof(struct record);
}

/* reserve a record of `size` bytes (after its header) at the end of the pool */
static void * pool_take(struct ggspec_context * ctx, enum ggspec_object_kind kind, size_t size) {
    const size_t start  = ggspec_used_mem(ctx);
    const size_t padded = pad_to(size, GGSPEC_MEM_ALIGN);

    GGSPEC_ASSERT(start + sizeof(struct record) + padded <= ctx->mem_size,
                  "not enough space in the context's memory pool");

    struct record * rec = (struct record *)((char *)ctx->mem_buffer + start);
    *rec = (struct record) { .offs = start + sizeof(struct record), .size = padded, .next = NULL, .kind = (int)kind };
    if (ctx->last != NULL) {
        ctx->last->next = rec;
    } else {
        ctx->first = rec;
    }
    ctx->last = rec;
    return (char *)ctx->mem_buffer + rec->offs;
}

/* enforces CORE-3 */
size_t ggspec_nbytes(const struct ggspec_tensor * tensor) {
    /* the span from the first byte to one past the last byte the tensor touches */
    const size_t blck = (size_t)ggspec_blck_size(tensor->type);
    size_t n;
    int first_dim;
    if (blck == 1) {
        n = ggspec_type_size(tensor->type);
        first_dim = 0;
    } else {
        n = (size_t)tensor->ne[0] * tensor->nb[0] / blck;
        first_dim = 1;
    }
    for (int i = first_dim; i < GGSPEC_MAX_DIMS; i++) {
        n += (size_t)(tensor->ne[i] - 1) * tensor->nb[i];
    }
    return n;
}

static void format_name(struct ggspec_tensor * tensor, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tensor->name, sizeof(tensor->name), fmt, ap);
    va_end(ap);
}

void * ggspec_internal_new_object(struct ggspec_context * ctx, enum ggspec_object_kind kind, size_t size) {
    return pool_take(ctx, kind, size);
}

/*
 * Create a tensor of n_dims dimensions. With view_src set, the tensor is a view at byte
 * view_offs of view_src; a view of a view is re-rooted to the root tensor.
 */
struct ggspec_tensor * ggspec_internal_new_tensor(struct ggspec_context * ctx, enum ggspec_type type,
                                              int n_dims, const int64_t * ne,
                                              struct ggspec_tensor * view_src, size_t view_offs) {
    GGSPEC_ASSERT(n_dims >= 1 && n_dims <= GGSPEC_MAX_DIMS, "n_dims >= 1 && n_dims <= GGML_MAX_DIMS");

    if (view_src != NULL && view_src->view_src != NULL) {
        view_offs += view_src->view_offs;
        view_src   = view_src->view_src;
    }

    /* the size the tensor would have if it were contiguous */
    size_t data_size = ggspec_row_size(type, ne[0]);
    for (int i = 1; i < n_dims; i++) {
        data_size *= (size_t)ne[i];
    }

    GGSPEC_ASSERT(view_src == NULL || data_size + view_offs <= ggspec_nbytes(view_src),
                  "view_src == NULL || data_size + view_offs <= ggml_nbytes(view_src)");

    void * data = NULL;
    if (view_src != NULL && view_src->data != NULL) {
        data = (char *)view_src->data + view_offs;
    }

    /* a context that allocates gives a new (non-view) tensor its bytes right after it */
    const size_t own_data = (view_src == NULL && !ctx->no_alloc) ? data_size : 0;

    struct ggspec_tensor * t = pool_take(ctx, GGSPEC_OBJECT_KIND_TENSOR, sizeof(struct ggspec_tensor) + own_data);
    memset(t, 0, sizeof(*t));

    t->type      = type;
    t->backend   = GGSPEC_BACKEND_CPU;
    t->buffer    = NULL;
    t->op        = GGSPEC_OP_NONE;
    t->view_src  = view_src;
    t->view_offs = view_offs;
    t->data      = own_data > 0 ? (void *)(t + 1) : data;

    for (int i = 0; i < GGSPEC_MAX_DIMS; i++) {
        t->ne[i] = i < n_dims ? ne[i] : 1;
    }
    t->nb[0] = ggspec_type_size(type);
    t->nb[1] = t->nb[0] * (size_t)(t->ne[0] / ggspec_blck_size(type));
    for (int i = 2; i < GGSPEC_MAX_DIMS; i++) {
        t->nb[i] = t->nb[i - 1] * (size_t)t->ne[i - 1];
    }
    return t;
}

/* enforces CORE-2 */
struct ggspec_tensor * ggspec_new_tensor(struct ggspec_context * ctx, enum ggspec_type type,
                                         int n_dims, const int64_t * ne) {
    return ggspec_internal_new_tensor(ctx, type, n_dims, ne, NULL, 0);
}

struct ggspec_tensor * ggspec_new_tensor_1d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0) {
    const int64_t ne[1] = { ne0 };
    return ggspec_internal_new_tensor(ctx, type, 1, ne, NULL, 0);
}

struct ggspec_tensor * ggspec_new_tensor_2d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return ggspec_internal_new_tensor(ctx, type, 2, ne, NULL, 0);
}

struct ggspec_tensor * ggspec_new_tensor_3d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return ggspec_internal_new_tensor(ctx, type, 3, ne, NULL, 0);
}

struct ggspec_tensor * ggspec_new_tensor_4d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return ggspec_internal_new_tensor(ctx, type, 4, ne, NULL, 0);
}

const char * ggspec_get_name(const struct ggspec_tensor * tensor) {
    return tensor->name;
}

/* enforces CORE-80 */
struct ggspec_tensor * ggspec_set_name(struct ggspec_tensor * tensor, const char * name) {
    /* truncated to GGSPEC_MAX_NAME - 1 characters, always terminated */
    size_t n = strlen(name);
    if (n > sizeof(tensor->name) - 1) {
        n = sizeof(tensor->name) - 1;
    }
    memcpy(tensor->name, name, n);
    memset(tensor->name + n, 0, sizeof(tensor->name) - n);
    return tensor;
}

/*
 * The common part of the view_Nd functions: a VIEW of `a` at byte `offset`, named after
 * `a`, whose op parameters hold the offset and whose first source is `a` itself (not the
 * root). Strides start contiguous; the callers replace nb[1..] with the given ones.
 */
static struct ggspec_tensor * view_impl(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                        int n_dims, const int64_t * ne, size_t offset) {
    struct ggspec_tensor * v = ggspec_internal_new_tensor(ctx, a->type, n_dims, ne, a, offset);
    format_name(v, "%s (view)", a->name);
    memcpy(v->op_params, &offset, sizeof(offset));
    v->op     = GGSPEC_OP_VIEW;
    v->grad   = a->grad != NULL ? ggspec_dup_tensor(ctx, v) : NULL; /* a view of a parameter is a node */
    v->src[0] = a;
    return v;
}

struct ggspec_tensor * ggspec_view_1d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, size_t offset) {
    const int64_t ne[1] = { ne0 };
    return view_impl(ctx, a, 1, ne, offset);
}

struct ggspec_tensor * ggspec_view_2d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    const int64_t ne[2] = { ne0, ne1 };
    struct ggspec_tensor * v = view_impl(ctx, a, 2, ne, offset);
    v->nb[1] = nb1;
    v->nb[2] = nb1 * (size_t)ne1;
    v->nb[3] = v->nb[2];
    return v;
}

struct ggspec_tensor * ggspec_view_3d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, int64_t ne1, int64_t ne2,
                                      size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    struct ggspec_tensor * v = view_impl(ctx, a, 3, ne, offset);
    v->nb[1] = nb1;
    v->nb[2] = nb2;
    v->nb[3] = nb2 * (size_t)ne2;
    return v;
}

struct ggspec_tensor * ggspec_view_4d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    struct ggspec_tensor * v = view_impl(ctx, a, 4, ne, offset);
    v->nb[1] = nb1;
    v->nb[2] = nb2;
    v->nb[3] = nb3;
    return v;
}
