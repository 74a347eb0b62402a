/*
 * simd_x86.h - what the AVX2 and the AVX-512 kernels (simd_avx2.c, simd_avx512.c) share, written
 * once over a vector of W floats: each of the two files defines the macros below, its GEMM
 * blocking (MR, NR, MC, NC, KC) and then includes this file inside its target pragma, before
 * its own pack() and micro_kernel(), which the GEMM driver here calls.
 *
 *   W                 floats in a vector (8, 16)
 *   VF                the vector type (__m256, __m512)
 *   VLOAD, VSTORE     unaligned load and store of W floats
 *   VADD, VMUL, VMAX  lane-wise arithmetic
 *   VSET1             W copies of a float
 *   VHAS_NAN(v)       nonzero when a lane of v is a NaN
 *   VSTORE_F16(p, v)  the W lanes of v to fp16 at p, rounded to nearest even (F16C)
 *   LOOP_START()      the first statement of every vector loop (AVX-512: keep to zmm0..15)
 *
 * Each element-wise kernel is exact per element, so the two widths give the same bits; the
 * driver gives every element of C the same sum whatever MR x NR (simd_avx2.c says how).
 */
#pragma once

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* --- the matrix product's driver: blocks of Y and X packed into panels, then MR x NR tiles --- */

/* rows r0 .. r0+rows-1, columns p0 .. p0+kc-1 into panels of `width` rows (tmp: kc floats) */
static void pack(const void * base, size_t stride, enum ggspec_type type, int64_t r0, int64_t rows,
                 int64_t p0, int64_t kc, int width, float * dst, float * tmp);
/* C[MR x NR tile] (+)= X panel . Y panel over kc; mr x nr of the tile are stored */
static void micro_kernel(int64_t kc, const float * xp, const float * yp, float * c, size_t c_stride,
                         int mr, int nr, int first);

/* a whole row of a tile, two vectors: stored (the first k-block) or added to what is there */
static inline void store_row(float * out, VF a0, VF a1, int first) {
    if (first) {
        VSTORE(out, a0);
        VSTORE(out + W, a1);
    } else {
        VSTORE(out, VADD(VLOAD(out), a0));
        VSTORE(out + W, VADD(VLOAD(out + W), a1));
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
    const size_t  tbytes = (size_t)kc_max * sizeof(float);
    float * ypack = aligned_alloc(64, (ybytes + xbytes + tbytes + 63) / 64 * 64);
    GGSPEC_ASSERT(ypack != NULL, "out of memory for the matrix product's packed blocks");
    float * xpack = ypack + kc_max * nc_max;
    float * tmp   = xpack + kc_max * mc_max;

    for (int64_t jc = 0; jc < g->n; jc += NC) {
        const int64_t nc = min64(NC, g->n - jc);
        for (int64_t pc = 0; pc < g->k; pc += KC) {
            const int64_t kc = min64(KC, g->k - pc);
            pack(g->y, g->y_stride, g->y_type, jc, nc, pc, kc, NR, ypack, tmp);
            for (int64_t ic = 0; ic < g->m; ic += MC) {
                const int64_t mc = min64(MC, g->m - ic);
                pack(g->x, g->x_stride, g->x_type, ic, mc, pc, kc, MR, xpack, tmp);
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

/* --- the quantized dot products' F32 side, in the one order both forms keep --------------- */

/* horizontal sums in a fixed order */
static float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

static float hsum4_ps(__m128 s) {
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* the fp16 scales of eight (four) consecutive blocks `size` bytes apart, as floats */
#define SCALE_D(j) (*(const short *)((const char *)d + (j) * size))
static __m256 scales8(const ggspec_fp16_t * d, size_t size) {
    return _mm256_cvtph_ps(_mm_set_epi16(SCALE_D(7), SCALE_D(6), SCALE_D(5), SCALE_D(4), SCALE_D(3), SCALE_D(2),
                                         SCALE_D(1), SCALE_D(0)));
}

static __m128 scales4(const ggspec_fp16_t * d, size_t size) {
    return _mm_cvtph_ps(_mm_set_epi16(0, 0, 0, 0, SCALE_D(3), SCALE_D(2), SCALE_D(1), SCALE_D(0)));
}
#undef SCALE_D

/*
 * The quantized dot products: each block's integer sum exact, then Σ s·(dx·dy) in F32 (dx·dy is
 * exact: two 11-bit significands), eight (Q8_0) or four (Q4_0) blocks at a time in F32 lanes,
 * then the lanes, plus the leftover blocks' FMA chain, in this one order on both widths. Each
 * file gives the exact integer sums, one block a lane:
 */
static __m256i q8_sums8(const struct block_q8_0 * x, const struct block_q8_0 * y);
static int     q8_sum(const struct block_q8_0 * x, const struct block_q8_0 * y);
static __m128i q4_sums4(const struct block_q4_0 * x, const struct block_q8_0 * y);
static int     q4_sum(const struct block_q4_0 * x, const struct block_q8_0 * y);

static float dot_q8_0_q8_0(int64_t n, const void * vx, const void * vy) {
    const struct block_q8_0 * x = vx;
    const struct block_q8_0 * y = vy;
    const int64_t nb = n / GGSPEC_QK8_0;
    __m256 acc = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 8 <= nb; b += 8) {
        LOOP_START();
        const __m256i s8 = q8_sums8(&x[b], &y[b]);
        const __m256 d = _mm256_mul_ps(scales8(&x[b].d, sizeof(*x)), scales8(&y[b].d, sizeof(*y)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s8), d, acc);
    }
    float tail = 0.0f;
    for (; b < nb; b++) {
        LOOP_START();
        const float d = _cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d);
        tail = __builtin_fmaf((float)q8_sum(&x[b], &y[b]), d, tail);
    }
    return hsum_ps(acc) + tail;
}

static float dot_q4_0_q8_0(int64_t n, const void * vx, const void * vy) {
    const struct block_q4_0 * x = vx;
    const struct block_q8_0 * y = vy;
    const int64_t nb = n / GGSPEC_QK8_0;
    __m128 acc = _mm_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4) {
        LOOP_START();
        const __m128i s4 = q4_sums4(&x[b], &y[b]);
        const __m128 d = _mm_mul_ps(scales4(&x[b].d, sizeof(*x)), scales4(&y[b].d, sizeof(*y)));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(s4), d, acc);
    }
    float tail = 0.0f;
    for (; b < nb; b++) {
        LOOP_START();
        const float d = _cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d);
        tail = __builtin_fmaf((float)q4_sum(&x[b], &y[b]), d, tail);
    }
    return hsum4_ps(acc) + tail;
}

/* --- the element-wise kernels: exact per element, W lanes at a time ------------------------- */

/* F16C rounds to nearest even as ggspec_fp32_to_fp16 does; W values holding a NaN go through
   ggspec_fp32_to_fp16 (its one quiet NaN, where F16C would keep the payload) */
static void fp32_to_fp16(const float * x, ggspec_fp16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        LOOP_START();
        const VF v = VLOAD(x + i);
        if (VHAS_NAN(v)) {
            for (int j = 0; j < W; j++) {
                y[i + j] = ggspec_fp32_to_fp16(x[i + j]);
            }
            continue;
        }
        VSTORE_F16(y + i, v);
    }
    for (; i < n; i++) {
        y[i] = ggspec_fp32_to_fp16(x[i]);
    }
}

static void add_f32(int64_t n, const float * x, const float * y, float * z) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        LOOP_START();
        VSTORE(z + i, VADD(VLOAD(x + i), VLOAD(y + i)));
    }
    for (; i < n; i++) {
        z[i] = x[i] + y[i];
    }
}

static void mul_f32(int64_t n, const float * x, const float * y, float * z) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        LOOP_START();
        VSTORE(z + i, VMUL(VLOAD(x + i), VLOAD(y + i)));
    }
    for (; i < n; i++) {
        z[i] = x[i] * y[i];
    }
}

/* the maximum of non-NaN floats is the same value in any order */
static float max_f32(int64_t n, const float * x) {
    VF m = VSET1(-__builtin_inff());
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        LOOP_START();
        m = VMAX(m, VLOAD(x + i));
    }
    float lanes[W];
    VSTORE(lanes, m);
    float max = -__builtin_inff();
    for (int j = 0; j < W; j++) {
        max = max > lanes[j] ? max : lanes[j];
    }
    for (; i < n; i++) {
        max = max > x[i] ? max : x[i];
    }
    return max;
}
