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

/* Nineteen arguments: the last thirteen travel on the stack. */
int cublasUint8gemmBias(void *handle, int transa, int transb, int transc, int m, int n, int k, const unsigned char *A,
                        int A_bias, int lda, const unsigned char *B, int B_bias, int ldb, unsigned char *C, int C_bias,
                        int ldc, int C_mult, int C_shift)
{
    if (handle != FAKE_HANDLE)
        return 101;
    if (transa != 0 || transb != 1 || transc != 0 || m != 3 || n != 2 || k != 4 || lda != 4 || ldb != 5 || ldc != 6)
        return 102;
    if (A_bias != -7 || B_bias != 9 || C_bias != 11 || C_mult != 1234 || C_shift != 5)
        return 103;
    if (A == NULL || B == NULL || C == NULL)
        return 104;
    C[0] = 15, C[1] = 25;
    return 0;
}

/* cublasXt's handle is not a cuBLAS handle; its ratio travels in a vector register. */
int cublasXtSetCpuRatio(void *handle, int blasOp, int type, float ratio)
{
    if (handle != (void *)(uintptr_t)0x5150 || blasOp != 0 || type != 1 || ratio != 0.25f) /* GEMM, DOUBLE */
        return 105;
    return 0;
}
