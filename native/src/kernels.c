/*
 * kernels.c - the CPU kernels that compute one node (reference/ops.py's compute_* functions),
 * and the executor's view of them: how many threads a node uses, how much work memory it
 * needs, and the init and compute phases (internal.h). The executor is executor.c.
 *
 * Kernels work on whole rows. A node's rows are split into nth contiguous ranges, one per
 * thread; every output element is computed by exactly one thread with the same arithmetic
 * whatever nth is (reductions never cross a row), so results do not depend on the number of
 * threads. The arithmetic follows rc.8's portable (non-SIMD) code: the same operation order,
 * the same double accumulators, and the same fp16 lookup tables for GELU, GELU_QUICK, SILU
 * and the exponential in SOFT_MAX. Row kernels with a SIMD form (MUL_MAT's products, ADD / MUL
 * rows, the table lookups, NORM's sums, SOFT_MAX's max and sum) go through simd.h's table,
 * which says what the SIMD forms may change (only what spec/core.md's Tolerances allow).
 *
 * Beyond rc.8, kernels accept F16 wherever F32 is accepted and arbitrary strides where rc.8
 * asks for contiguous rows; combinations rc.8 refuses with an assert and ggspec does not
 * compute either abort with a message naming the operation.
 */
#define _POSIX_C_SOURCE 200809L

#include "ggspec.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"
#include "internal.h"
#include "simd.h"

/*
 * Lookup tables, indexed by an fp16 bit pattern: f(x) rounded to fp16 for GELU, GELU_QUICK,
 * SILU and exp. A float argument is first rounded to fp16, so these functions are only as
 * fine-grained as fp16 inputs (as in rc.8, which defines GGML_GELU_FP16, GGML_GELU_QUICK_FP16
 * and GGML_SILU_FP16, and uses its exp table in SOFT_MAX).
 */

static const float GELU_COEF_A     = 0.044715f;
static const float GELU_QUICK_COEF = -1.702f;
static const float SQRT_2_OVER_PI  = 0.79788456080286535587989211986876f;

static float gelu_f32(float x) {
    return 0.5f * x * (1.0f + tanhf(SQRT_2_OVER_PI * x * (1.0f + GELU_COEF_A * x * x)));
}

static float gelu_quick_f32(float x) {
    return x * (1.0f / (1.0f + expf(GELU_QUICK_COEF * x)));
}

static float silu_f32(float x) {
    return x / (1.0f + expf(-x));
}

static ggspec_fp16_t table_gelu[1 << 16];
static ggspec_fp16_t table_gelu_quick[1 << 16];
static ggspec_fp16_t table_silu[1 << 16];
static ggspec_fp16_t table_exp[1 << 16];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const float f = ggspec_fp16_to_fp32((ggspec_fp16_t)i);
        table_gelu[i]       = ggspec_fp32_to_fp16(gelu_f32(f));
        table_gelu_quick[i] = ggspec_fp32_to_fp16(gelu_quick_f32(f));
        table_silu[i]       = ggspec_fp32_to_fp16(silu_f32(f));
        table_exp[i]        = ggspec_fp32_to_fp16(expf(f));
    }
}

static void ensure_tables(void) {
    pthread_once(&tables_once, build_tables);
}

static float lookup(const ggspec_fp16_t * table, float x) {
    return ggspec_fp16_to_fp32(table[ggspec_fp32_to_fp16(x)]);
}

/* kernels */

static float load_f(enum ggspec_type type, const void * p) {
    if (type == GGSPEC_TYPE_F32) {
        float v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    ggspec_fp16_t h;
    memcpy(&h, p, sizeof(h));
    return ggspec_fp16_to_fp32(h);
}

static void store_f(enum ggspec_type type, void * p, float v) {
    if (type == GGSPEC_TYPE_F32) {
        memcpy(p, &v, sizeof(v));
    } else {
        const ggspec_fp16_t h = ggspec_fp32_to_fp16(v);
        memcpy(p, &h, sizeof(h));
    }
}

static bool is_float_type(enum ggspec_type type) {
    return type == GGSPEC_TYPE_F32 || type == GGSPEC_TYPE_F16;
}

/* the first and one-past-last of n items that thread ith of nth takes */
static void share(int64_t n, int ith, int nth, int64_t * lo, int64_t * hi) {
    const int64_t per = (n + nth - 1) / nth;
    *lo = per * ith < n ? per * ith : n;
    *hi = *lo + per < n ? *lo + per : n;
}

/* row r of t (rows counted over dimensions 1..3) */
static char * row_ptr(const struct ggspec_tensor * t, int64_t r) {
    const int64_t i1 = r % t->ne[1];
    const int64_t i2 = (r / t->ne[1]) % t->ne[2];
    const int64_t i3 = r / (t->ne[1] * t->ne[2]);
    return (char *)t->data + i1 * (int64_t)t->nb[1] + i2 * (int64_t)t->nb[2] + i3 * (int64_t)t->nb[3];
}

/* per-thread float scratch of n floats, spaced a cache line apart (rc.8's layout) */
static float * thread_scratch(void * wdata, size_t wsize, int ith, int64_t n) {
    const size_t line = GGSPEC_CACHE_LINE_SIZE / sizeof(float);
    float * p = (float *)wdata + (size_t)(n + (int64_t)line) * (size_t)ith;
    GGSPEC_ASSERT(wdata != NULL && (size_t)((char *)(p + n) - (char *)wdata) <= wsize, "work buffer too small");
    return p;
}

/*
 * DUP, CPY, CONT: the elements of src in row-major order go to dst in row-major order (the
 * shapes may differ, the counts may not). Same types copy bytes (whole blocks for quantized
 * types); F32 <-> F16 convert; a contiguous quantized dst is filled row by row from floats.
 */
struct cursor {
    const struct ggspec_tensor * t;
    int64_t i[4];
};

static void cursor_seek(struct cursor * c, int64_t flat, int64_t units0) {
    c->i[0] = flat % units0;
    flat /= units0;
    c->i[1] = flat % c->t->ne[1];
    flat /= c->t->ne[1];
    c->i[2] = flat % c->t->ne[2];
    c->i[3] = flat / c->t->ne[2];
}

static char * cursor_ptr(const struct cursor * c) {
    const struct ggspec_tensor * t = c->t;
    return (char *)t->data + c->i[0] * (int64_t)t->nb[0] + c->i[1] * (int64_t)t->nb[1] +
           c->i[2] * (int64_t)t->nb[2] + c->i[3] * (int64_t)t->nb[3];
}

/* move on by `by` units along dimension 0, carrying into the higher dimensions */
static void cursor_advance(struct cursor * c, int64_t by, int64_t units0) {
    c->i[0] += by;
    while (c->i[0] >= units0) {
        c->i[0] -= units0;
        if (++c->i[1] == c->t->ne[1]) {
            c->i[1] = 0;
            if (++c->i[2] == c->t->ne[2]) {
                c->i[2] = 0;
                ++c->i[3];
            }
        }
    }
}

static void compute_dup(struct ggspec_tensor * dst, int ith, int nth, void * wdata, size_t wsize) {
    const struct ggspec_tensor * src = dst->src[0];
    GGSPEC_ASSERT(ggspec_nelements(dst) == ggspec_nelements(src), "ggml_nelements(dst) == ggml_nelements(src0)");

    const int64_t nr = ggspec_nrows(src);
    int64_t r0, r1;

    if (src->type == dst->type) {
        const enum ggspec_type type = src->type;
        const int64_t blck  = ggspec_blck_size(type);
        const size_t  tsize = ggspec_type_size(type);

        if (ggspec_is_contiguous(src) && ggspec_is_contiguous(dst)) {
            /* one byte range, split by whole units */
            const int64_t units = ggspec_nelements(src) / blck;
            share(units, ith, nth, &r0, &r1);
            if (r1 > r0) {
                memcpy((char *)dst->data + (size_t)r0 * tsize, (const char *)src->data + (size_t)r0 * tsize,
                       (size_t)(r1 - r0) * tsize);
            }
            return;
        }

        GGSPEC_ASSERT(src->ne[0] % blck == 0 && dst->ne[0] % blck == 0, "rows must hold whole blocks");
        const int64_t su0 = src->ne[0] / blck;
        const int64_t du0 = dst->ne[0] / blck;
        share(nr, ith, nth, &r0, &r1);
        if (r0 >= r1) {
            return;
        }
        struct cursor d = { .t = dst, .i = { 0, 0, 0, 0 } };
        cursor_seek(&d, r0 * su0, du0);
        for (int64_t r = r0; r < r1; r++) {
            const char * srow = row_ptr(src, r);
            int64_t k = 0;
            while (k < su0) {
                /* a run that stays inside one row on both sides */
                int64_t run = su0 - k < du0 - d.i[0] ? su0 - k : du0 - d.i[0];
                char * out = cursor_ptr(&d);
                if (src->nb[0] == tsize && dst->nb[0] == tsize) {
                    memcpy(out, srow + (size_t)k * tsize, (size_t)run * tsize);
                } else {
                    for (int64_t u = 0; u < run; u++) {
                        memcpy(out + u * (int64_t)dst->nb[0], srow + (k + u) * (int64_t)src->nb[0], tsize);
                    }
                }
                k += run;
                cursor_advance(&d, run, du0);
            }
        }
        return;
    }

    if (is_float_type(src->type) && is_float_type(dst->type)) {
        share(nr, ith, nth, &r0, &r1);
        if (r0 >= r1) {
            return;
        }
        struct cursor d = { .t = dst, .i = { 0, 0, 0, 0 } };
        cursor_seek(&d, r0 * src->ne[0], dst->ne[0]);
        for (int64_t r = r0; r < r1; r++) {
            const char * srow = row_ptr(src, r);
            for (int64_t k = 0; k < src->ne[0]; k++) {
                store_f(dst->type, cursor_ptr(&d), load_f(src->type, srow + k * (int64_t)src->nb[0]));
                cursor_advance(&d, 1, dst->ne[0]);
            }
        }
        return;
    }

    if (is_float_type(src->type) && ggspec_is_quantized(dst->type) && ggspec_internal_has_from_float(dst->type)) {
        GGSPEC_ASSERT(ggspec_is_contiguous(dst), "ggml_is_contiguous(dst)");
        GGSPEC_ASSERT(src->ne[0] % ggspec_blck_size(dst->type) == 0, "ne00 % ggml_blck_size(dst->type) == 0");
        const size_t rs = ggspec_row_size(dst->type, src->ne[0]);
        float * tmp = thread_scratch(wdata, wsize, ith, src->ne[0]);
        share(nr, ith, nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const char * srow = row_ptr(src, r);
            for (int64_t k = 0; k < src->ne[0]; k++) {
                tmp[k] = load_f(src->type, srow + k * (int64_t)src->nb[0]);
            }
            ggspec_internal_from_float(dst->type, tmp, (char *)dst->data + (size_t)r * rs, src->ne[0]);
        }
        return;
    }

    fprintf(stderr, "ggspec: %s from %s to %s is not implemented\n", ggspec_op_name(dst->op),
            ggspec_type_name(src->type), ggspec_type_name(dst->type));
    GGSPEC_ASSERT(false, "false"); /* CORE-49 */
}

/* ADD, MUL: dst = a (op) b, b repeated along every dimension to a's shape */
static void compute_binary(struct ggspec_tensor * dst, int ith, int nth, void * wdata, size_t wsize) {
    const struct ggspec_tensor * a = dst->src[0];
    const struct ggspec_tensor * b = dst->src[1];
    const bool is_add = dst->op == GGSPEC_OP_ADD;

    GGSPEC_ASSERT(ggspec_internal_can_repeat(b, a) && ggspec_are_same_shape(a, dst),
                  "ggml_can_repeat(src1, src0) && ggml_are_same_shape(src0, dst)");
    GGSPEC_ASSERT(is_add || b->type == GGSPEC_TYPE_F32, "only f32 src1 supported for now");          /* CORE-58 */
    GGSPEC_ASSERT(a->type != GGSPEC_TYPE_F32 || a->nb[0] == sizeof(float), "nb00 == sizeof(float)"); /* CORE-56 */

    int64_t r0, r1;
    share(ggspec_nrows(a), ith, nth, &r0, &r1);

    if (is_add && ggspec_is_quantized(a->type)) {
        /* a quantized row: dequantize, add, quantize back into dst's type */
        GGSPEC_ASSERT(ggspec_are_same_shape(a, b), "ggml_are_same_shape(src0, src1)");
        GGSPEC_ASSERT(ggspec_internal_has_to_float(a->type), "ADD: no conversion from this quantized type");
        GGSPEC_ASSERT(a->nb[0] == ggspec_type_size(a->type), "nb00 == ggml_type_size(type)"); /* CORE-62 */
        GGSPEC_ASSERT(is_float_type(b->type), "src1->type == GGML_TYPE_F32"); /* CORE-64 */
        GGSPEC_ASSERT(dst->nb[0] == ggspec_type_size(dst->type), "nb0 == ggml_type_size(dst->type)");
        float * tmp = thread_scratch(wdata, wsize, ith, a->ne[0]);
        for (int64_t r = r0; r < r1; r++) {
            ggspec_internal_to_float(a->type, row_ptr(a, r), tmp, a->ne[0]);
            const char * brow = row_ptr(b, r);
            for (int64_t k = 0; k < a->ne[0]; k++) {
                tmp[k] += load_f(b->type, brow + k * (int64_t)b->nb[0]);
            }
            ggspec_internal_from_float(dst->type, tmp, row_ptr(dst, r), a->ne[0]);
        }
        return;
    }

    if (!is_float_type(a->type) || !is_float_type(b->type) || !is_float_type(dst->type)) {
        fprintf(stderr, "ggspec: %s of %s and %s is not implemented\n", ggspec_op_name(dst->op),
                ggspec_type_name(a->type), ggspec_type_name(b->type));
        GGSPEC_ASSERT(false, "false"); /* CORE-49 */
    }
    GGSPEC_ASSERT(!is_add || a->type != GGSPEC_TYPE_F16 || (ggspec_are_same_shape(a, b) && ggspec_are_same_shape(a, dst)),
                  "ggml_are_same_shape(src0, src1) && ggml_are_same_shape(src0, dst)"); /* CORE-55 */

    const bool all_f32 = a->type == GGSPEC_TYPE_F32 && b->type == GGSPEC_TYPE_F32 && dst->type == GGSPEC_TYPE_F32 &&
                         a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
    const struct ggspec_simd * kernels = ggspec_internal_simd();

    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % a->ne[1];
        const int64_t i2 = (r / a->ne[1]) % a->ne[2];
        const int64_t i3 = r / (a->ne[1] * a->ne[2]);
        const char * arow = row_ptr(a, r);
        char *       drow = row_ptr(dst, r);
        const char * brow = (const char *)b->data + (i1 % b->ne[1]) * (int64_t)b->nb[1] +
                            (i2 % b->ne[2]) * (int64_t)b->nb[2] + (i3 % b->ne[3]) * (int64_t)b->nb[3];

        if (all_f32) {
            /* b's row once per b->ne[0] elements of a's row: whole runs, no index arithmetic */
            const float * x = (const float *)arow;
            const float * y = (const float *)brow;
            float *       z = (float *)drow;
            for (int64_t k0 = 0; k0 < a->ne[0]; k0 += b->ne[0]) {
                (is_add ? kernels->add_f32 : kernels->mul_f32)(b->ne[0], x + k0, y, z + k0);
            }
            continue;
        }
        for (int64_t k = 0; k < a->ne[0]; k++) {
            const float x = load_f(a->type, arow + k * (int64_t)a->nb[0]);
            const float y = load_f(b->type, brow + (k % b->ne[0]) * (int64_t)b->nb[0]);
            store_f(dst->type, drow + k * (int64_t)dst->nb[0], is_add ? x + y : x * y);
        }
    }
}

static void compute_scale(struct ggspec_tensor * dst, int ith, int nth) {
    const struct ggspec_tensor * a = dst->src[0];
    GGSPEC_ASSERT(ggspec_are_same_shape(a, dst), "ggml_are_same_shape(src0, dst)");
    GGSPEC_ASSERT(is_float_type(a->type) && is_float_type(dst->type), "SCALE: only F32 and F16 are implemented");
    GGSPEC_ASSERT(a->type != GGSPEC_TYPE_F32 || ggspec_is_contiguous(a), "ggml_is_contiguous(src0)"); /* CORE-60 */

    float s;
    memcpy(&s, dst->op_params, sizeof(s));

    int64_t r0, r1;
    share(ggspec_nrows(a), ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const char * x = row_ptr(a, r);
        char *       y = row_ptr(dst, r);
        for (int64_t k = 0; k < a->ne[0]; k++) {
            store_f(dst->type, y + k * (int64_t)dst->nb[0], load_f(a->type, x + k * (int64_t)a->nb[0]) * s);
        }
    }
}

static float unary_f32(enum ggspec_unary_op op, float x) {
    switch (op) {
        case GGSPEC_UNARY_OP_ABS:        return fabsf(x);
        case GGSPEC_UNARY_OP_SGN:        return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
        case GGSPEC_UNARY_OP_NEG:        return -x;
        case GGSPEC_UNARY_OP_STEP:       return x > 0.0f ? 1.0f : 0.0f;
        case GGSPEC_UNARY_OP_TANH:       return tanhf(x);
        case GGSPEC_UNARY_OP_ELU:        return x > 0.0f ? x : expf(x) - 1.0f;
        case GGSPEC_UNARY_OP_RELU:       return x > 0.0f ? x : 0.0f;
        case GGSPEC_UNARY_OP_GELU:       return lookup(table_gelu, x);
        case GGSPEC_UNARY_OP_GELU_QUICK: return lookup(table_gelu_quick, x);
        case GGSPEC_UNARY_OP_SILU:       return lookup(table_silu, x);
        default:
            GGSPEC_ASSERT(false, "false"); /* CORE-49 */
            return 0.0f;
    }
}

static void compute_unary(struct ggspec_tensor * dst, int ith, int nth) {
    const struct ggspec_tensor * a = dst->src[0];
    const enum ggspec_unary_op op = ggspec_get_unary_op(dst);
    GGSPEC_ASSERT(ggspec_are_same_shape(a, dst), "ggml_are_same_shape(src0, dst)");
    GGSPEC_ASSERT(is_float_type(a->type) && is_float_type(dst->type), "UNARY: only F32 and F16 are implemented");
    GGSPEC_ASSERT(a->type != GGSPEC_TYPE_F32 || ggspec_internal_is_padded_1d(a), "ggml_is_contiguous_except_dim_1(src0)"); /* CORE-72 */
    GGSPEC_ASSERT((unsigned)op < GGSPEC_UNARY_OP_COUNT, "unknown unary op");
    ensure_tables();

    /* the table functions on F32 rows of adjacent elements: whole rows through the table kernel */
    const ggspec_fp16_t * table = op == GGSPEC_UNARY_OP_GELU       ? table_gelu
                                : op == GGSPEC_UNARY_OP_GELU_QUICK ? table_gelu_quick
                                : op == GGSPEC_UNARY_OP_SILU       ? table_silu
                                                                   : NULL;
    const bool rows_f32 = a->type == GGSPEC_TYPE_F32 && dst->type == GGSPEC_TYPE_F32 &&
                          a->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);

    int64_t r0, r1;
    share(ggspec_nrows(a), ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const char * x = row_ptr(a, r);
        char *       y = row_ptr(dst, r);
        if (table != NULL && rows_f32) {
            ggspec_internal_simd()->lookup_f16(table, a->ne[0], (const float *)x, (float *)y);
            continue;
        }
        for (int64_t k = 0; k < a->ne[0]; k++) {
            store_f(dst->type, y + k * (int64_t)dst->nb[0], unary_f32(op, load_f(a->type, x + k * (int64_t)a->nb[0])));
        }
    }
}

/* NORM: each row minus its mean, divided by sqrt(variance + eps) */
static void compute_norm(struct ggspec_tensor * dst, int ith, int nth) {
    const struct ggspec_tensor * a = dst->src[0];
    GGSPEC_ASSERT(ggspec_are_same_shape(a, dst), "ggml_are_same_shape(src0, dst)");
    GGSPEC_ASSERT(is_float_type(a->type) && is_float_type(dst->type), "NORM: only F32 and F16 are implemented");
    GGSPEC_ASSERT(a->type != GGSPEC_TYPE_F32 || a->nb[0] == sizeof(float), "src0->nb[0] == sizeof(float)"); /* CORE-68 */

    float eps;
    memcpy(&eps, dst->op_params, sizeof(eps));
    GGSPEC_ASSERT(eps > 0.0f, "eps > 0.0f"); /* CORE-67 */

    const int64_t n = a->ne[0];
    const struct ggspec_simd * kernels = ggspec_internal_simd();
    /* F32 rows of adjacent elements: the two sums by the (possibly SIMD) row kernels */
    const bool row_f32 = a->type == GGSPEC_TYPE_F32 && a->nb[0] == sizeof(float);
    const bool out_f32 = dst->type == GGSPEC_TYPE_F32 && dst->nb[0] == sizeof(float);
    int64_t r0, r1;
    share(ggspec_nrows(a), ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const char * x = row_ptr(a, r);
        char *       y = row_ptr(dst, r);

        double sum = 0.0;
        if (row_f32) {
            sum = kernels->sum_f32(n, (const float *)x);
        } else {
            for (int64_t k = 0; k < n; k++) {
                sum += (double)load_f(a->type, x + k * (int64_t)a->nb[0]);
            }
        }
        const float mean = (float)(sum / (double)n);

        double sum2 = 0.0;
        if (row_f32) {
            sum2 = kernels->sum_sq_dev_f32(n, (const float *)x, mean);
        } else {
            for (int64_t k = 0; k < n; k++) {
                const float v = load_f(a->type, x + k * (int64_t)a->nb[0]) - mean;
                sum2 += (double)(v * v);
            }
        }
        const float variance = (float)(sum2 / (double)n);
        const float scale = 1.0f / sqrtf(variance + eps);

        /* the centred value is recomputed (bit-identical) rather than kept, so dst may alias a */
        if (row_f32 && out_f32) {
            const float * xf = (const float *)x;
            float *       yf = (float *)y;
            for (int64_t k = 0; k < n; k++) {
                yf[k] = (xf[k] - mean) * scale;
            }
            continue;
        }
        for (int64_t k = 0; k < n; k++) {
            const float v = load_f(a->type, x + k * (int64_t)a->nb[0]) - mean;
            store_f(dst->type, y + k * (int64_t)dst->nb[0], v * scale);
        }
    }
}

/*
 * SOFT_MAX: per row, w = x * scale (+ mask row (r mod mask rows)); e = exp(w - max w) through
 * the fp16 table, 0 where w is -inf; the result is e * (float)(1 / sum e), summed in double.
 */
static void compute_soft_max(struct ggspec_tensor * dst, int ith, int nth, void * wdata, size_t wsize) {
    const struct ggspec_tensor * a    = dst->src[0];
    const struct ggspec_tensor * mask = dst->src[1];
    GGSPEC_ASSERT(ggspec_are_same_shape(a, dst), "ggml_are_same_shape(src0, dst)");
    GGSPEC_ASSERT(is_float_type(a->type) && is_float_type(dst->type), "SOFT_MAX: only F32 and F16 are implemented");
    GGSPEC_ASSERT(mask == NULL || is_float_type(mask->type), "SOFT_MAX: the mask must be F32 or F16");
    ensure_tables();

    float scale;
    memcpy(&scale, dst->op_params, sizeof(scale));

    const int64_t n = a->ne[0];
    float * w = thread_scratch(wdata, wsize, ith, n);
    const struct ggspec_simd * kernels = ggspec_internal_simd();
    const bool rows_f32 = a->type == GGSPEC_TYPE_F32 && a->nb[0] == sizeof(float) &&
                          (mask == NULL || (mask->type == GGSPEC_TYPE_F32 && mask->nb[0] == sizeof(float)));

    int64_t r0, r1;
    share(ggspec_nrows(a), ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const char * x = row_ptr(a, r);
        char *       y = row_ptr(dst, r);
        const char * m = mask != NULL ? (const char *)mask->data + (r % mask->ne[1]) * (int64_t)mask->nb[1] : NULL;

        if (rows_f32) {
            const float * xf = (const float *)x;
            const float * mf = (const float *)m;
            for (int64_t k = 0; k < n; k++) {
                w[k] = xf[k] * scale;
                if (mf != NULL) {
                    w[k] += mf[k];
                }
            }
        } else {
            for (int64_t k = 0; k < n; k++) {
                w[k] = load_f(a->type, x + k * (int64_t)a->nb[0]);
                w[k] *= scale;
                if (m != NULL) {
                    w[k] += load_f(mask->type, m + k * (int64_t)mask->nb[0]);
                }
            }
        }

        const float max = kernels->max_f32(n, w);

        double sum = 0.0;
        if (isfinite(max)) {
            /*
             * With a finite max, w = -inf gives exp(-inf - max) = 0 through the table too, so the
             * whole row goes through the table kernel. The sum is exact in any order: every term
             * is an F16 value in [0, 1], a multiple of 2^-24, so the double partial sums need at
             * most 24 + log2(n) bits.
             */
            for (int64_t k = 0; k < n; k++) {
                w[k] -= max;
            }
            kernels->lookup_f16(table_exp, n, w, w);
            sum = kernels->sum_f32(n, w);
        } else {
            for (int64_t k = 0; k < n; k++) {
                if (w[k] == -INFINITY) {
                    w[k] = 0.0f;
                } else {
                    w[k] = lookup(table_exp, w[k] - max);
                    sum += (double)w[k];
                }
            }
        }

        const float inv = (float)(1.0 / sum);
        if (dst->type == GGSPEC_TYPE_F32 && dst->nb[0] == sizeof(float)) {
            float * yf = (float *)y;
            for (int64_t k = 0; k < n; k++) {
                yf[k] = w[k] * inv;
            }
            continue;
        }
        for (int64_t k = 0; k < n; k++) {
            store_f(dst->type, y + k * (int64_t)dst->nb[0], w[k] * inv);
        }
    }
}

static void compute_get_rows(struct ggspec_tensor * dst, int ith, int nth) {
    const struct ggspec_tensor * a = dst->src[0];
    const struct ggspec_tensor * b = dst->src[1];
    GGSPEC_ASSERT(b->type == GGSPEC_TYPE_I32, "src1->type == GGML_TYPE_I32");
    GGSPEC_ASSERT(dst->ne[0] == a->ne[0], "ne0 == nc");
    GGSPEC_ASSERT(a->ne[2] == b->ne[1], "ne02 == ne11");

    const int64_t nc = a->ne[0];
    const bool plain = a->type == GGSPEC_TYPE_F32 || a->type == GGSPEC_TYPE_I32;
    if (!plain) {
        GGSPEC_ASSERT(a->type == GGSPEC_TYPE_F16 || ggspec_internal_has_to_float(a->type),
                      "GET_ROWS: no conversion from this type");
        GGSPEC_ASSERT(a->nb[0] == ggspec_type_size(a->type), "nb00 == ggml_type_size(type)"); /* CORE-62 */
    }

    int64_t r0, r1;
    share(b->ne[0] * b->ne[1] * b->ne[2], ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i10 = r % b->ne[0];
        const int64_t i11 = (r / b->ne[0]) % b->ne[1];
        const int64_t i12 = r / (b->ne[0] * b->ne[1]);

        int32_t idx;
        memcpy(&idx, (const char *)b->data + i10 * (int64_t)b->nb[0] + i11 * (int64_t)b->nb[1] + i12 * (int64_t)b->nb[2],
               sizeof(idx));
        /* rc.8 reads out of bounds here; ggspec refuses */
        GGSPEC_ASSERT(idx >= 0 && idx < a->ne[1], "i01 >= 0 && i01 < ne01");

        const char * x = (const char *)a->data + idx * (int64_t)a->nb[1] + i11 * (int64_t)a->nb[2] + i12 * (int64_t)a->nb[3];
        char *       y = (char *)dst->data + i10 * (int64_t)dst->nb[1] + i11 * (int64_t)dst->nb[2] + i12 * (int64_t)dst->nb[3];

        if (plain) {
            for (int64_t k = 0; k < nc; k++) {
                memcpy(y + k * (int64_t)dst->nb[0], x + k * (int64_t)a->nb[0], 4);
            }
        } else {
            GGSPEC_ASSERT(dst->nb[0] == sizeof(float), "nb0 == sizeof(float)");
            ggspec_internal_to_float(a->type, x, (float *)y, nc);
        }
    }
}

/*
 * MUL_MAT: dst[i, j] = dot(row i of a, row j of b). b's rows are first converted to a's
 * vec_dot_type (init phase) unless they already have it; each dot product is computed whole
 * by one thread. a's matrices are broadcast over b's dimensions 2 and 3.
 */
static void compute_mul_mat_init(struct ggspec_tensor * dst, void * wdata, size_t wsize) {
    const struct ggspec_tensor * a = dst->src[0];
    const struct ggspec_tensor * b = dst->src[1];
    const enum ggspec_type vdt = ggspec_vec_dot_type(a->type);
    if (b->type == vdt) {
        return;
    }
    GGSPEC_ASSERT(b->type == GGSPEC_TYPE_F32, "src1->type == GGML_TYPE_F32"); /* CORE-64 */
    GGSPEC_ASSERT(b->nb[0] == sizeof(float), "nb10 == ggml_type_size(src1->type)"); /* CORE-63 */
    GGSPEC_ASSERT(b->ne[0] % ggspec_blck_size(vdt) == 0, "ne10 % ggml_blck_size(vec_dot_type) == 0");

    const size_t rs = ggspec_row_size(vdt, b->ne[0]);
    const int64_t nr = ggspec_nrows(b);
    GGSPEC_ASSERT(wdata != NULL && wsize >= rs * (size_t)nr, "params->wsize >= ne11*ne12*ne13*row_size");
    for (int64_t r = 0; r < nr; r++) {
        ggspec_internal_from_float(vdt, (const float *)row_ptr(b, r), (char *)wdata + (size_t)r * rs, b->ne[0]);
    }
}

static void compute_mul_mat(struct ggspec_tensor * dst, int ith, int nth, void * wdata) {
    const struct ggspec_tensor * a = dst->src[0];
    const struct ggspec_tensor * b = dst->src[1];
    const enum ggspec_type type = a->type;
    const enum ggspec_type vdt  = ggspec_vec_dot_type(type);

    GGSPEC_ASSERT(dst->ne[0] == a->ne[1], "ne0 == ne01");
    GGSPEC_ASSERT(dst->ne[1] == b->ne[1], "ne1 == ne11");
    GGSPEC_ASSERT(dst->ne[2] == b->ne[2], "ne2 == ne12");
    GGSPEC_ASSERT(dst->ne[3] == b->ne[3], "ne3 == ne13");
    GGSPEC_ASSERT(a->nb[0] == ggspec_type_size(type), "nb00 == ggml_type_size(type)"); /* CORE-62 */
    GGSPEC_ASSERT(b->nb[0] == ggspec_type_size(b->type), "nb10 == ggml_type_size(src1->type)"); /* CORE-63 */
    GGSPEC_ASSERT(dst->type == GGSPEC_TYPE_F32 && dst->nb[0] == sizeof(float), "nb0 == sizeof(float)");
    GGSPEC_ASSERT(dst->nb[0] <= dst->nb[1], "nb0 <= nb1");
    GGSPEC_ASSERT(dst->nb[1] <= dst->nb[2], "nb1 <= nb2");
    GGSPEC_ASSERT(dst->nb[2] <= dst->nb[3], "nb2 <= nb3");
    GGSPEC_ASSERT(a->ne[0] % ggspec_blck_size(type) == 0, "ne00 % ggml_blck_size(type) == 0");

    const int64_t r2 = b->ne[2] / a->ne[2];
    const int64_t r3 = b->ne[3] / a->ne[3];

    const bool converted = b->type != vdt;
    const bool packed    = converted || ggspec_is_contiguous(b);
    const char * bdata   = converted ? (const char *)wdata : (const char *)b->data;
    const size_t rs      = ggspec_row_size(vdt, b->ne[0]);

    const int64_t nr0 = a->ne[1];                       /* rows of a */
    const int64_t nr1 = b->ne[1] * b->ne[2] * b->ne[3]; /* rows of b */

    /* split the larger side among the threads */
    int64_t a0 = 0, a1 = nr0, b0 = 0, b1 = nr1;
    if (nr0 > nr1) {
        share(nr0, ith, nth, &a0, &a1);
    } else {
        share(nr1, ith, nth, &b0, &b1);
    }

    const struct ggspec_simd * kernels = ggspec_internal_simd();
    if (kernels->gemm != NULL && (type == GGSPEC_TYPE_F32 || type == GGSPEC_TYPE_F16)) {
        /* the thread's rows of b, in runs inside one matrix, as blocked matrix products */
        for (int64_t j = b0; j < b1;) {
            const int64_t i11 = j % b->ne[1];
            const int64_t i12 = (j / b->ne[1]) % b->ne[2];
            const int64_t i13 = j / (b->ne[1] * b->ne[2]);
            const int64_t run = b1 - j < b->ne[1] - i11 ? b1 - j : b->ne[1] - i11;
            const struct ggspec_gemm g = {
                .m = run, .n = a1 - a0, .k = a->ne[0],
                .x = packed ? bdata + (size_t)j * rs
                            : bdata + i11 * (int64_t)b->nb[1] + i12 * (int64_t)b->nb[2] + i13 * (int64_t)b->nb[3],
                .x_stride = packed ? rs : b->nb[1],
                .x_type = vdt,
                .y = (const char *)a->data + (i12 / r2) * (int64_t)a->nb[2] + (i13 / r3) * (int64_t)a->nb[3] +
                     a0 * (int64_t)a->nb[1],
                .y_stride = a->nb[1],
                .y_type = type,
                .c = (float *)((char *)dst->data + i11 * (int64_t)dst->nb[1] + i12 * (int64_t)dst->nb[2] +
                               i13 * (int64_t)dst->nb[3]) + a0,
                .c_stride = dst->nb[1],
            };
            kernels->gemm(&g);
            j += run;
        }
        return;
    }

    /* the quantized dot products straight from the kernel table (no dispatch per element) */
    float (*const dot)(int64_t, const void *, const void *) = type == GGSPEC_TYPE_Q4_0 ? kernels->dot_q4_0_q8_0
                                                             : type == GGSPEC_TYPE_Q8_0 ? kernels->dot_q8_0_q8_0
                                                                                        : NULL;
    void (*const dot2x2)(int64_t, const void *, const void *, const void *, const void *, float *) =
        type == GGSPEC_TYPE_Q4_0 ? kernels->dot2x2_q4_0_q8_0 : NULL;
    for (int64_t j = b0; j < b1; j++) {
        const int64_t i11 = j % b->ne[1];
        const int64_t i12 = (j / b->ne[1]) % b->ne[2];
        const int64_t i13 = j / (b->ne[1] * b->ne[2]);

        const char * col = packed ? bdata + (size_t)j * rs
                                  : bdata + i11 * (int64_t)b->nb[1] + i12 * (int64_t)b->nb[2] + i13 * (int64_t)b->nb[3];
        const char * amat = (const char *)a->data + (i12 / r2) * (int64_t)a->nb[2] + (i13 / r3) * (int64_t)a->nb[3];
        float * out = (float *)((char *)dst->data + i11 * (int64_t)dst->nb[1] + i12 * (int64_t)dst->nb[2] +
                                i13 * (int64_t)dst->nb[3]);

        if (dot2x2 != NULL && j + 1 < b1 && i11 + 1 < b->ne[1]) {
            /* rows j and j + 1 of b (same matrix) against pairs of weight rows: the same bits as
               one product at a time (simd.h), so the thread split does not show */
            const char * col1 = packed ? col + rs : col + b->nb[1];
            float * out1 = (float *)((char *)out + dst->nb[1]);
            const int64_t k = a->ne[0];
            const int64_t nb01 = (int64_t)a->nb[1];
            int64_t i = a0;
            for (; i + 1 < a1; i += 2) {
                float o[4];
                dot2x2(k, amat + i * nb01, amat + (i + 1) * nb01, col, col1, o);
                out[i] = o[0];
                out[i + 1] = o[1];
                out1[i] = o[2];
                out1[i + 1] = o[3];
            }
            for (; i < a1; i++) {
                out[i]  = dot(k, amat + i * nb01, col);
                out1[i] = dot(k, amat + i * nb01, col1);
            }
            j++; /* row j + 1 is done too */
            continue;
        }
        for (int64_t i = a0; i < a1; i++) {
            out[i] = dot != NULL ? dot(a->ne[0], amat + i * (int64_t)a->nb[1], col)
                                 : ggspec_internal_vec_dot(type, a->ne[0], amat + i * (int64_t)a->nb[1], col);
        }
    }
}

/* the executor's view of operations */

int ggspec_internal_n_tasks(const struct ggspec_tensor * node, int n_threads) {
    switch (node->op) {
        case GGSPEC_OP_CPY:
        case GGSPEC_OP_DUP:
        case GGSPEC_OP_ADD:
        case GGSPEC_OP_ADD1:
        case GGSPEC_OP_ACC:
        case GGSPEC_OP_MUL:
        case GGSPEC_OP_DIV:
        case GGSPEC_OP_NORM:
        case GGSPEC_OP_RMS_NORM:
        case GGSPEC_OP_MUL_MAT:
        case GGSPEC_OP_MUL_MAT_ID:
        case GGSPEC_OP_OUT_PROD:
        case GGSPEC_OP_ROPE:
            return n_threads;
        case GGSPEC_OP_UNARY:
            switch (ggspec_get_unary_op(node)) {
                case GGSPEC_UNARY_OP_GELU:
                case GGSPEC_UNARY_OP_GELU_QUICK:
                case GGSPEC_UNARY_OP_SILU:
                    return n_threads;
                default:
                    return 1;
            }
        case GGSPEC_OP_SOFT_MAX: {
            const int64_t nr = ggspec_nrows(node->src[0]);
            const int64_t n  = n_threads < 4 ? n_threads : 4;
            return (int)(n < nr ? n : nr);
        }
        default:
            /* SCALE, CONT, GET_ROWS, the view operations and NONE run on one thread in rc.8 */
            return 1;
    }
}

/* rc.8's work size for one node (before the per-thread cache-line padding is added) */
size_t ggspec_internal_work_size(const struct ggspec_tensor * node, int n_threads) {
    const size_t n_tasks = (size_t)ggspec_internal_n_tasks(node, n_threads);
    switch (node->op) {
        case GGSPEC_OP_CPY:
        case GGSPEC_OP_DUP:
            if (ggspec_is_quantized(node->type)) {
                /* a float row per thread; the source row (ggspec reads that many) may be longer */
                const int64_t ne = node->ne[0] > node->src[0]->ne[0] ? node->ne[0] : node->src[0]->ne[0];
                return sizeof(float) * (size_t)ne * n_tasks;
            }
            return 0;
        case GGSPEC_OP_ADD:
        case GGSPEC_OP_ADD1:
            if (ggspec_is_quantized(node->src[0]->type)) {
                return sizeof(float) * (size_t)node->src[0]->ne[0] * n_tasks;
            }
            return 0;
        case GGSPEC_OP_ACC:
            if (ggspec_is_quantized(node->src[0]->type)) {
                return sizeof(float) * (size_t)node->src[1]->ne[0] * n_tasks;
            }
            return 0;
        case GGSPEC_OP_MUL_MAT: {
            const enum ggspec_type vdt = ggspec_vec_dot_type(node->src[0]->type);
            if (node->src[1]->type != vdt) {
                return ggspec_row_size(vdt, ggspec_nelements(node->src[1]));
            }
            return 0;
        }
        case GGSPEC_OP_OUT_PROD:
            if (ggspec_is_quantized(node->src[0]->type)) {
                return sizeof(float) * (size_t)node->src[0]->ne[0] * n_tasks;
            }
            return 0;
        case GGSPEC_OP_SOFT_MAX:
        case GGSPEC_OP_ROPE:
            return sizeof(float) * (size_t)node->ne[0] * n_tasks;
        default:
            return 0;
    }
}

void ggspec_internal_compute_init(struct ggspec_tensor * node, void * wdata, size_t wsize) {
    if (node->op == GGSPEC_OP_MUL_MAT) {
        compute_mul_mat_init(node, wdata, wsize);
    }
}

void ggspec_internal_compute(struct ggspec_tensor * node, int ith, int nth, void * wdata, size_t wsize) {
    switch (node->op) {
        case GGSPEC_OP_NONE:
        case GGSPEC_OP_VIEW:
        case GGSPEC_OP_RESHAPE:
        case GGSPEC_OP_PERMUTE:
        case GGSPEC_OP_TRANSPOSE:
            return; /* nothing to compute: the bytes are the source's */
        case GGSPEC_OP_DUP:
        case GGSPEC_OP_CPY:
        case GGSPEC_OP_CONT:
            compute_dup(node, ith, nth, wdata, wsize);
            return;
        case GGSPEC_OP_ADD:
        case GGSPEC_OP_MUL:
            compute_binary(node, ith, nth, wdata, wsize);
            return;
        case GGSPEC_OP_SCALE:
            compute_scale(node, ith, nth);
            return;
        case GGSPEC_OP_UNARY:
            compute_unary(node, ith, nth);
            return;
        case GGSPEC_OP_NORM:
            compute_norm(node, ith, nth);
            return;
        case GGSPEC_OP_SOFT_MAX:
            compute_soft_max(node, ith, nth, wdata, wsize);
            return;
        case GGSPEC_OP_GET_ROWS:
            compute_get_rows(node, ith, nth);
            return;
        case GGSPEC_OP_MUL_MAT:
            compute_mul_mat(node, ith, nth, wdata);
            return;
        default:
            fprintf(stderr, "ggspec: op not implemented: %s\n", ggspec_op_name(node->op));
            GGSPEC_ASSERT(false, "false"); /* CORE-49 */
    }
}
