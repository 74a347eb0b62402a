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
 *   - the quantized dot products compute each block's exact integer sum two blocks to a zmm
 *     register, then scale and accumulate them in the F32 lanes, groups and order of the
 *     AVX2 forms (8 lanes for Q8_0, 4 lanes per product for Q4_0);
 *   - the element-wise kernels are exact per element (the table lookups, ADD, MUL, the
 *     Q8_0 rounding, the maximum) or keep the AVX2 forms' double-precision lane order (NORM's
 *     sums: two groups of four double lanes, i.e. one group of eight here, then the same
 *     horizontal order).
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

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

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
                 int64_t p0, int64_t kc, int width, float * dst) {
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
            float * out = (float *)((char *)c + (size_t)r * c_stride);
            if (first) {
                _mm512_storeu_ps(out, acc[r][0]);
                _mm512_storeu_ps(out + 16, acc[r][1]);
            } else {
                _mm512_storeu_ps(out, _mm512_add_ps(_mm512_loadu_ps(out), acc[r][0]));
                _mm512_storeu_ps(out + 16, _mm512_add_ps(_mm512_loadu_ps(out + 16), acc[r][1]));
            }
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

static void gemm(const struct ggspec_gemm * g) {
    if (g->m <= 0 || g->n <= 0) {
        return;
    }
    if (g->k <= 0) {
        for (int64_t j = 0; j < g->m; j++) {
            memset((char *)g->c + (size_t)j * g->c_stride, 0, (size_t)g->n * sizeof(float));
        }
        return;
    }
    const int64_t kc_max = min64(g->k, KC);
    const int64_t nc_max = (min64(g->n, NC) + NR - 1) / NR * NR;
    const int64_t mc_max = (min64(g->m, MC) + MR - 1) / MR * MR;
    const size_t  ybytes = (size_t)(kc_max * nc_max) * sizeof(float);
    const size_t  xbytes = (size_t)(kc_max * mc_max) * sizeof(float);
    float * ypack = aligned_alloc(64, (ybytes + xbytes + 63) / 64 * 64);
    GGSPEC_ASSERT(ypack != NULL, "out of memory for the matrix product's packed blocks");
    float * xpack = ypack + kc_max * nc_max;

    for (int64_t jc = 0; jc < g->n; jc += NC) {
        const int64_t nc = min64(NC, g->n - jc);
        for (int64_t pc = 0; pc < g->k; pc += KC) {
            const int64_t kc = min64(KC, g->k - pc);
            pack(g->y, g->y_stride, g->y_type, jc, nc, pc, kc, NR, ypack);
            for (int64_t ic = 0; ic < g->m; ic += MC) {
                const int64_t mc = min64(MC, g->m - ic);
                pack(g->x, g->x_stride, g->x_type, ic, mc, pc, kc, MR, xpack);
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        float * c = (float *)((char *)g->c + (size_t)(ic + ir) * g->c_stride) + jc + jr;
                        micro_kernel(kc, xpack + ir * kc, ypack + jr * kc, c, g->c_stride,
                                     (int)min64(MR, mc - ir), (int)min64(NR, nc - jr), pc == 0);
                    }
                }
            }
        }
    }
    free(ypack);
}

#pragma GCC pop_options

const struct ggspec_simd * ggspec_simd_avx512(void) {
    const struct ggspec_simd * avx2 = ggspec_simd_avx2();
    __builtin_cpu_init();
    if (avx2 == NULL || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl")) {
        return NULL;
    }
    static struct ggspec_simd kernels;
    kernels = *avx2;
    kernels.name = "avx512";
    kernels.gemm = gemm;
    return &kernels;
}

#else

const struct ggspec_simd * ggspec_simd_avx512(void) {
    return NULL;
}

#endif
