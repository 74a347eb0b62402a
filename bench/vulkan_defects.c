/* Upstream's Vulkan backend (llama-cpp-python's vendored llama.cpp), without ggspec: the defects
 * ggspec's --device vulkan runs found, each shown by plain API calls on this machine's driver.
 * Built and run by bench/vulkan_defects.py against a target's cached library and headers.
 *
 *   vulkan_defects clear VALUE            buffer clear(VALUE) on a Vulkan buffer, then read it back
 *   vulkan_defects mul_mat K M N          F32 MUL_MAT (K x M weights, K x N input) on the device
 *
 * Prints what it saw and exits 1 when the device's result differs from the exact one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

ggml_backend_t ggml_backend_vk_init(size_t dev);
int ggml_backend_vk_get_device_count(void) __attribute__((weak));

static ggml_backend_t device(void) {
    if (ggml_backend_vk_get_device_count) ggml_backend_vk_get_device_count(); /* starts the instance (0.2.56 on) */
    return ggml_backend_vk_init(0);
}

static int clear(int value) {
    ggml_backend_t vk = device();
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(vk, 64);
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 16);
    ggml_backend_buffer_clear(buf, (uint8_t)value);
    ggml_backend_tensor_alloc(buf, t, (char *)ggml_backend_buffer_get_base(buf));
    unsigned char got[16];
    ggml_backend_tensor_get(t, got, 0, sizeof got);
    int bad = 0;
    printf("clear(0x%02x), bytes 0..15 read back:", value);
    for (int i = 0; i < 16; i++) { printf(" %02x", got[i]); bad += got[i] != (unsigned char)value; }
    printf("\n%d of 16 bytes differ from 0x%02x\n", bad, value);
    ggml_free(ctx); ggml_backend_buffer_free(buf); ggml_backend_free(vk);
    return bad != 0;
}

static int mul_mat(int K, int M, int N) {
    ggml_backend_t vk = device();
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, vk);
    ggml_backend_buffer_clear(buf, 0);
    float *hw = malloc(sizeof(float) * K * M), *hx = malloc(sizeof(float) * K * N), *hy = malloc(sizeof(float) * M * N);
    /* small integers: every product and sum is exact in F16 and F32, so any rounding is exact too */
    for (int i = 0; i < K * M; i++) hw[i] = (float)(i % 7) - 3;
    for (int i = 0; i < K * N; i++) hx[i] = (float)(i % 5) - 2;
    ggml_backend_tensor_set(w, hw, 0, sizeof(float) * K * M);
    ggml_backend_tensor_set(x, hx, 0, sizeof(float) * K * N);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    printf("supports_op(MUL_MAT) = %d\n", ggml_backend_supports_op(vk, y));
    ggml_backend_graph_compute(vk, g);
    ggml_backend_tensor_get(y, hy, 0, sizeof(float) * M * N);
    int bad = 0, zero = 0;
    for (int n = 0; n < N; n++) for (int m = 0; m < M; m++) {
        float s = 0;
        for (int k = 0; k < K; k++) s += hw[m * K + k] * hx[n * K + k];
        if (s != hy[n * M + m]) {
            if (bad < 3) printf("y[%d,%d] = %g, exact %g\n", m, n, hy[n * M + m], s);
            bad++; zero += hy[n * M + m] == 0.0f;
        }
    }
    printf("MUL_MAT K=%d M=%d N=%d: %d of %d elements wrong (%d of them 0: not computed)\n", K, M, N, bad, M * N, zero);
    ggml_backend_buffer_free(buf); ggml_free(ctx); ggml_backend_free(vk);
    return bad != 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "clear") == 0) return clear((int)strtol(argv[2], NULL, 0));
    if (argc == 5 && strcmp(argv[1], "mul_mat") == 0) return mul_mat(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: %s clear VALUE | mul_mat K M N\n", argv[0]);
    return 2;
}
