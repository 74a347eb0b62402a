/*
 * ops.c - operations: the constructors that add a node to a future graph (result shape,
 * type, op_params, sources, views), with the operation names and the tensor shape helpers
 * they use. Nothing is computed here: kernels.c computes a node, executor.c runs a graph.
 * reference/ops.py models the same constructors, in the same order.
 *
 * Constructors keep rc.8's rules: a result is a node with a gradient when an operand has one
 * (rc.8's "is_node"), an _inplace variant returns a view of its first operand, and a failed
 * precondition aborts with rc.8's assert text.
 */
#include "ggspec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "assert.h"
#include "internal.h"

/* names */

static const char * const op_names[GGSPEC_OP_COUNT] = {
    "NONE", "DUP", "ADD", "ADD1", "ACC", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG", "SUM",
    "SUM_ROWS", "MEAN", "ARGMAX", "REPEAT", "REPEAT_BACK", "CONCAT", "SILU_BACK", "NORM",
    "RMS_NORM", "RMS_NORM_BACK", "GROUP_NORM", "MUL_MAT", "MUL_MAT_ID", "OUT_PROD", "SCALE",
    "SET", "CPY", "CONT", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE", "GET_ROWS",
    "GET_ROWS_BACK", "DIAG", "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SOFT_MAX", "SOFT_MAX_BACK",
    "ROPE", "ROPE_BACK", "ALIBI", "CLAMP", "CONV_TRANSPOSE_1D", "IM2COL", "CONV_TRANSPOSE_2D",
    "POOL_1D", "POOL_2D", "UPSCALE", "PAD", "ARGSORT", "LEAKY_RELU", "FLASH_ATTN", "FLASH_FF",
    "FLASH_ATTN_BACK", "WIN_PART", "WIN_UNPART", "GET_REL_POS", "ADD_REL_POS", "UNARY",
    "MAP_UNARY", "MAP_BINARY", "MAP_CUSTOM1_F32", "MAP_CUSTOM2_F32", "MAP_CUSTOM3_F32",
    "MAP_CUSTOM1", "MAP_CUSTOM2", "MAP_CUSTOM3", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK",
};

static const char * const unary_op_names[GGSPEC_UNARY_OP_COUNT] = {
    "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "GELU", "GELU_QUICK", "SILU",
};

const char * ggspec_op_name(enum ggspec_op op) {
    return (unsigned)op < GGSPEC_OP_COUNT ? op_names[op] : "?";
}

const char * ggspec_unary_op_name(enum ggspec_unary_op op) {
    return (unsigned)op < GGSPEC_UNARY_OP_COUNT ? unary_op_names[op] : "?";
}

enum ggspec_unary_op ggspec_get_unary_op(const struct ggspec_tensor * tensor) {
    return (enum ggspec_unary_op)tensor->op_params[0];
}

/* shape helpers */

int64_t ggspec_nelements(const struct ggspec_tensor * t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

int64_t ggspec_nrows(const struct ggspec_tensor * t) {
    return t->ne[1] * t->ne[2] * t->ne[3];
}

bool ggspec_is_contiguous(const struct ggspec_tensor * t) {
    return t->nb[0] == ggspec_type_size(t->type) &&
           t->nb[1] == t->nb[0] * (size_t)t->ne[0] / (size_t)ggspec_blck_size(t->type) &&
           t->nb[2] == t->nb[1] * (size_t)t->ne[1] &&
           t->nb[3] == t->nb[2] * (size_t)t->ne[2];
}

bool ggspec_is_transposed(const struct ggspec_tensor * t) {
    return t->nb[0] > t->nb[1];
}

bool ggspec_is_permuted(const struct ggspec_tensor * t) {
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool ggspec_are_same_shape(const struct ggspec_tensor * a, const struct ggspec_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

/* every extent of b is a whole multiple of a's: b is a tiling of a */
bool ggspec_internal_can_repeat(const struct ggspec_tensor * a, const struct ggspec_tensor * b) {
    return b->ne[0] % a->ne[0] == 0 && b->ne[1] % a->ne[1] == 0 &&
           b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0;
}

static bool can_repeat_rows(const struct ggspec_tensor * a, const struct ggspec_tensor * b) {
    return a->ne[0] == b->ne[0] && ggspec_internal_can_repeat(a, b);
}

/* rows of elements with unit stride, each dimension above packed on the one below */
bool ggspec_internal_is_padded_1d(const struct ggspec_tensor * t) {
    return t->nb[0] == ggspec_type_size(t->type) &&
           t->nb[2] == t->nb[1] * (size_t)t->ne[1] &&
           t->nb[3] == t->nb[2] * (size_t)t->ne[2];
}

static bool can_mul_mat(const struct ggspec_tensor * a, const struct ggspec_tensor * b) {
    return a->ne[0] == b->ne[0] && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0;
}

/* constructors */

struct ggspec_tensor * ggspec_format_name(struct ggspec_tensor * tensor, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tensor->name, sizeof(tensor->name), fmt, ap);
    va_end(ap);
    return tensor;
}

struct ggspec_tensor * ggspec_dup_tensor(struct ggspec_context * ctx, const struct ggspec_tensor * src) {
    return ggspec_new_tensor(ctx, src->type, GGSPEC_MAX_DIMS, src->ne);
}

/* a view of all of src with src's strides */
struct ggspec_tensor * ggspec_view_tensor(struct ggspec_context * ctx, struct ggspec_tensor * src) {
    struct ggspec_tensor * v = ggspec_internal_new_tensor(ctx, src->type, GGSPEC_MAX_DIMS, src->ne, src, 0);
    ggspec_format_name(v, "%s (view)", src->name);
    for (int i = 0; i < GGSPEC_MAX_DIMS; i++) {
        v->nb[i] = src->nb[i];
    }
    return v;
}

void ggspec_set_param(struct ggspec_context * ctx, struct ggspec_tensor * tensor) {
    tensor->is_param = true;
    GGSPEC_ASSERT(tensor->grad == NULL, "tensor->grad == NULL"); /* CORE-14 */
    tensor->grad = ggspec_dup_tensor(ctx, tensor);
    ggspec_format_name(tensor->grad, "%s (grad)", tensor->name);
}

/* the gradient a result gets: a tensor like it when the operation is part of a gradient graph */
static struct ggspec_tensor * grad_for(struct ggspec_context * ctx, struct ggspec_tensor * result, bool is_node) {
    return is_node ? ggspec_dup_tensor(ctx, result) : NULL;
}

static struct ggspec_tensor * result_like(struct ggspec_context * ctx, struct ggspec_tensor * a, bool inplace) {
    return inplace ? ggspec_view_tensor(ctx, a) : ggspec_dup_tensor(ctx, a);
}

static struct ggspec_tensor * dup_impl(struct ggspec_context * ctx, struct ggspec_tensor * a, bool inplace) {
    const bool is_node = !inplace && a->grad != NULL;
    struct ggspec_tensor * r = result_like(ctx, a, inplace);
    r->op     = GGSPEC_OP_DUP;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    return r;
}

/* enforces CORE-16 */
struct ggspec_tensor * ggspec_dup(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return dup_impl(ctx, a, false);
}

struct ggspec_tensor * ggspec_dup_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return dup_impl(ctx, a, true);
}

/* ADD and MUL: b is repeated to a's shape; the result has a's type and shape */
static struct ggspec_tensor * binary_impl(struct ggspec_context * ctx, enum ggspec_op op,
                                          struct ggspec_tensor * a, struct ggspec_tensor * b, bool inplace) {
    GGSPEC_ASSERT(ggspec_internal_can_repeat(b, a), "ggml_can_repeat(b, a)"); /* CORE-18 */

    bool is_node = false;
    if (!inplace && (a->grad != NULL || b->grad != NULL)) {
        /* gradients are not defined for broadcasting */
        GGSPEC_ASSERT(ggspec_are_same_shape(a, b), "ggml_are_same_shape(a, b)"); /* CORE-19 */
        is_node = true;
    }
    if (inplace && op == GGSPEC_OP_MUL) {
        GGSPEC_ASSERT(!is_node, "!is_node");
    }

    struct ggspec_tensor * r = result_like(ctx, a, inplace);
    r->op     = op;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

/* enforces CORE-17 */
struct ggspec_tensor * ggspec_add(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    return binary_impl(ctx, GGSPEC_OP_ADD, a, b, false);
}

struct ggspec_tensor * ggspec_add_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    return binary_impl(ctx, GGSPEC_OP_ADD, a, b, true);
}

/* enforces CORE-17 */
struct ggspec_tensor * ggspec_mul(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    return binary_impl(ctx, GGSPEC_OP_MUL, a, b, false);
}

struct ggspec_tensor * ggspec_mul_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    return binary_impl(ctx, GGSPEC_OP_MUL, a, b, true);
}

static struct ggspec_tensor * scale_impl(struct ggspec_context * ctx, struct ggspec_tensor * a, float s, bool inplace) {
    GGSPEC_ASSERT(ggspec_internal_is_padded_1d(a), "ggml_is_padded_1d(a)"); /* CORE-21 */
    /* rc.8 makes even the in-place variant a node when a has a gradient */
    const bool is_node = a->grad != NULL;
    struct ggspec_tensor * r = result_like(ctx, a, inplace);
    memcpy(r->op_params, &s, sizeof(s));
    r->op     = GGSPEC_OP_SCALE;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    return r;
}

/* enforces CORE-20, CORE-21 */
struct ggspec_tensor * ggspec_scale(struct ggspec_context * ctx, struct ggspec_tensor * a, float s) {
    return scale_impl(ctx, a, s, false);
}

struct ggspec_tensor * ggspec_scale_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, float s) {
    return scale_impl(ctx, a, s, true);
}

/* result[i, j] = dot(row i of a, row j of b): shape (a.ne1, b.ne1, b.ne2, b.ne3), F32 */
/* enforces CORE-22, CORE-23, CORE-24 */
struct ggspec_tensor * ggspec_mul_mat(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    GGSPEC_ASSERT(can_mul_mat(a, b), "ggml_can_mul_mat(a, b)"); /* CORE-23 */
    GGSPEC_ASSERT(!ggspec_is_transposed(a), "!ggml_is_transposed(a)"); /* CORE-24 */

    const bool is_node = a->grad != NULL || b->grad != NULL;
    const int64_t ne[4] = { a->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    struct ggspec_tensor * r = ggspec_new_tensor(ctx, GGSPEC_TYPE_F32, 4, ne);
    r->op     = GGSPEC_OP_MUL_MAT;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

/* copy a's values into b (converting the type): the result is a view of b */
/* enforces CORE-25, CORE-26 */
struct ggspec_tensor * ggspec_cpy(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    GGSPEC_ASSERT(ggspec_nelements(a) == ggspec_nelements(b), "ggml_nelements(a) == ggml_nelements(b)"); /* CORE-26 */

    const bool is_node = a->grad != NULL || b->grad != NULL;
    struct ggspec_tensor * r = ggspec_view_tensor(ctx, b);
    if (b->name[0] != '\0') {
        ggspec_format_name(r, "%s (copy of %s)", b->name, a->name);
    } else {
        ggspec_format_name(r, "%s (copy)", a->name);
    }
    r->op     = GGSPEC_OP_CPY;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

/* enforces CORE-27 */
struct ggspec_tensor * ggspec_cont(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    const bool is_node = a->grad != NULL;
    struct ggspec_tensor * r = ggspec_dup_tensor(ctx, a);
    ggspec_format_name(r, "%s (cont)", a->name);
    r->op     = GGSPEC_OP_CONT;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    return r;
}

/* reshapes: a contiguous a seen with another shape (a view of a at offset 0) */
static struct ggspec_tensor * reshape_impl(struct ggspec_context * ctx, struct ggspec_tensor * a, int n_dims, const int64_t * ne) {
    const bool is_node = a->grad != NULL;
    struct ggspec_tensor * r = ggspec_internal_new_tensor(ctx, a->type, n_dims, ne, a, 0);
    ggspec_format_name(r, "%s (reshaped)", a->name);
    r->op     = GGSPEC_OP_RESHAPE;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    return r;
}

/* enforces CORE-29, CORE-30, CORE-31 */
struct ggspec_tensor * ggspec_reshape(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    GGSPEC_ASSERT(ggspec_is_contiguous(a), "ggml_is_contiguous(a)"); /* CORE-30 */
    /* only b's shape matters, so b may be non-contiguous */
    GGSPEC_ASSERT(ggspec_nelements(a) == ggspec_nelements(b), "ggml_nelements(a) == ggml_nelements(b)"); /* CORE-31 */
    return reshape_impl(ctx, a, GGSPEC_MAX_DIMS, b->ne);
}

struct ggspec_tensor * ggspec_reshape_1d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0) {
    GGSPEC_ASSERT(ggspec_is_contiguous(a), "ggml_is_contiguous(a)");
    GGSPEC_ASSERT(ggspec_nelements(a) == ne0, "ggml_nelements(a) == ne0");
    const int64_t ne[1] = { ne0 };
    return reshape_impl(ctx, a, 1, ne);
}

struct ggspec_tensor * ggspec_reshape_2d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1) {
    GGSPEC_ASSERT(ggspec_is_contiguous(a), "ggml_is_contiguous(a)");
    GGSPEC_ASSERT(ggspec_nelements(a) == ne0 * ne1, "ggml_nelements(a) == ne0*ne1");
    const int64_t ne[2] = { ne0, ne1 };
    return reshape_impl(ctx, a, 2, ne);
}

struct ggspec_tensor * ggspec_reshape_3d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    GGSPEC_ASSERT(ggspec_is_contiguous(a), "ggml_is_contiguous(a)");
    GGSPEC_ASSERT(ggspec_nelements(a) == ne0 * ne1 * ne2, "ggml_nelements(a) == ne0*ne1*ne2");
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return reshape_impl(ctx, a, 3, ne);
}

struct ggspec_tensor * ggspec_reshape_4d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    GGSPEC_ASSERT(ggspec_is_contiguous(a), "ggml_is_contiguous(a)");
    GGSPEC_ASSERT(ggspec_nelements(a) == ne0 * ne1 * ne2 * ne3, "ggml_nelements(a) == ne0*ne1*ne2*ne3");
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return reshape_impl(ctx, a, 4, ne);
}

/*
 * Axis i of a becomes axis axis_i of the result (extent and stride move together). rc.8 moves
 * them through int arrays, truncating extents and strides past INT_MAX; ggspec keeps the full
 * 64-bit values.
 */
/* enforces CORE-32, CORE-33, CORE-34 */
struct ggspec_tensor * ggspec_permute(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int axis0, int axis1, int axis2, int axis3) {
    GGSPEC_ASSERT(axis0 >= 0 && axis0 < GGSPEC_MAX_DIMS, "axis0 >= 0 && axis0 < GGML_MAX_DIMS"); /* CORE-33 */
    GGSPEC_ASSERT(axis1 >= 0 && axis1 < GGSPEC_MAX_DIMS, "axis1 >= 0 && axis1 < GGML_MAX_DIMS");
    GGSPEC_ASSERT(axis2 >= 0 && axis2 < GGSPEC_MAX_DIMS, "axis2 >= 0 && axis2 < GGML_MAX_DIMS");
    GGSPEC_ASSERT(axis3 >= 0 && axis3 < GGSPEC_MAX_DIMS, "axis3 >= 0 && axis3 < GGML_MAX_DIMS");

    GGSPEC_ASSERT(axis0 != axis1, "axis0 != axis1"); /* CORE-34 */
    GGSPEC_ASSERT(axis0 != axis2, "axis0 != axis2");
    GGSPEC_ASSERT(axis0 != axis3, "axis0 != axis3");
    GGSPEC_ASSERT(axis1 != axis2, "axis1 != axis2");
    GGSPEC_ASSERT(axis1 != axis3, "axis1 != axis3");
    GGSPEC_ASSERT(axis2 != axis3, "axis2 != axis3");

    const bool is_node = a->grad != NULL;
    struct ggspec_tensor * r = ggspec_view_tensor(ctx, a);
    ggspec_format_name(r, "%s (permuted)", a->name);

    const int axes[4] = { axis0, axis1, axis2, axis3 };
    for (int i = 0; i < GGSPEC_MAX_DIMS; i++) {
        r->ne[axes[i]] = a->ne[i];
        r->nb[axes[i]] = a->nb[i];
    }

    r->op   = GGSPEC_OP_PERMUTE;
    r->grad = grad_for(ctx, r, is_node);
    r->src[0] = a;

    const int32_t params[4] = { axis0, axis1, axis2, axis3 };
    memcpy(r->op_params, params, sizeof(params));
    return r;
}

/* enforces CORE-35 */
struct ggspec_tensor * ggspec_transpose(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    const bool is_node = a->grad != NULL;
    struct ggspec_tensor * r = ggspec_view_tensor(ctx, a);
    ggspec_format_name(r, "%s (transposed)", a->name);

    r->ne[0] = a->ne[1];
    r->ne[1] = a->ne[0];
    r->nb[0] = a->nb[1];
    r->nb[1] = a->nb[0];

    r->op     = GGSPEC_OP_TRANSPOSE;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    return r;
}

/*
 * Rows of a picked by the I32 indices in b: result (a.ne0, b.ne0, b.ne1, b.ne2); row (i, j, k)
 * is row b[i, j, k] of matrix j of a (a.ne2 == b.ne1). F32 (I32 when a is I32).
 */
/* enforces CORE-36, CORE-37, CORE-38, CORE-39 */
struct ggspec_tensor * ggspec_get_rows(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b) {
    GGSPEC_ASSERT(a->ne[2] == b->ne[1], "a->ne[2] == b->ne[1]"); /* CORE-37 */
    GGSPEC_ASSERT(b->ne[3] == 1, "b->ne[3] == 1"); /* CORE-38 */
    GGSPEC_ASSERT(b->type == GGSPEC_TYPE_I32, "b->type == GGML_TYPE_I32"); /* CORE-39 */

    const bool is_node = a->grad != NULL || b->grad != NULL;
    const enum ggspec_type type = a->type == GGSPEC_TYPE_I32 ? GGSPEC_TYPE_I32 : GGSPEC_TYPE_F32;
    struct ggspec_tensor * r = ggspec_new_tensor_4d(ctx, type, a->ne[0], b->ne[0], b->ne[1], b->ne[2]);
    r->op     = GGSPEC_OP_GET_ROWS;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

static struct ggspec_tensor * norm_impl(struct ggspec_context * ctx, struct ggspec_tensor * a, float eps, bool inplace) {
    /* no backward pass for NORM in rc.8: asking for one aborts */
    GGSPEC_ASSERT(inplace || a->grad == NULL, "false"); /* CORE-49 */
    struct ggspec_tensor * r = result_like(ctx, a, inplace);
    memcpy(r->op_params, &eps, sizeof(eps));
    r->op     = GGSPEC_OP_NORM;
    r->grad   = NULL;
    r->src[0] = a;
    return r;
}

/* enforces CORE-40, CORE-49 */
struct ggspec_tensor * ggspec_norm(struct ggspec_context * ctx, struct ggspec_tensor * a, float eps) {
    return norm_impl(ctx, a, eps, false);
}

/* enforces CORE-40 */
struct ggspec_tensor * ggspec_norm_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, float eps) {
    return norm_impl(ctx, a, eps, true);
}

static struct ggspec_tensor * soft_max_impl(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                            struct ggspec_tensor * mask, float scale, bool inplace) {
    GGSPEC_ASSERT(ggspec_is_contiguous(a), "ggml_is_contiguous(a)");
    if (mask != NULL) {
        GGSPEC_ASSERT(ggspec_is_contiguous(mask), "ggml_is_contiguous(mask)"); /* CORE-43 */
        GGSPEC_ASSERT(mask->ne[2] == 1, "mask->ne[2] == 1"); /* CORE-44 */
        GGSPEC_ASSERT(mask->ne[3] == 1, "mask->ne[3] == 1"); /* CORE-45 */
        GGSPEC_ASSERT(can_repeat_rows(mask, a), "ggml_can_repeat_rows(mask, a)"); /* CORE-46 */
    }

    const bool is_node = a->grad != NULL;
    struct ggspec_tensor * r = result_like(ctx, a, inplace);
    memcpy(r->op_params, &scale, sizeof(scale));
    r->op     = GGSPEC_OP_SOFT_MAX;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    r->src[1] = mask;
    return r;
}

/* enforces CORE-41 */
struct ggspec_tensor * ggspec_soft_max(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return soft_max_impl(ctx, a, NULL, 1.0f, false);
}

struct ggspec_tensor * ggspec_soft_max_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return soft_max_impl(ctx, a, NULL, 1.0f, true);
}

/* enforces CORE-41, CORE-42, CORE-43, CORE-44, CORE-45, CORE-46 */
struct ggspec_tensor * ggspec_soft_max_ext(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                           struct ggspec_tensor * mask, float scale) {
    return soft_max_impl(ctx, a, mask, scale, false);
}

static struct ggspec_tensor * unary_impl(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                         enum ggspec_unary_op op, bool inplace) {
    const bool is_node = !inplace && a->grad != NULL;
    struct ggspec_tensor * r = result_like(ctx, a, inplace);
    r->op_params[0] = (int32_t)op;
    r->op     = GGSPEC_OP_UNARY;
    r->grad   = grad_for(ctx, r, is_node);
    r->src[0] = a;
    return r;
}

/* enforces CORE-47 */
struct ggspec_tensor * ggspec_unary(struct ggspec_context * ctx, struct ggspec_tensor * a, enum ggspec_unary_op op) {
    return unary_impl(ctx, a, op, false);
}

struct ggspec_tensor * ggspec_unary_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, enum ggspec_unary_op op) {
    return unary_impl(ctx, a, op, true);
}

struct ggspec_tensor * ggspec_gelu(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return unary_impl(ctx, a, GGSPEC_UNARY_OP_GELU, false);
}

struct ggspec_tensor * ggspec_gelu_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return unary_impl(ctx, a, GGSPEC_UNARY_OP_GELU, true);
}

struct ggspec_tensor * ggspec_silu(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return unary_impl(ctx, a, GGSPEC_UNARY_OP_SILU, false);
}

struct ggspec_tensor * ggspec_silu_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a) {
    return unary_impl(ctx, a, GGSPEC_UNARY_OP_SILU, true);
}
