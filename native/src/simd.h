/*
 * simd.h - the compute kernels that have a faster, machine-specific form, behind one table of
 * function pointers chosen once per process (simd.c):
 *
 *   - "portable": plain C, the reference path. Its arithmetic is rc.8's portable code (the
 *     operation order and accumulators kernels.c and quants.c document). Forced by setting the
 *     environment variable GGSPEC_NATIVE_PORTABLE to anything but "" or "0" before the first
 *     graph is computed.
 *   - "avx2": x86-64 with AVX2, FMA and F16C (simd_avx2.c, compiled with gcc target
 *     attributes, so the library itself stays x86-64 baseline and runs anywhere);
 *   - "avx512": x86-64 with AVX-512 F, BW and VL besides (simd_avx512.c, the same way). It
 *     gives the AVX2 path's bits for every kernel (simd_avx512.c says how).
 * The widest the CPU has is chosen; GGSPEC_NATIVE_KERNELS=portable|avx2|avx512 caps the choice
 * (simd.c), which is how the tests reach each path the machine has.
 *
 * What may differ between portable and SIMD is only what spec/core.md's Tolerances let differ:
 *   - element-wise kernels (add, mul, the fp16 table lookups) give the same bits;
 *   - MUL_MAT (F32 / F16 weights) sums in F32 with FMA, in blocks of GGSPEC_GEMM_KC, instead
 *     of in double in index order (|Δ| ≤ K·2u·Σ|a·b'|);
 *   - Q4_0 / Q8_0 dot products keep each block's integer sum exact and only reorder the F32
 *     accumulation of the scaled block sums;
 *   - NORM's double sums are reordered.
 * Every element is computed by one thread in an order that does not depend on the thread
 * count or on where the element falls in a tile (CPU-16).
 */
#pragma once

#include "ggspec.h"

/* the two block formats (quants.c describes them) */
struct block_q4_0 {
    ggspec_fp16_t d;
    uint8_t       qs[GGSPEC_QK4_0 / 2];
};

struct block_q8_0 {
    ggspec_fp16_t d;
    int8_t        qs[GGSPEC_QK8_0];
};

_Static_assert(sizeof(struct block_q4_0) == 18, "q4_0 block is 18 bytes");
_Static_assert(sizeof(struct block_q8_0) == 34, "q8_0 block is 34 bytes");

/*
 * One thread's share of a matrix product, C[j][i] = Σ_k X[j][k] · Y[i][k] for j < m, i < n:
 * X is MUL_MAT's converted b (rows j), Y its weights a (rows i), both with k adjacent
 * elements of type F32 or F16 per row; C's rows are c_stride bytes apart, elements adjacent.
 */
struct ggspec_gemm {
    int64_t            m, n, k;
    const void *       x;
    size_t             x_stride;
    enum ggspec_type   x_type;
    const void *       y;
    size_t             y_stride;
    enum ggspec_type   y_type;
    float *            c;
    size_t             c_stride;
};

/* the k-extent of one block of the matrix product (sums restart from 0 per block) */
#define GGSPEC_GEMM_KC 256

struct ggspec_simd {
    const char * name;
    /* NULL: no matrix-product kernel; kernels.c computes one dot product per element */
    void  (*gemm)(const struct ggspec_gemm * g);
    float (*dot_q4_0_q8_0)(int64_t n, const void * x, const void * y);
    float (*dot_q8_0_q8_0)(int64_t n, const void * x, const void * y);
    /* out = { x0·y0, x1·y0, x0·y1, x1·y1 }, each bit-identical to dot_q4_0_q8_0's (NULL: none) */
    void  (*dot2x2_q4_0_q8_0)(int64_t n, const void * x0, const void * x1, const void * y0, const void * y1, float * out);
    /* a row of k floats (k a multiple of 32) to Q8_0, bit-identical to the reference rounding */
    void  (*quantize_q8_0)(const float * x, void * y, int64_t k);
    /* n floats to fp16, bit-identical to ggspec_fp32_to_fp16 (NaNs included) */
    void  (*fp32_to_fp16)(const float * x, ggspec_fp16_t * y, int64_t n);
    /* z = x + y, z = x * y on n adjacent floats (z may be x or y) */
    void  (*add_f32)(int64_t n, const float * x, const float * y, float * z);
    void  (*mul_f32)(int64_t n, const float * x, const float * y, float * z);
    /* y[i] = fp16 -> fp32 of table[fp32 -> fp16 of x[i]] (the GELU / SILU / exp tables) */
    void  (*lookup_f16)(const ggspec_fp16_t * table, int64_t n, const float * x, float * y);
    /* Σ x[i] and Σ (x[i] - mean)^2, each square rounded to float, summed in double */
    double (*sum_f32)(int64_t n, const float * x);
    double (*sum_sq_dev_f32)(int64_t n, const float * x, float mean);
    /* max of n >= 1 floats (the comparisons of kernels.c's loop, for non-NaN input) */
    float (*max_f32)(int64_t n, const float * x);
};

/* the kernels this process uses (chosen at the first call) */
const struct ggspec_simd * ggspec_internal_simd(void);

/* the portable kernels (simd.c) and, on x86-64 with a compiler that can target AVX2, the AVX2
   ones (simd_avx2.c; NULL when the CPU lacks AVX2, FMA or F16C) */
extern const struct ggspec_simd ggspec_simd_portable;
const struct ggspec_simd * ggspec_simd_avx2(void);
/* the AVX-512 ones (simd_avx512.c; NULL when the CPU lacks AVX-512 F, BW or VL, or AVX2) */
const struct ggspec_simd * ggspec_simd_avx512(void);

/* portable dot products, the reference for the SIMD ones (quants.c) */
float ggspec_internal_dot_q4_0_q8_0_portable(int64_t n, const void * x, const void * y);
float ggspec_internal_dot_q8_0_q8_0_portable(int64_t n, const void * x, const void * y);
