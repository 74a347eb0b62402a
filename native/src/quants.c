/*
 * quants.c - half precision conversion and the Q4_0 / Q8_0 block formats: quantizing (with
 * rc.8's reference rounding), dequantizing, and the dot products a matrix product uses.
 *
 * Both block formats cover 32 values with one fp16 scale d:
 *   Q4_0 (18 bytes): d, then 16 bytes; byte j holds the 4-bit codes of values j (low nibble)
 *                    and j + 16 (high nibble); value = (code - 8) * d.
 *   Q8_0 (34 bytes): d, then 32 signed bytes q; value = q * d.
 *
 * The arithmetic (operation order, float vs double accumulation, rounding functions) follows
 * rc.8's portable code paths, so results are bit-identical to an rc.8 build without SIMD. The
 * dot products and Q8_0 quantization of a row go through simd.h's kernel table: on the portable
 * path these functions; on the AVX2 one the dot products reorder only the F32 accumulation of
 * exact block sums, and the quantizer gives the same bytes.
 */
#include "ggspec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"
#include "internal.h"
#include "simd.h"

/* half precision */

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* enforces CORE-50 */
float ggspec_fp16_to_fp32(ggspec_fp16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp  = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;

    if (exp == 0) {
        /* zero or subnormal: mant units of 2^-24, exact in float */
        const float v = (float)mant * 0x1p-24f;
        return float_of(bits_of(v) | sign);
    }
    if (exp == 0x1f) {
        /* infinity, or a NaN: payload kept, made quiet (as rc.8's arithmetic conversion does) */
        return float_of(sign | 0x7f800000u | (mant != 0 ? 0x400000u : 0u) | (mant << 13));
    }
    return float_of(sign | ((exp + (127 - 15)) << 23) | (mant << 13));
}

/* enforces CORE-50 */
ggspec_fp16_t ggspec_fp32_to_fp16(float f) {
    const uint32_t x    = bits_of(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax   = x & 0x7fffffffu;

    if (ax > 0x7f800000u) {
        return (ggspec_fp16_t)(sign | 0x7e00u); /* any NaN becomes the quiet NaN 0x7e00 */
    }
    if (ax >= 0x477ff000u) {
        return (ggspec_fp16_t)(sign | 0x7c00u); /* 65520 and up round to infinity */
    }
    if (ax >= 0x38800000u) {
        /* normal in half: rebias the exponent, round the 13 dropped bits to nearest even */
        uint32_t r = ax - ((uint32_t)(127 - 15) << 23);
        r += 0x0fffu + ((r >> 13) & 1u);
        return (ggspec_fp16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u) {
        return (ggspec_fp16_t)sign; /* at most 2^-25: rounds to (signed) zero */
    }
    /* subnormal in half: the value in units of 2^-24, rounded to nearest even */
    const uint32_t mant  = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - (ax >> 23);         /* 14 .. 24 here */
    uint32_t       q     = mant >> shift;
    const uint32_t rem   = mant & ((1u << shift) - 1u);
    const uint32_t half  = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) {
        q++;
    }
    return (ggspec_fp16_t)(sign | q);
}

void ggspec_fp16_to_fp32_row(const ggspec_fp16_t * x, float * y, int n) {
    for (int i = 0; i < n; i++) {
        y[i] = ggspec_fp16_to_fp32(x[i]);
    }
}

void ggspec_fp32_to_fp16_row(const float * x, ggspec_fp16_t * y, int n) {
    for (int i = 0; i < n; i++) {
        y[i] = ggspec_fp32_to_fp16(x[i]);
    }
}

/* Q4_0 */

void ggspec_quantize_row_q4_0_reference(const float * x, void * vy, int k) {
    GGSPEC_ASSERT(k % GGSPEC_QK4_0 == 0, "k % QK4_0 == 0");
    struct block_q4_0 * y = vy;

    for (int b = 0; b < k / GGSPEC_QK4_0; b++) {
        const float * xb = x + b * GGSPEC_QK4_0;

        /* the value of largest magnitude (the first one, on ties) keeps its sign: it maps to
           code 0, i.e. -8 * d */
        float amax = 0.0f;
        float max  = 0.0f;
        for (int j = 0; j < GGSPEC_QK4_0; j++) {
            if (amax < fabsf(xb[j])) {
                amax = fabsf(xb[j]);
                max  = xb[j];
            }
        }

        const float d  = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = ggspec_fp32_to_fp16(d);

        for (int j = 0; j < GGSPEC_QK4_0 / 2; j++) {
            /* code = trunc(v * id + 8.5), capped at 15 */
            const int lo = (int)(xb[j] * id + 8.5f);
            const int hi = (int)(xb[j + GGSPEC_QK4_0 / 2] * id + 8.5f);
            const uint8_t c0 = (uint8_t)(lo < 15 ? lo : 15);
            const uint8_t c1 = (uint8_t)(hi < 15 ? hi : 15);
            y[b].qs[j] = (uint8_t)(c0 | (c1 << 4));
        }
    }
}

void ggspec_dequantize_row_q4_0(const void * vx, float * y, int k) {
    GGSPEC_ASSERT(k % GGSPEC_QK4_0 == 0, "k % QK4_0 == 0");
    const struct block_q4_0 * x = vx;

    for (int b = 0; b < k / GGSPEC_QK4_0; b++) {
        const float d = ggspec_fp16_to_fp32(x[b].d);
        for (int j = 0; j < GGSPEC_QK4_0 / 2; j++) {
            const int v0 = (x[b].qs[j] & 0x0f) - 8;
            const int v1 = (x[b].qs[j] >> 4) - 8;
            y[b * GGSPEC_QK4_0 + j]                    = (float)v0 * d;
            y[b * GGSPEC_QK4_0 + j + GGSPEC_QK4_0 / 2] = (float)v1 * d;
        }
    }
}

/* Q8_0 */

void ggspec_quantize_row_q8_0_reference(const float * x, void * vy, int k) {
    GGSPEC_ASSERT(k % GGSPEC_QK8_0 == 0, "k % QK8_0 == 0");
    struct block_q8_0 * y = vy;

    for (int b = 0; b < k / GGSPEC_QK8_0; b++) {
        const float * xb = x + b * GGSPEC_QK8_0;

        float amax = 0.0f;
        for (int j = 0; j < GGSPEC_QK8_0; j++) {
            const float a = fabsf(xb[j]);
            amax = amax > a ? amax : a;
        }

        const float d  = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = ggspec_fp32_to_fp16(d);

        /* roundf: halves away from zero */
        for (int j = 0; j < GGSPEC_QK8_0; j++) {
            y[b].qs[j] = (int8_t)roundf(xb[j] * id);
        }
    }
}

void ggspec_dequantize_row_q8_0(const void * vx, float * y, int k) {
    GGSPEC_ASSERT(k % GGSPEC_QK8_0 == 0, "k % QK8_0 == 0");
    const struct block_q8_0 * x = vx;

    for (int b = 0; b < k / GGSPEC_QK8_0; b++) {
        const float d = ggspec_fp16_to_fp32(x[b].d);
        for (int j = 0; j < GGSPEC_QK8_0; j++) {
            y[b * GGSPEC_QK8_0 + j] = (float)x[b].qs[j] * d;
        }
    }
}

/* whole arrays, with code histograms */

/* enforces CORE-73 */
size_t ggspec_quantize_q4_0(const float * src, void * dst, int n, int k, int64_t * hist) {
    GGSPEC_ASSERT(k > 0 && k % GGSPEC_QK4_0 == 0, "k % QK4_0 == 0");
    for (int start = 0; start < n; start += k) {
        struct block_q4_0 * y = (struct block_q4_0 *)dst + start / GGSPEC_QK4_0;
        ggspec_quantize_row_q4_0_reference(src + start, y, k);
        if (hist == NULL) {
            continue;
        }
        /* one count per code, bins 0..15 */
        for (int b = 0; b < k / GGSPEC_QK4_0; b++) {
            for (int j = 0; j < GGSPEC_QK4_0 / 2; j++) {
                hist[y[b].qs[j] & 0x0f]++;
                hist[y[b].qs[j] >> 4]++;
            }
        }
    }
    return (size_t)(n / GGSPEC_QK4_0) * sizeof(struct block_q4_0);
}

/* enforces CORE-74 */
size_t ggspec_quantize_q8_0(const float * src, void * dst, int n, int k, int64_t * hist) {
    GGSPEC_ASSERT(k > 0 && k % GGSPEC_QK8_0 == 0, "k % QK8_0 == 0");
    for (int start = 0; start < n; start += k) {
        struct block_q8_0 * y = (struct block_q8_0 *)dst + start / GGSPEC_QK8_0;
        ggspec_quantize_row_q8_0_reference(src + start, y, k);
        if (hist == NULL) {
            continue;
        }
        /* 16 bins of width 16 by C's truncating division: q / 16 + 8 (so -15 .. 15 share bin 8) */
        for (int b = 0; b < k / GGSPEC_QK8_0; b++) {
            for (int j = 0; j < GGSPEC_QK8_0; j++) {
                hist[y[b].qs[j] / 16 + 8]++;
            }
        }
    }
    return (size_t)(n / GGSPEC_QK8_0) * sizeof(struct block_q8_0);
}

/*
 * Q4_0 with an importance matrix (rc.8's make_qx_quants with nmax 8 and weights): for each
 * block, try the scale -max/8 and 18 scales around it, and keep the one that minimizes the
 * weighted squared error (maximizes sumlx^2 / suml2).
 */

/* nearest integer, ties to even (the float's own rounding), for |v| < 2^22 */
static int nearest_int(float v) {
    const float shifted = v + 12582912.0f; /* 1.5 * 2^23: the integer lands in the low mantissa bits */
    int32_t i;
    memcpy(&i, &shifted, sizeof(i));
    return (i & 0x007fffff) - 0x00400000;
}

static int clamp_code(int l, int nmax) {
    return l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l);
}

static float weighted_scale(int n, int nmax, const float * x, int8_t * L, const float * w) {
    float amax = 0.0f;
    float max  = 0.0f;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max  = x[i];
        }
    }
    if (amax < 1e-30f) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }

    float iscale = -(float)nmax / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = clamp_code(nearest_int(iscale * x[i]), nmax);
        L[i] = (int8_t)(l + nmax);
        sumlx += w[i] * x[i] * (float)l;
        suml2 += w[i] * (float)l * (float)l;
    }
    float scale = sumlx / suml2;
    float best  = scale * sumlx;

    for (int is = -9; is <= 9; is++) {
        if (is == 0) {
            continue;
        }
        iscale = -((float)nmax + 0.1f * (float)is) / max;
        sumlx = 0.0f;
        suml2 = 0.0f;
        for (int i = 0; i < n; i++) {
            const int l = clamp_code(nearest_int(iscale * x[i]), nmax);
            sumlx += w[i] * x[i] * (float)l;
            suml2 += w[i] * (float)l * (float)l;
        }
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++) {
                L[i] = (int8_t)(nmax + clamp_code(nearest_int(iscale * x[i]), nmax));
            }
            scale = sumlx / suml2;
            best  = scale * sumlx;
        }
    }
    return scale;
}

static void quantize_row_q4_0_weighted(const float * x, struct block_q4_0 * y, int n_per_row, const float * qw) {
    float sum_x2 = 0.0f;
    for (int j = 0; j < n_per_row; j++) {
        sum_x2 += x[j] * x[j];
    }
    const float sigma2 = sum_x2 / (float)n_per_row;

    for (int b = 0; b < n_per_row / GGSPEC_QK4_0; b++) {
        const float * xb = x + b * GGSPEC_QK4_0;
        const float * wb = qw + b * GGSPEC_QK4_0;
        float  weight[GGSPEC_QK4_0];
        int8_t L[GGSPEC_QK4_0];
        for (int j = 0; j < GGSPEC_QK4_0; j++) {
            weight[j] = wb[j] * sqrtf(sigma2 + xb[j] * xb[j]);
        }
        const float d = weighted_scale(GGSPEC_QK4_0, 8, xb, L, weight);
        y[b].d = ggspec_fp32_to_fp16(d);
        for (int j = 0; j < GGSPEC_QK4_0 / 2; j++) {
            y[b].qs[j] = (uint8_t)(L[j] | (L[j + GGSPEC_QK4_0 / 2] << 4));
        }
    }
}

bool ggspec_quantize_requires_imatrix(enum ggspec_type type) {
    return type == GGSPEC_TYPE_IQ2_XXS || type == GGSPEC_TYPE_IQ2_XS;
}

size_t ggspec_quantize_chunk(enum ggspec_type type, const float * src, void * dst, int start,
                             int nrows, int n_per_row, int64_t * hist, const float * imatrix) {
    const int n = nrows * n_per_row;
    size_t result = 0;

    switch (type) {
        case GGSPEC_TYPE_Q4_0: {
            GGSPEC_ASSERT(start % GGSPEC_QK4_0 == 0, "start % QK4_0 == 0");
            GGSPEC_ASSERT(start % n_per_row == 0, "start % n_per_row == 0");
            const size_t start_row = (size_t)(start / n_per_row);
            const size_t row_size  = ggspec_row_size(type, n_per_row);
            char * out = (char *)dst + start_row * row_size;
            if (imatrix == NULL) {
                result = ggspec_quantize_q4_0(src + start, out, n, n_per_row, hist);
            } else {
                /* the weighted path does not count codes */
                for (int r = 0; r < nrows; r++) {
                    quantize_row_q4_0_weighted(src + start + (size_t)r * (size_t)n_per_row,
                                               (struct block_q4_0 *)(out + (size_t)r * row_size), n_per_row, imatrix);
                }
                result = (size_t)nrows * row_size;
            }
            GGSPEC_ASSERT(result == row_size * (size_t)nrows, "result == row_size * nrows");
        } break;
        case GGSPEC_TYPE_Q8_0: {
            /* rows do not matter to Q8_0: the chunk is quantized as one run of n values */
            GGSPEC_ASSERT(start % GGSPEC_QK8_0 == 0, "start % QK8_0 == 0");
            struct block_q8_0 * out = (struct block_q8_0 *)dst + start / GGSPEC_QK8_0;
            result = ggspec_quantize_q8_0(src + start, out, n, n, hist);
        } break;
        case GGSPEC_TYPE_F16: {
            ggspec_internal_simd()->fp32_to_fp16(src + start, (ggspec_fp16_t *)dst + start, n); /* bit-identical */
            result = (size_t)n * sizeof(ggspec_fp16_t);
        } break;
        case GGSPEC_TYPE_F32: {
            result = (size_t)n * sizeof(float);
            memcpy((char *)dst + (size_t)start * sizeof(float), src + start, result);
        } break;
        default:
            /* rc.8 returns 0 silently here (its assert is compiled out); ggspec refuses */
            GGSPEC_ASSERT(false, "ggspec_quantize_chunk: unsupported type");
    }
    return result;
}

/* row conversions and dot products for the compute kernels */

bool ggspec_internal_has_to_float(enum ggspec_type type) {
    return type == GGSPEC_TYPE_F32 || type == GGSPEC_TYPE_F16 ||
           type == GGSPEC_TYPE_Q4_0 || type == GGSPEC_TYPE_Q8_0;
}

bool ggspec_internal_has_from_float(enum ggspec_type type) {
    return ggspec_internal_has_to_float(type);
}

void ggspec_internal_to_float(enum ggspec_type type, const void * src, float * dst, int64_t n) {
    switch (type) {
        case GGSPEC_TYPE_F32:  memcpy(dst, src, (size_t)n * sizeof(float)); break;
        case GGSPEC_TYPE_F16:  ggspec_fp16_to_fp32_row(src, dst, (int)n); break;
        case GGSPEC_TYPE_Q4_0: ggspec_dequantize_row_q4_0(src, dst, (int)n); break;
        case GGSPEC_TYPE_Q8_0: ggspec_dequantize_row_q8_0(src, dst, (int)n); break;
        default: GGSPEC_ASSERT(false, "no conversion from this type to f32");
    }
}

void ggspec_internal_from_float(enum ggspec_type type, const float * src, void * dst, int64_t n) {
    switch (type) {
        case GGSPEC_TYPE_F32:  memcpy(dst, src, (size_t)n * sizeof(float)); break;
        case GGSPEC_TYPE_F16:  ggspec_internal_simd()->fp32_to_fp16(src, dst, n); break; /* bit-identical */
        case GGSPEC_TYPE_Q4_0: ggspec_quantize_row_q4_0_reference(src, dst, (int)n); break;
        case GGSPEC_TYPE_Q8_0: ggspec_internal_simd()->quantize_q8_0(src, dst, n); break; /* bit-identical */
        default: GGSPEC_ASSERT(false, "no conversion from f32 to this type");
    }
}

/* f32 . f32: products in float, summed in double */
static float dot_f32(int64_t n, const float * x, const float * y) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += (double)(x[i] * y[i]);
    }
    return (float)sum;
}

/* f16 . f16: products of the widened values in float, summed in double */
static float dot_f16(int64_t n, const ggspec_fp16_t * x, const ggspec_fp16_t * y) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += (double)(ggspec_fp16_to_fp32(x[i]) * ggspec_fp16_to_fp32(y[i]));
    }
    return (float)sum;
}

/* q4_0 . q8_0: exact integer sum per block, then (sum * dx) * dy added in float */
float ggspec_internal_dot_q4_0_q8_0_portable(int64_t n, const void * vx, const void * vy) {
    const struct block_q4_0 * x = vx;
    const struct block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / GGSPEC_QK8_0; b++) {
        int isum = 0;
        for (int j = 0; j < GGSPEC_QK4_0 / 2; j++) {
            const int v0 = (x[b].qs[j] & 0x0f) - 8;
            const int v1 = (x[b].qs[j] >> 4) - 8;
            isum += v0 * y[b].qs[j] + v1 * y[b].qs[j + GGSPEC_QK4_0 / 2];
        }
        sum += (float)isum * ggspec_fp16_to_fp32(x[b].d) * ggspec_fp16_to_fp32(y[b].d);
    }
    return sum;
}

/* q8_0 . q8_0: exact integer sum per block, then sum * (dx * dy) added in float */
float ggspec_internal_dot_q8_0_q8_0_portable(int64_t n, const void * vx, const void * vy) {
    const struct block_q8_0 * x = vx;
    const struct block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int64_t b = 0; b < n / GGSPEC_QK8_0; b++) {
        int isum = 0;
        for (int j = 0; j < GGSPEC_QK8_0; j++) {
            isum += x[b].qs[j] * y[b].qs[j];
        }
        sum += (float)isum * (ggspec_fp16_to_fp32(x[b].d) * ggspec_fp16_to_fp32(y[b].d));
    }
    return sum;
}

/* x is a row of `type`, y a row of type's vec_dot_type (the quantized ones through simd.h's kernels) */
float ggspec_internal_vec_dot(enum ggspec_type type, int64_t n, const void * x, const void * y) {
    switch (type) {
        case GGSPEC_TYPE_F32:  return dot_f32(n, x, y);
        case GGSPEC_TYPE_F16:  return dot_f16(n, x, y);
        case GGSPEC_TYPE_Q4_0: return ggspec_internal_simd()->dot_q4_0_q8_0(n, x, y);
        case GGSPEC_TYPE_Q8_0: return ggspec_internal_simd()->dot_q8_0_q8_0(n, x, y);
        default:
            GGSPEC_ASSERT(false, "no dot product for this type");
            return 0.0f;
    }
}
