/*
 * simd_avx512.c - the kernels of simd.h for x86-64 CPUs with AVX-512 (F, BW and VL, besides
 * AVX2, FMA and F16C). Compiled for the x86-64 baseline like the rest; only the kernels carry
 * the target attribute (the pragma below), and ggspec_simd_avx512() hands them out only after
 * asking the CPU (and, through libgcc, the OS: the zmm state must be enabled).
 *
 * Every kernel here gives the same bits as its AVX2 form (simd_avx2.c), so a result does not
 * depend on which of the two paths a machine has; only the work per instruction changes:
 *   - the matrix product is the same packed, blocked GEMM with a wider micro-tile (MR x NR =
 *     14 x 32 floats, 28 zmm accumulators): every element of C is still the F32 sum over its
 *     GGSPEC_GEMM_KC blocks (in order) of an FMA chain over the block (in order);
 *   - the quantized dot products (one row against one) compute each block's exact integer sum
 *     with 512-bit integer arithmetic, then scale and accumulate them in the F32 lanes, groups
 *     and order of the AVX2 forms (8 lanes for Q8_0, 4 for Q4_0);
 *   - ADD, MUL, the Q8_0 rounding, F32 to F16 and the maximum are exact per element, 16 lanes
 *     at a time;
 *   - the four-products Q4_0 kernel, the fp16 table lookups and NORM's sums are the AVX2
 *     forms themselves (the note above avx512_kernels says why).
 * The GEMM driver, the F32 sums and the element-wise kernels are simd_x86.h's, written once
 * for both widths; what stays here is what only AVX-512 does.
 */
#include "simd.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")

/* GEMM blocking: MR x NR registers; an MC x KC block of X fits L2, a KC x NR panel of Y L1 */
#define MR 14
#define NR 32
#define MC 196
#define NC 1024
#define KC GGSPEC_GEMM_KC

/*
 * Only the matrix product uses zmm16 .. zmm31 (its 28 accumulators). On the Xeon this was
 * written on, a short kernel that touches them, called from the baseline (SSE) code of kernels.c,
 * ran 3-5 times slower than one that keeps to zmm0 .. zmm15 (measured: MUL_MAT Q4_0 256 at
 * 4.0 ms against 0.9 ms); so every loop of the other kernels starts with this statement, which
 * tells gcc those registers do not survive it, and gcc keeps the loop's values in zmm0 .. zmm15.
 */
#define LOW_REGISTERS_ONLY()                                                                       \
    __asm__ volatile("" ::: "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", \
                     "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31")

#define W               16
#define VF              __m512
#define VLOAD           _mm512_loadu_ps
#define VSTORE          _mm512_storeu_ps
#define VADD            _mm512_add_ps
#define VMUL            _mm512_mul_ps
#define VMAX            _mm512_max_ps
#define VSET1           _mm512_set1_ps
#define VHAS_NAN(v)     (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0)
#define VSTORE_F16(p, v) _mm256_storeu_si256((__m256i *)(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT))
#define LOOP_START()    LOW_REGISTERS_ONLY()

#include "simd_x86.h" /* the GEMM driver, the F32 sums, the element-wise kernels (shared with AVX2) */

/* r[c] := column c of the 16 x 16 matrix whose rows were r[0..15] */
static void transpose16(__m512 r[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i]     = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* u[4q + j]: in 128-bit lane L, column 4L + j of rows 4q .. 4q+3 */
    for (int q = 0; q < 4; q++) {
        u[4 * q + 0] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
        u[4 * q + 1] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0xee);
        u[4 * q + 2] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
        u[4 * q + 3] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xee);
    }
    for (int j = 0; j < 4; j++) {
        const __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
        const __m512 v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
        const __m512 w0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
        const __m512 w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
        r[j]      = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[8 + j]  = _mm512_shuffle_f32x4(v0, w0, 0xdd);
        r[4 + j]  = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(v1, w1, 0xdd);
    }
}

/* the `mask`ed columns of 16 from p of an F32 or F16 row, as floats (0 where not loaded) */
static __m512 load16(const char * row, enum ggspec_type type, int64_t p, __mmask16 mask) {
    if (type == GGSPEC_TYPE_F32) {
        return _mm512_maskz_loadu_ps(mask, (const float *)row + p);
    }
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, (const ggspec_fp16_t *)row + p));
}

/* rows r0 .. r0+rows-1, columns p0 .. p0+kc-1 of an F32 or F16 matrix into panels of `width`
   rows (14 or 32), zero-padded to whole panels: dst[panel][kk][w]; 16 x 16 transposes */
static void pack(const void * base, size_t stride, enum ggspec_type type, int64_t r0, int64_t rows,
                 int64_t p0, int64_t kc, int width, float * dst, float * tmp) {
    (void)tmp; /* the 16 x 16 transposes need no row buffer */
    const int64_t panels = (rows + width - 1) / width;
    const int groups = (width + 15) / 16;
    const __mmask16 lanes = (__mmask16)(width % 16 == 0 ? 0xffff : (1u << (width % 16)) - 1);
    for (int64_t p = 0; p < panels; p++) {
        float * panel = dst + p * width * kc;
        for (int64_t k0 = 0; k0 < kc; k0 += 16) {
            const int kn = (int)min64(16, kc - k0);
            const __mmask16 kmask = (__mmask16)(kn == 16 ? 0xffff : (1u << kn) - 1);
            for (int gi = 0; gi < groups; gi++) {
                const int64_t first = p * width + gi * 16; /* panel row of lane 0 */
                const int in_group = gi == groups - 1 && width % 16 != 0 ? width % 16 : 16;
                __m512 v[16];
                for (int i = 0; i < 16; i++) {
                    const int64_t r = first + i;
                    v[i] = i < in_group && r < rows
                               ? load16((const char *)base + (size_t)(r0 + r) * stride, type, p0 + k0, kmask)
                               : _mm512_setzero_ps();
                }
                transpose16(v);
                const __mmask16 m = in_group == 16 ? 0xffff : lanes;
                for (int j = 0; j < kn; j++) {
                    _mm512_mask_storeu_ps(panel + (k0 + j) * width + gi * 16, m, v[j]);
                }
            }
        }
    }
}

/* C[MR x NR tile] (+)= X panel . Y panel over kc; mr x nr of the tile are stored */
static void micro_kernel(int64_t kc, const float * xp, const float * yp, float * c, size_t c_stride,
                         int mr, int nr, int first) {
    __m512 acc[MR][2];
#pragma GCC unroll 14
    for (int r = 0; r < MR; r++) {
        acc[r][0] = _mm512_setzero_ps();
        acc[r][1] = _mm512_setzero_ps();
    }
    for (int64_t kk = 0; kk < kc; kk++) {
        const __m512 y0 = _mm512_load_ps(yp);
        const __m512 y1 = _mm512_load_ps(yp + 16);
#pragma GCC unroll 14
        for (int r = 0; r < MR; r++) {
            const __m512 x = _mm512_set1_ps(xp[r]);
            acc[r][0] = _mm512_fmadd_ps(x, y0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(x, y1, acc[r][1]);
        }
        xp += MR;
        yp += NR;
    }

    if (mr == MR && nr == NR) {
#pragma GCC unroll 14
        for (int r = 0; r < MR; r++) {
            store_row((float *)((char *)c + (size_t)r * c_stride), acc[r][0], acc[r][1], first);
        }
        return;
    }
    /* an edge tile: the first nr lanes of the first mr rows, through masked loads and stores */
    const __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
    const __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffff : nr <= 16 ? 0 : (1u << (nr - 16)) - 1);
#pragma GCC unroll 14
    for (int r = 0; r < MR; r++) {
        if (r >= mr) {
            break;
        }
        float * out = (float *)((char *)c + (size_t)r * c_stride);
        if (first) {
            _mm512_mask_storeu_ps(out, m0, acc[r][0]);
            _mm512_mask_storeu_ps(out + 16, m1, acc[r][1]);
        } else {
            _mm512_mask_storeu_ps(out, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, out), acc[r][0]));
            _mm512_mask_storeu_ps(out + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, out + 16), acc[r][1]));
        }
    }
}

/* --- the quantized dot products ------------------------------------------------------------- */

/* the two Q8_0 blocks' codes at x and x + 1 in one register (block x in the low half) */
static __m512i q8_pair(const struct block_q8_0 * x) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)x[0].qs)),
                              _mm256_loadu_si256((const __m256i *)x[1].qs), 1);
}

/* the 16 int32 partial sums of one Q8_0 . Q8_0 block (exact: 16-bit products, pairs summed) */
static __m512i block_q8_0_q8_0(const struct block_q8_0 * x, const struct block_q8_0 * y) {
    return _mm512_madd_epi16(_mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)x->qs)),
                             _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)y->qs)));
}

/* [a.L0 + a.L1, a.L2 + a.L3, b.L0 + b.L1, b.L2 + b.L3] in 128-bit lanes */
static __m512i add_lane_pairs(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, 0x88), _mm512_shuffle_i32x4(a, b, 0xdd));
}

/* lane j: the whole sum of the 16 lanes of vj (integer sums: exact in any order) */
static __m256i sum_lanes8(const __m512i v[8]) {
    /* 128-bit lane k of r0: block k's four partials; of r1: block 4 + k's */
    const __m512i r0 = add_lane_pairs(add_lane_pairs(v[0], v[1]), add_lane_pairs(v[2], v[3]));
    const __m512i r1 = add_lane_pairs(add_lane_pairs(v[4], v[5]), add_lane_pairs(v[6], v[7]));
    /* lane k: [r0 k0 + k2, r1 k0 + k2, r0 k1 + k3, r1 k1 + k3], then [total k, total 4 + k, ...] */
    __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(r0, r1), _mm512_unpackhi_epi32(r0, r1));
    t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, 0x4e));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, t));
}

/* the exact integer sums of eight Q8_0 . Q8_0 blocks, one a lane, and of one */
static __m256i q8_sums8(const struct block_q8_0 * x, const struct block_q8_0 * y) {
    __m512i p[8];
    for (int j = 0; j < 8; j++) {
        p[j] = block_q8_0_q8_0(&x[j], &y[j]);
    }
    return sum_lanes8(p);
}

static int q8_sum(const struct block_q8_0 * x, const struct block_q8_0 * y) {
    return _mm512_reduce_add_epi32(block_q8_0_q8_0(x, y));
}

/*
 * Q4_0 . Q8_0, one product or four (x0, x1 against y0, y1), as the AVX2 forms: blocks in groups
 * of four, each block's exact integer sum times dx·dy into four F32 lanes per product, then
 * the lanes, plus the leftover blocks' FMA chain. Two blocks to a register here.
 */

/* the codes - 8 of blocks x and x + 1, in the order of their Q8_0 partners' (q8_pair) */
static __m512i q4_pair(const struct block_q4_0 * x) {
    const __m256i packed = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)x[0].qs)),
                                                   _mm_loadu_si128((const __m128i *)x[1].qs), 1);
    /* 128-bit lanes [x0, x0, x1, x1], the second of each pair shifted to its high nibbles */
    const __m512i twice = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3), _mm512_castsi256_si512(packed));
    const __m512i shift = _mm512_setr_epi64(0, 0, 0x0004000400040004LL, 0x0004000400040004LL, 0, 0,
                                            0x0004000400040004LL, 0x0004000400040004LL);
    const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(twice, shift), _mm512_set1_epi8(0x0f));
    return _mm512_sub_epi8(codes, _mm512_set1_epi8(8));
}

/*
 * 16 int32 partial sums (8 per block) of Σ v · q, as |q| · (v · sign q), with v · sign q by a
 * masked negation (|q| is 0 where q is): as in the AVX2 form, no 16-bit sum saturates.
 */
static __m512i q4_partial(__m512i v, __m512i q, __m512i aq) {
    const __m512i sv = _mm512_mask_sub_epi8(v, _mm512_movepi8_mask(q), _mm512_setzero_si512(), v);
    return _mm512_madd_epi16(_mm512_maddubs_epi16(aq, sv), _mm512_set1_epi16(1));
}

/* lane k (k < 4): the whole sum of block k's partials, blocks 0, 1 in a and 2, 3 in b */
static __m128i sum_lanes4(__m512i a, __m512i b) {
    __m512i r = add_lane_pairs(a, b);
    r = _mm512_add_epi32(r, _mm512_shuffle_epi32(r, 0x4e));
    r = _mm512_add_epi32(r, _mm512_shuffle_epi32(r, 0xb1));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castsi512_si128(_mm512_permutexvar_epi32(order, r));
}

/* the exact integer sums of four Q4_0 . Q8_0 blocks, one a lane (two blocks to a register) */
static __m128i q4_sums4(const struct block_q4_0 * x, const struct block_q8_0 * y) {
    const __m512i q0 = q8_pair(&y[0]), q1 = q8_pair(&y[2]);
    const __m512i p0 = q4_partial(q4_pair(&x[0]), q0, _mm512_abs_epi8(q0));
    const __m512i p1 = q4_partial(q4_pair(&x[2]), q1, _mm512_abs_epi8(q1));
    return sum_lanes4(p0, p1);
}

/* one leftover block's exact sum, with 256-bit partials */
static int q4_sum(const struct block_q4_0 * x, const struct block_q8_0 * y) {
    const __m128i packed = _mm_loadu_si128((const __m128i *)x->qs);
    const __m256i codes = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0f));
    const __m256i v = _mm256_sub_epi8(codes, _mm256_set1_epi8(8));
    const __m256i q = _mm256_loadu_si256((const __m256i *)y->qs);
    const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(q), _mm256_sign_epi8(v, q)), _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* --- the element-wise kernels ------------------------------------------------------------------ */

/* Q8_0 with the reference rounding, bit for bit, as the AVX2 form (its comment says how) */
static void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    struct block_q8_0 * y = vy;
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 one  = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    for (int64_t b = 0; b < k / GGSPEC_QK8_0; b++) {
        LOW_REGISTERS_ONLY();
        const float * xb = x + b * GGSPEC_QK8_0;
        const __m512 v[2] = { _mm512_loadu_ps(xb), _mm512_loadu_ps(xb + 16) };
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v[0]), _mm512_abs_ps(v[1])));

        const float d  = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = ggspec_fp32_to_fp16(d);

        const __m512 vid = _mm512_set1_ps(id);
        for (int j = 0; j < 2; j++) {
            const __m512 p = _mm512_mul_ps(v[j], vid);
            const __m512 t = _mm512_roundscale_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __mmask16 away = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(p, t)), half, _CMP_GE_OQ);
            /* ±1 with p's sign */
            const __m512 step = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(p), sign),
                                                                    _mm512_castps_si512(one)));
            const __m512i q = _mm512_cvtps_epi32(_mm512_mask_add_ps(t, away, t, step));
            _mm_storeu_si128((__m128i *)(y[b].qs + 16 * j), _mm512_cvtepi32_epi8(q)); /* |q| <= 127 */
        }
    }
}

#pragma GCC pop_options

/*
 * Four kernels stay the AVX2 form's (ggspec_simd_avx512 starts from its table), as they measured faster:
 *   - dot2x2_q4_0_q8_0: four products at a time need more than zmm0 .. zmm15 (LOW_REGISTERS_ONLY);
 *     the 512-bit form, which gcc compiled onto zmm16 .. zmm31, took MUL_MAT Q4_0 256 from
 *     0.9 ms (when it was kept to 16 registers with -ffixed-xmm16..31) to 4.0 ms;
 *   - lookup_f16: 16 table reads per 512-bit store and reload of the fp16 codes ran at half the
 *     speed of 8 per 256-bit one (GELU 1M: 1.2 ms against 0.6 ms);
 *   - sum_f32, sum_sq_dev_f32: NORM's double sums, whose lane order (two accumulators of four
 *     doubles) the 512-bit form could keep only as one chain of eight, latency-bound (NORM 1M:
 *     1.18 ms against 0.92 ms); a faster order would change NORM's bits from the AVX2 path's.
 */
/* called once, by simd.c's choice of kernels: AVX2's table, the kernels of this file in place of theirs */
const struct ggspec_simd * ggspec_simd_avx512(void) {
    static struct ggspec_simd avx512_kernels;
    const struct ggspec_simd * avx2 = ggspec_simd_avx2();
    __builtin_cpu_init();
    if (avx2 == NULL || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl")) {
        return NULL;
    }
    avx512_kernels = *avx2;
    avx512_kernels.name = "avx512";
    avx512_kernels.gemm = gemm;
    avx512_kernels.dot_q4_0_q8_0 = dot_q4_0_q8_0;
    avx512_kernels.dot_q8_0_q8_0 = dot_q8_0_q8_0;
    avx512_kernels.quantize_q8_0 = quantize_row_q8_0;
    avx512_kernels.fp32_to_fp16 = fp32_to_fp16;
    avx512_kernels.add_f32 = add_f32;
    avx512_kernels.mul_f32 = mul_f32;
    avx512_kernels.max_f32 = max_f32;
    return &avx512_kernels;
}

#else

const struct ggspec_simd * ggspec_simd_avx512(void) {
    return NULL;
}

#endif
