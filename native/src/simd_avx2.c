/*
 * simd_avx2.c - the kernels of simd.h for x86-64 CPUs with AVX2, FMA and F16C. The file is
 * compiled for the x86-64 baseline like the rest; only the kernels carry the target
 * attribute (through the pragma below), and ggspec_simd_avx2() hands them out only after
 * asking the CPU.
 *
 * The matrix product is a packed, blocked GEMM: Y (the weights) is copied in blocks of
 * GGSPEC_GEMM_KC x NC into panels of NR adjacent columns, X (b) in blocks of MC x KC into panels
 * of MR rows, and an MR x NR micro-kernel keeps its tile of C in twelve AVX registers while it
 * runs down k. Panels are zero-padded, so edge tiles compute like inner ones: every element of
 * C is the F32 sum over its k-blocks (in order) of an FMA chain over the block (in order),
 * whatever the tiling and the thread split.
 *
 * The GEMM driver, the F32 sums of the quantized dot products and the element-wise kernels are
 * written once, over a vector of W floats, in simd_x86.h, which this file and simd_avx512.c
 * include with their own vector macros; what stays here is what only AVX2 does.
 */
#include "simd.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

/* GEMM blocking: MR x NR registers; an MC x KC block of X fits L2, a KC x NR panel of Y L1 */
#define MR 6
#define NR 16
#define MC 120
#define NC 1024
#define KC GGSPEC_GEMM_KC

#define W               8
#define VF              __m256
#define VLOAD           _mm256_loadu_ps
#define VSTORE          _mm256_storeu_ps
#define VADD            _mm256_add_ps
#define VMUL            _mm256_mul_ps
#define VMAX            _mm256_max_ps
#define VSET1           _mm256_set1_ps
#define VHAS_NAN(v)     (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0)
#define VSTORE_F16(p, v) _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT))
#define LOOP_START()    ((void)0)

#include "simd_x86.h" /* the GEMM driver, the F32 sums, the element-wise kernels (shared with AVX-512) */

/* row `r` of an F32 or F16 matrix as kc floats from column p0: a pointer into the row, or tmp */
static const float * row_floats(const void * base, size_t stride, enum ggspec_type type, int64_t r,
                                int64_t p0, int64_t kc, float * tmp) {
    const char * row = (const char *)base + (size_t)r * stride;
    if (type == GGSPEC_TYPE_F32) {
        return (const float *)row + p0;
    }
    const ggspec_fp16_t * h = (const ggspec_fp16_t *)row + p0;
    int64_t kk = 0;
    for (; kk + 8 <= kc; kk += 8) {
        _mm256_storeu_ps(tmp + kk, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + kk))));
    }
    for (; kk < kc; kk++) {
        tmp[kk] = _cvtsh_ss(h[kk]);
    }
    return tmp;
}

/* rows r0 .. r0+rows-1, columns p0 .. p0+kc-1 into panels of `width` rows: dst[p][kk][w] */
static void pack(const void * base, size_t stride, enum ggspec_type type, int64_t r0, int64_t rows,
                 int64_t p0, int64_t kc, int width, float * dst, float * tmp) {
    const int64_t padded = (rows + width - 1) / width * width;
    for (int64_t r = 0; r < padded; r++) {
        float * out = dst + (r / width) * width * kc + r % width;
        if (r >= rows) {
            for (int64_t kk = 0; kk < kc; kk++) {
                out[kk * width] = 0.0f;
            }
            continue;
        }
        const float * v = row_floats(base, stride, type, r0 + r, p0, kc, tmp);
        for (int64_t kk = 0; kk < kc; kk++) {
            out[kk * width] = v[kk];
        }
    }
}

/* C[MR x NR tile] (+)= X panel . Y panel over kc; mr x nr of the tile are stored */
static void micro_kernel(int64_t kc, const float * xp, const float * yp, float * c, size_t c_stride,
                         int mr, int nr, int first) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();

    for (int64_t kk = 0; kk < kc; kk++) {
        const __m256 y0 = _mm256_load_ps(yp);
        const __m256 y1 = _mm256_load_ps(yp + 8);
        __m256 x;
        x = _mm256_broadcast_ss(xp + 0); c00 = _mm256_fmadd_ps(x, y0, c00); c01 = _mm256_fmadd_ps(x, y1, c01);
        x = _mm256_broadcast_ss(xp + 1); c10 = _mm256_fmadd_ps(x, y0, c10); c11 = _mm256_fmadd_ps(x, y1, c11);
        x = _mm256_broadcast_ss(xp + 2); c20 = _mm256_fmadd_ps(x, y0, c20); c21 = _mm256_fmadd_ps(x, y1, c21);
        x = _mm256_broadcast_ss(xp + 3); c30 = _mm256_fmadd_ps(x, y0, c30); c31 = _mm256_fmadd_ps(x, y1, c31);
        x = _mm256_broadcast_ss(xp + 4); c40 = _mm256_fmadd_ps(x, y0, c40); c41 = _mm256_fmadd_ps(x, y1, c41);
        x = _mm256_broadcast_ss(xp + 5); c50 = _mm256_fmadd_ps(x, y0, c50); c51 = _mm256_fmadd_ps(x, y1, c51);
        xp += MR;
        yp += NR;
    }

    const __m256 acc[MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 }, { c40, c41 }, { c50, c51 } };
    if (mr == MR && nr == NR) {
        for (int r = 0; r < MR; r++) {
            store_row((float *)((char *)c + (size_t)r * c_stride), acc[r][0], acc[r][1], first);
        }
        return;
    }
    float tile[MR][NR];
    for (int r = 0; r < MR; r++) {
        _mm256_storeu_ps(tile[r], acc[r][0]);
        _mm256_storeu_ps(tile[r] + 8, acc[r][1]);
    }
    for (int r = 0; r < mr; r++) {
        float * out = (float *)((char *)c + (size_t)r * c_stride);
        for (int i = 0; i < nr; i++) {
            out[i] = first ? tile[r][i] : out[i] + tile[r][i];
        }
    }
}

static int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* lane j of the result: the sum of the eight lanes of vj (no lane-crossing permute) */
static __m256i sum_lanes8(__m256i v0, __m256i v1, __m256i v2, __m256i v3, __m256i v4, __m256i v5, __m256i v6,
                          __m256i v7) {
    const __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    const __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(v4, v5), _mm256_hadd_epi32(v6, v7));
    /* [low halves of 0123, 4567] + [high halves of 0123, 4567] */
    const __m256i lo = _mm256_inserti128_si256(h0123, _mm256_castsi256_si128(h4567), 1);
    const __m256i hi = _mm256_inserti128_si256(h4567, _mm256_extracti128_si256(h0123, 1), 0);
    return _mm256_add_epi32(lo, hi);
}

static __m256i block_q8_0_q8_0(const struct block_q8_0 * x, const struct block_q8_0 * y) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)x->qs);
    const __m256i b = _mm256_loadu_si256((const __m256i *)y->qs);
    const __m256i lo = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(a)),
                                         _mm256_cvtepi8_epi16(_mm256_castsi256_si128(b)));
    const __m256i hi = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(a, 1)),
                                         _mm256_cvtepi8_epi16(_mm256_extracti128_si256(b, 1)));
    return _mm256_add_epi32(lo, hi);
}

/* the exact integer sums of eight Q8_0 . Q8_0 blocks, one a lane, and of one */
static __m256i q8_sums8(const struct block_q8_0 * x, const struct block_q8_0 * y) {
    return sum_lanes8(block_q8_0_q8_0(&x[0], &y[0]), block_q8_0_q8_0(&x[1], &y[1]), block_q8_0_q8_0(&x[2], &y[2]),
                      block_q8_0_q8_0(&x[3], &y[3]), block_q8_0_q8_0(&x[4], &y[4]), block_q8_0_q8_0(&x[5], &y[5]),
                      block_q8_0_q8_0(&x[6], &y[6]), block_q8_0_q8_0(&x[7], &y[7]));
}

static int q8_sum(const struct block_q8_0 * x, const struct block_q8_0 * y) {
    return hsum_epi32(block_q8_0_q8_0(x, y));
}

/*
 * Q4_0 . Q8_0, also four at a time: rows x0, x1 of the weights against rows y0, y1 of b, so
 * that each unpacked weight block and each loaded b block serves two products. Both forms do,
 * for each product, the same operations in the same order (blocks in groups of four: exact
 * integer sums, then four F32 lanes, then the lanes and the leftover blocks), so a result does
 * not depend on which form computed it (and so not on the thread split).
 */
static __m256i q4_values(const struct block_q4_0 * x) {
    const __m128i packed = _mm_loadu_si128((const __m128i *)x->qs);
    const __m256i codes = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0f));
    return _mm256_sub_epi8(codes, _mm256_set1_epi8(8));
}

/*
 * Eight int32 partial sums of a block's Σ v · q (v = code - 8), as |q| · (v · sign q): |q| read
 * as unsigned is right for q = -128 too, v · ±1 fits a byte, and a pair of products is at most
 * 2 · 128 · 8 in magnitude, so the 16-bit sums do not saturate.
 */
static __m256i q4_partial(__m256i v, __m256i q, __m256i aq) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(v, q)), _mm256_set1_epi16(1));
}

/* lane j: the whole sum of vj's eight lanes */
static __m128i sum_lanes4(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* one leftover block's term: its exact sum (of partial sums p) times dx·dy, added to tail */
static float q4_tail(__m256i p, ggspec_fp16_t dx, ggspec_fp16_t dy, float tail) {
    return __builtin_fmaf((float)hsum_epi32(p), _cvtsh_ss(dx) * _cvtsh_ss(dy), tail);
}

/* one Q4_0 . Q8_0 block's eight partial sums */
static __m256i q4_block(const struct block_q4_0 * x, const struct block_q8_0 * y) {
    const __m256i q = _mm256_loadu_si256((const __m256i *)y->qs);
    return q4_partial(q4_values(x), q, _mm256_abs_epi8(q));
}

/* the exact integer sums of four Q4_0 . Q8_0 blocks, one a lane, and of one */
static __m128i q4_sums4(const struct block_q4_0 * x, const struct block_q8_0 * y) {
    return sum_lanes4(q4_block(&x[0], &y[0]), q4_block(&x[1], &y[1]), q4_block(&x[2], &y[2]), q4_block(&x[3], &y[3]));
}

static int q4_sum(const struct block_q4_0 * x, const struct block_q8_0 * y) {
    return hsum_epi32(q4_block(x, y));
}

/* out = { x0·y0, x1·y0, x0·y1, x1·y1 } */
static void dot2x2_q4_0_q8_0(int64_t n, const void * vx0, const void * vx1, const void * vy0, const void * vy1,
                             float * out) {
    const struct block_q4_0 * x0 = vx0;
    const struct block_q4_0 * x1 = vx1;
    const struct block_q8_0 * y0 = vy0;
    const struct block_q8_0 * y1 = vy1;
    const int64_t nb = n / GGSPEC_QK8_0;
    __m128 acc00 = _mm_setzero_ps(), acc10 = _mm_setzero_ps(), acc01 = _mm_setzero_ps(), acc11 = _mm_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4) {
        __m256i p00[4], p10[4], p01[4], p11[4];
        for (int j = 0; j < 4; j++) {
            const __m256i v0 = q4_values(&x0[b + j]);
            const __m256i v1 = q4_values(&x1[b + j]);
            const __m256i q0 = _mm256_loadu_si256((const __m256i *)y0[b + j].qs);
            const __m256i q1 = _mm256_loadu_si256((const __m256i *)y1[b + j].qs);
            const __m256i aq0 = _mm256_abs_epi8(q0);
            const __m256i aq1 = _mm256_abs_epi8(q1);
            p00[j] = q4_partial(v0, q0, aq0);
            p10[j] = q4_partial(v1, q0, aq0);
            p01[j] = q4_partial(v0, q1, aq1);
            p11[j] = q4_partial(v1, q1, aq1);
        }
        const __m128 dx0 = scales4(&x0[b].d, sizeof(*x0)), dx1 = scales4(&x1[b].d, sizeof(*x1));
        const __m128 dy0 = scales4(&y0[b].d, sizeof(*y0)), dy1 = scales4(&y1[b].d, sizeof(*y1));
        acc00 = _mm_fmadd_ps(_mm_cvtepi32_ps(sum_lanes4(p00[0], p00[1], p00[2], p00[3])), _mm_mul_ps(dx0, dy0), acc00);
        acc10 = _mm_fmadd_ps(_mm_cvtepi32_ps(sum_lanes4(p10[0], p10[1], p10[2], p10[3])), _mm_mul_ps(dx1, dy0), acc10);
        acc01 = _mm_fmadd_ps(_mm_cvtepi32_ps(sum_lanes4(p01[0], p01[1], p01[2], p01[3])), _mm_mul_ps(dx0, dy1), acc01);
        acc11 = _mm_fmadd_ps(_mm_cvtepi32_ps(sum_lanes4(p11[0], p11[1], p11[2], p11[3])), _mm_mul_ps(dx1, dy1), acc11);
    }
    float t00 = 0.0f, t10 = 0.0f, t01 = 0.0f, t11 = 0.0f;
    for (; b < nb; b++) {
        const __m256i v0 = q4_values(&x0[b]);
        const __m256i v1 = q4_values(&x1[b]);
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)y0[b].qs);
        const __m256i q1 = _mm256_loadu_si256((const __m256i *)y1[b].qs);
        const __m256i aq0 = _mm256_abs_epi8(q0);
        const __m256i aq1 = _mm256_abs_epi8(q1);
        t00 = q4_tail(q4_partial(v0, q0, aq0), x0[b].d, y0[b].d, t00);
        t10 = q4_tail(q4_partial(v1, q0, aq0), x1[b].d, y0[b].d, t10);
        t01 = q4_tail(q4_partial(v0, q1, aq1), x0[b].d, y1[b].d, t01);
        t11 = q4_tail(q4_partial(v1, q1, aq1), x1[b].d, y1[b].d, t11);
    }
    out[0] = hsum4_ps(acc00) + t00;
    out[1] = hsum4_ps(acc10) + t10;
    out[2] = hsum4_ps(acc01) + t01;
    out[3] = hsum4_ps(acc11) + t11;
}

/*
 * Quantizing to Q8_0 with the reference rounding, bit for bit (ggspec_quantize_row_q8_0_reference,
 * for finite input): the largest magnitude (a maximum is exact in any order), d and 1/d in
 * scalar code as there, the products x·(1/d) as there, and roundf's halves away from zero
 * rebuilt from truncation: t = trunc(v), v - t is exact, and |v - t| >= 1/2 moves t one away
 * from zero.
 */
static void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    struct block_q8_0 * y = vy;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 one  = _mm256_set1_ps(1.0f);
    for (int64_t b = 0; b < k / GGSPEC_QK8_0; b++) {
        const float * xb = x + b * GGSPEC_QK8_0;
        __m256 v[4];
        for (int j = 0; j < 4; j++) {
            v[j] = _mm256_loadu_ps(xb + 8 * j);
        }
        const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                                       _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        const float amax = _mm_cvtss_f32(h);

        const float d  = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = ggspec_fp32_to_fp16(d);

        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int j = 0; j < 4; j++) {
            const __m256 p = _mm256_mul_ps(v[j], vid);
            const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m256 away = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(p, t)), half, _CMP_GE_OQ);
            const __m256 step = _mm256_and_ps(away, _mm256_or_ps(_mm256_and_ps(p, sign), one));
            q[j] = _mm256_cvtps_epi32(_mm256_add_ps(t, step));
        }
        /* int32 -> int8 (in range: |q| <= 127), then undo the packs' lane interleaving */
        const __m256i q16 = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        const __m256i q8 = _mm256_permutevar8x32_epi32(q16, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)y[b].qs, q8);
    }
}

/* the F16C conversions round to nearest even, as ggspec_fp32_to_fp16 does; a NaN keeps its
   payload here, but every NaN entry of the tables holds the same quiet NaN */
static void lookup_f16(const ggspec_fp16_t * table, int64_t n, const float * x, float * y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16_t h[8];
        _mm_storeu_si128((__m128i *)h, _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
        for (int j = 0; j < 8; j++) {
            h[j] = table[h[j]];
        }
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h)));
    }
    for (; i < n; i++) {
        y[i] = _cvtsh_ss(table[_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT)]);
    }
}

static double hsum_pd(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

static double sum_f32(int64_t n, const float * x) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    }
    double sum = hsum_pd(_mm256_add_pd(s0, s1));
    for (; i < n; i++) {
        sum += (double)x[i];
    }
    return sum;
}

static double sum_sq_dev_f32(int64_t n, const float * x, float mean) {
    const __m256 m = _mm256_set1_ps(mean);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + i), m);
        const __m256 sq = _mm256_mul_ps(v, v); /* rounded to float, as in the portable loop */
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
    }
    double sum = hsum_pd(_mm256_add_pd(s0, s1));
    for (; i < n; i++) {
        const float v = x[i] - mean;
        sum += (double)(v * v);
    }
    return sum;
}

#pragma GCC pop_options

static const struct ggspec_simd avx2_kernels = {
    .name           = "avx2",
    .gemm           = gemm,
    .dot_q4_0_q8_0  = dot_q4_0_q8_0,
    .dot_q8_0_q8_0  = dot_q8_0_q8_0,
    .dot2x2_q4_0_q8_0 = dot2x2_q4_0_q8_0,
    .quantize_q8_0  = quantize_row_q8_0,
    .fp32_to_fp16   = fp32_to_fp16,
    .add_f32        = add_f32,
    .mul_f32        = mul_f32,
    .lookup_f16     = lookup_f16,
    .sum_f32        = sum_f32,
    .sum_sq_dev_f32 = sum_sq_dev_f32,
    .max_f32        = max_f32,
};

const struct ggspec_simd * ggspec_simd_avx2(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
        return &avx2_kernels;
    }
    return NULL;
}

#else

const struct ggspec_simd * ggspec_simd_avx2(void) {
    return NULL;
}

#endif
