/* blas_fallback.c -- cuBLAS calls the shim does not remote go to NVIDIA's cuBLAS with
 * the handle it made for the shim's and the shim's settings (stream, pointer mode,
 * math mode), every argument intact (eight-argument calls, scalars in vector
 * registers); destroying the shim's handle destroys NVIDIA's. Run against the fake
 * cuBLAS of fake_cublas.c (CUDAREM_NVIDIA_LIBS=DIR), which reports what it saw to
 * the file argv[1] (FAKE_CUBLAS_REPORT). Prints "PASS blas_fallback". */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            printf("FAIL %s:%d ", __FILE__, __LINE__);    \
            printf(__VA_ARGS__);                          \
            printf("\n");                                 \
            failures++;                                   \
        }                                                 \
    } while (0)

/* The legacy API's cublasDrot, whose name cublas_v2.h gives to cublasDrot_v2. */
void legacy_drot(int n, double *x, int incx, double *y, int incy, double c, double s) __asm__("cublasDrot");

int main(int argc, char **argv)
{
    cublasHandle_t h;
    cudaStream_t stream;
    float x[8] = {0}, y[16] = {0}, c = 0.5f, s = -2.0f;
    double dx[3] = {0}, dy[3] = {0};
    if (argc != 2 || setenv("FAKE_CUBLAS_REPORT", argv[1], 1) != 0) {
        fprintf(stderr, "usage: blas_fallback REPORT-FILE\n");
        return 2;
    }
    CHECK(cublasCreate_v2(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    CHECK(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
    CHECK(cublasSetStream_v2(h, stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    CHECK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST) == CUBLAS_STATUS_SUCCESS, "cublasSetPointerMode");
    CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS, "cublasSetMathMode");
    cublasStatus_t st = cublasSrot_v2(h, 7, x, 1, y, 2, &c, &s);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "cublasSrot_v2 through NVIDIA's cuBLAS: status %d", (int)st);
    CHECK(x[0] == 1.5f && y[0] == 2.5f, "cublasSrot_v2 did not run there");
    legacy_drot(3, dx, 1, dy, 1, 0.25, -8.0);
    CHECK(dx[0] == 0.25 && dy[0] == -8.0, "legacy cublasDrot: scalars %g %g", dx[0], dy[0]);
    CHECK(cublasDestroy_v2(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
    FILE *f = fopen(argv[1], "r");
    int r[4] = {0};
    void *got_stream = NULL;
    CHECK(f != NULL && fscanf(f, "%d %d %d %d %p", &r[0], &r[1], &r[2], &r[3], &got_stream) == 5,
          "the fake cuBLAS reported nothing: it was not loaded");
    if (f != NULL)
        fclose(f);
    CHECK(r[0] == 1 && r[1] == 1, "fake handles created %d, destroyed %d", r[0], r[1]);
    CHECK(got_stream == (void *)stream, "the stream did not follow the handle");
    CHECK(r[3] == CUBLAS_TF32_TENSOR_OP_MATH, "math mode %d did not follow the handle", r[3]);
    if (failures == 0)
        printf("PASS blas_fallback\n");
    return failures == 0 ? 0 : 1;
}
