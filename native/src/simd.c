/*
 * simd.c - choosing the compute kernels once per process, and the portable ones (the reference
 * path, see simd.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "simd.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quantize_q8_0(const float * x, void * y, int64_t k) {
    ggspec_quantize_row_q8_0_reference(x, y, (int)k);
}

static void fp32_to_fp16(const float * x, ggspec_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggspec_fp32_to_fp16(x[i]);
    }
}

static void add_f32(int64_t n, const float * x, const float * y, float * z) {
    for (int64_t i = 0; i < n; i++) {
        z[i] = x[i] + y[i];
    }
}

static void mul_f32(int64_t n, const float * x, const float * y, float * z) {
    for (int64_t i = 0; i < n; i++) {
        z[i] = x[i] * y[i];
    }
}

static void lookup_f16(const ggspec_fp16_t * table, int64_t n, const float * x, float * y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggspec_fp16_to_fp32(table[ggspec_fp32_to_fp16(x[i])]);
    }
}

static double sum_f32(int64_t n, const float * x) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += (double)x[i];
    }
    return sum;
}

static double sum_sq_dev_f32(int64_t n, const float * x, float mean) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i] - mean;
        sum += (double)(v * v);
    }
    return sum;
}

static float max_f32(int64_t n, const float * x) {
    float max = -__builtin_inff();
    for (int64_t i = 0; i < n; i++) {
        max = max > x[i] ? max : x[i];
    }
    return max;
}

const struct ggspec_simd ggspec_simd_portable = {
    .name           = "portable",
    .gemm           = NULL,
    .dot_q4_0_q8_0  = ggspec_internal_dot_q4_0_q8_0_portable,
    .dot_q8_0_q8_0  = ggspec_internal_dot_q8_0_q8_0_portable,
    .dot2x2_q4_0_q8_0 = NULL,
    .quantize_q8_0  = quantize_q8_0,
    .fp32_to_fp16   = fp32_to_fp16,
    .add_f32        = add_f32,
    .mul_f32        = mul_f32,
    .lookup_f16     = lookup_f16,
    .sum_f32        = sum_f32,
    .sum_sq_dev_f32 = sum_sq_dev_f32,
    .max_f32        = max_f32,
};

static const struct ggspec_simd * chosen = &ggspec_simd_portable;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

/*
 * The widest kernels the CPU has, unless GGSPEC_NATIVE_PORTABLE (anything but "" or "0") forces
 * the portable ones, or GGSPEC_NATIVE_KERNELS names a path: "portable", "avx2" (the AVX2 ones
 * if the CPU has them, else portable) or "avx512" (the widest the CPU has). A name never makes
 * the process run instructions the CPU lacks; ggspec_backend_cpu_kernels says what was chosen.
 * Another name is reported on stderr and chosen as if unset.
 */
static void choose(void) {
    const char * forced = getenv("GGSPEC_NATIVE_PORTABLE");
    if (forced != NULL && forced[0] != '\0' && strcmp(forced, "0") != 0) {
        return;
    }
    const char * named = getenv("GGSPEC_NATIVE_KERNELS");
    int widest = 2; /* 0 portable, 1 avx2, 2 avx512 */
    if (named != NULL && named[0] != '\0') {
        if (strcmp(named, "portable") == 0) {
            widest = 0;
        } else if (strcmp(named, "avx2") == 0) {
            widest = 1;
        } else if (strcmp(named, "avx512") != 0) {
            fprintf(stderr, "ggspec: GGSPEC_NATIVE_KERNELS=%s is not one of portable, avx2, avx512; ignored\n", named);
        }
    }
    const struct ggspec_simd * avx512 = widest >= 2 ? ggspec_simd_avx512() : NULL;
    const struct ggspec_simd * avx2 = widest >= 1 ? ggspec_simd_avx2() : NULL;
    if (avx512 != NULL) {
        chosen = avx512;
    } else if (avx2 != NULL) {
        chosen = avx2;
    }
}

const struct ggspec_simd * ggspec_internal_simd(void) {
    pthread_once(&chosen_once, choose);
    return chosen;
}

/* ggspec extension: the name of the kernels this process computes with ("portable", "avx2", "avx512") */
const char * ggspec_backend_cpu_kernels(void) {
    return ggspec_internal_simd()->name;
}
