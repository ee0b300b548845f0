// step.cu -- a warm training-like step costs one round trip: a host-to-device copy
// of the batch, three kernels, a cuBLAS GEMM, a device-to-device copy, an event
// record, the free of the step's scratch buffer, then one stream synchronisation.
// Ten steps, then one readback checked against the host's own arithmetic; the
// harness counts the round trips (tests/e2e/check_e2e_roundtrips.c).
#include "kcheck.h"
#include "ksteps.h"
#include <cublas_v2.h>
#include <cstring>

#define STEPS 10
#define N 64 /* an N x N matrix */

int main()
{
    const int n = N * N;
    float *a, *b, *c, *keep, *scratch[STEPS];
    static float batch[N * N], host_a[N * N], host_c[N * N], back[N * N];
    cublasHandle_t blas;
    cudaStream_t s;
    cudaEvent_t done;
    KCUDA(cudaMalloc(&a, n * sizeof(float)));
    KCUDA(cudaMalloc(&b, n * sizeof(float)));
    KCUDA(cudaMalloc(&c, n * sizeof(float)));
    KCUDA(cudaMalloc(&keep, n * sizeof(float)));
    for (int k = 0; k < STEPS; k++)
        KCUDA(cudaMalloc(&scratch[k], 4096));
    KCHECK(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaEventCreate(&done));
    KCHECK(cublasSetStream(blas, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    std::memset(host_a, 0, sizeof host_a);
    KCUDA(cudaMemsetAsync(a, 0, n * sizeof(float), s));
    KCUDA(cudaStreamSynchronize(s)); /* setup done: the steps start warm */
    const float one = 1.0f, zero = 0.0f;
    for (int k = 0; k < STEPS; k++) {
        for (int i = 0; i < n; i++)
            batch[i] = (float)((i * 7 + k) % 13) / 16.0f; /* small exact binary fractions */
        KCUDA(cudaMemcpyAsync(b, batch, 4096, cudaMemcpyHostToDevice, s)); /* the first 1,024 floats */
        KCUDA(cudaMemcpyAsync(b + 1024, batch + 1024, (n - 1024) * sizeof(float), cudaMemcpyHostToDevice, s));
        scale<<<(n + 255) / 256, 256, 0, s>>>(a, n, 0.5f);
        add<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
        scale<<<(n + 255) / 256, 256, 0, s>>>(a, n, 2.0f);
        KCHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N) ==
                   CUBLAS_STATUS_SUCCESS, "cublasSgemm");
        KCUDA(cudaMemcpyAsync(keep, c, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
        KCUDA(cudaEventRecord(done, s));
        KCUDA(cudaFree(scratch[k]));
        KCUDA(cudaStreamSynchronize(s)); /* the step's one round trip */
        for (int i = 0; i < n; i++) /* the host's own arithmetic: a = (a/2 + b) * 2 */
            host_a[i] = (host_a[i] * 0.5f + batch[i]) * 2.0f;
    }
    for (int col = 0; col < N; col++) /* c = a * b, column-major, the last step's b */
        for (int row = 0; row < N; row++) {
            double sum = 0;
            for (int k = 0; k < N; k++)
                sum += (double)host_a[k * N + row] * batch[col * N + k];
            host_c[col * N + row] = (float)sum;
        }
    KCUDA(cudaMemcpy(back, keep, sizeof back, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[i] < host_c[i] - 1e-3f * (1 + host_c[i]) || back[i] > host_c[i] + 1e-3f * (1 + host_c[i]);
    KCHECK(bad == 0, "%d of %d results differ from the host's", bad, n);
    cublasDestroy(blas);
    KCUDA(cudaEventDestroy(done));
    KCUDA(cudaStreamDestroy(s));
    KCUDA(cudaFree(a));
    KCUDA(cudaFree(b));
    KCUDA(cudaFree(c));
    KCUDA(cudaFree(keep));
    return kcheck_finish("step");
}
