/* fake_cublas.c -- a stand-in for NVIDIA's cuBLAS (build/driver/fake/libcublas.so.13)
 * that the shim's fallback loads when CUDAREM_NVIDIA_LIBS points at it, so that the
 * handing over of cuBLAS calls is tested without a GPU: it hands out a handle of its
 * own, records the settings it is given, and checks every argument of the calls it
 * answers (returning a distinct status for each wrong one). What it recorded is
 * written, when a handle is destroyed, to the file FAKE_CUBLAS_REPORT names. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FAKE_HANDLE ((void *)(uintptr_t)0xfa4e0001u)

static int creates, destroys, pointer_mode = -1, math_mode = -1;
static void *stream;

/* Fails as NVIDIA's does on a device it has no code for, when asked to. */
int cublasCreate_v2(void **handle)
{
    if (getenv("FAKE_CUBLAS_CREATE_FAILS") != NULL)
        return 14; /* CUBLAS_STATUS_INTERNAL_ERROR */
    *handle = FAKE_HANDLE;
    creates++;
    return 0;
}

int cublasDestroy_v2(void *handle)
{
    if (handle != FAKE_HANDLE)
        return 1;
    destroys++;
    const char *path = getenv("FAKE_CUBLAS_REPORT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f != NULL) {
        fprintf(f, "%d %d %d %d %p\n", creates, destroys, pointer_mode, math_mode, stream);
        fclose(f);
    }
    return 0;
}

int cublasSetStream_v2(void *handle, void *s)
{
    if (handle != FAKE_HANDLE)
        return 1;
    stream = s;
    return 0;
}

int cublasSetPointerMode_v2(void *handle, int mode)
{
    if (handle != FAKE_HANDLE)
        return 1;
    pointer_mode = mode;
    return 0;
}

int cublasSetMathMode(void *handle, int mode)
{
    if (handle != FAKE_HANDLE)
        return 1;
    math_mode = mode;
    return 0;
}

/* Seventeen arguments: the last eleven travel on the stack. */
int cublasCgemm3mEx(void *handle, int transa, int transb, int m, int n, int k, const float *alpha, const void *A,
                    int Atype, int lda, const void *B, int Btype, int ldb, const float *beta, void *C, int Ctype,
                    int ldc)
{
    if (handle != FAKE_HANDLE)
        return 101;
    if (transa != 0 || transb != 1 || m != 3 || n != 2 || k != 4 || lda != 4 || ldb != 5 || ldc != 6)
        return 102;
    if (Atype != 4 || Btype != 4 || Ctype != 4) /* CUDA_C_32F */
        return 103;
    if (alpha == NULL || beta == NULL || alpha[0] != 0.5f || beta[0] != -2.0f || A == NULL || B == NULL)
        return 104;
    ((float *)C)[0] = 1.5f, ((float *)C)[1] = 2.5f;
    return 0;
}

/* cublasXt's handle is not a cuBLAS handle; its ratio travels in a vector register. */
int cublasXtSetCpuRatio(void *handle, int blasOp, int type, float ratio)
{
    if (handle != (void *)(uintptr_t)0x5150 || blasOp != 0 || type != 1 || ratio != 0.25f) /* GEMM, DOUBLE */
        return 105;
    return 0;
}
