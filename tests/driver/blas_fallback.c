/* blas_fallback.c -- cuBLAS and cuDNN calls the shim does not remote go to NVIDIA's
 * libraries with the handle each made for the shim's and the shim's settings
 * (stream, pointer mode, math mode), every argument intact (a nineteen-argument
 * call, scalars in vector registers); destroying the shim's handle destroys NVIDIA's; a
 * cuDNN call taking the shim's own legacy descriptor is never handed over; a cuBLAS
 * handle passed as a cuBLASLt handle becomes NVIDIA's cuBLAS handle. Run
 * against the fakes of fake_cublas*.c and fake_cudnn.c (CUDAREM_NVIDIA_LIBS=DIR),
 * which report what they saw to the files argv[1] and argv[2]. Prints "PASS
 * blas_fallback". */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cublasXt.h>
#include <cudnn.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include "dcheck.h"



static void check_dnn(cudaStream_t stream, const char *report)
{
    cudnnHandle_t h;
    size_t size = 0;
    CHECK(cudnnCreate(&h) == CUDNN_STATUS_SUCCESS, "cudnnCreate");
    CHECK(cudnnSetStream(h, stream) == CUDNN_STATUS_SUCCESS, "cudnnSetStream");
    cudnnStatus_t st = cudnnBackendExecute(h, (void *)(uintptr_t)0x1111, (void *)(uintptr_t)0x2222);
    CHECK(st == CUDNN_STATUS_SUCCESS, "cudnnBackendExecute through NVIDIA's cuDNN: status %d", (int)st);
    /* an operation graph takes the handle as an attribute value: translated too */
    st = cudnnBackendSetAttribute((cudnnBackendDescriptor_t)(uintptr_t)0x4444, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                  CUDNN_TYPE_HANDLE, 1, &h);
    CHECK(st == CUDNN_STATUS_SUCCESS, "cudnnBackendSetAttribute of the handle: status %d", (int)st);
    st = cudnnGetRNNWeightSpaceSize(h, (cudnnRNNDescriptor_t)(uintptr_t)0x3333, &size);
    CHECK(st == CUDNN_STATUS_NOT_SUPPORTED, "a legacy-descriptor call was handed over: status %d", (int)st);
    CHECK(cudnnDestroy(h) == CUDNN_STATUS_SUCCESS, "cudnnDestroy");
    FILE *f = fopen(report, "r");
    int r[4] = {0};
    void *got_stream = NULL;
    CHECK(f != NULL && fscanf(f, "%d %d %d %d %p", &r[0], &r[1], &r[2], &r[3], &got_stream) == 5,
          "the fake cuDNN reported nothing: it was not loaded");
    if (f != NULL)
        fclose(f);
    CHECK(r[0] == 1 && r[1] == 1 && r[2] == 0 && r[3] == 1,
          "fake cuDNN: %d handles, %d executes, %d legacy calls, %d handle attributes", r[0], r[1], r[2], r[3]);
    CHECK(got_stream == (void *)stream, "the stream did not follow the cuDNN handle");
}

int main(int argc, char **argv)
{
    cublasHandle_t h;
    cudaStream_t stream;
    unsigned char x[32] = {0}, y[32] = {0};
    if (argc != 3 || setenv("FAKE_CUBLAS_REPORT", argv[1], 1) != 0 || setenv("FAKE_CUDNN_REPORT", argv[2], 1) != 0) {
        fprintf(stderr, "usage: blas_fallback CUBLAS-REPORT CUDNN-REPORT\n");
        return 2;
    }
    CHECK(cublasCreate_v2(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    CHECK(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
    CHECK(cublasSetStream_v2(h, stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    CHECK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST) == CUBLAS_STATUS_SUCCESS, "cublasSetPointerMode");
    CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS, "cublasSetMathMode");
    /* Uint8gemmBias is not remoted */
    cublasStatus_t st = cublasUint8gemmBias(h, CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_N, 3, 2, 4, x, -7, 4, x, 9, 5, y, 11,
                                            6, 1234, 5);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "cublasUint8gemmBias through NVIDIA's cuBLAS: status %d", (int)st);
    CHECK(y[0] == 15 && y[1] == 25, "cublasUint8gemmBias did not run there");
    /* cublasXt is not remoted; its handle is no cuBLAS handle, its ratio in a vector register */
    st = cublasXtSetCpuRatio((cublasXtHandle_t)(uintptr_t)0x5150, CUBLASXT_GEMM, CUBLASXT_DOUBLE, 0.25f);
    CHECK(st == CUBLAS_STATUS_SUCCESS, "cublasXtSetCpuRatio through NVIDIA's cuBLAS: status %d", (int)st);
    /* torch passes its cuBLAS handle as a cuBLASLt handle: NVIDIA's cuBLAS handle is
     * one. Handles the shim does not know go as they are (NVIDIA's own). */
    int ids[4] = {0}, got = 0;
    st = cublasLtMatmulAlgoGetIds((cublasLtHandle_t)h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                  CUDA_R_32F, CUDA_R_32F, 4, ids, &got);
    CHECK(st == CUBLAS_STATUS_SUCCESS && got == 1 && ids[0] == 42, "cuBLASLt with the shim's cuBLAS handle: status %d",
          (int)st);
    st = cublasLtMatmulAlgoGetIds((cublasLtHandle_t)(uintptr_t)0x7777, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                  CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 4, ids, &got);
    CHECK(st == 7, "cuBLASLt with NVIDIA's own handle: status %d, expected it untouched (7)", (int)st);
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
    /* When NVIDIA's cuBLAS cannot make a handle, its calls fail cleanly: the shim's
     * handle never reaches it. */
    setenv("FAKE_CUBLAS_CREATE_FAILS", "1", 1);
    CHECK(cublasCreate_v2(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    st = cublasUint8gemmBias(h, CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_N, 3, 2, 4, x, -7, 4, x, 9, 5, y, 11, 6, 1234, 5);
    CHECK(st == CUBLAS_STATUS_NOT_SUPPORTED, "cublasUint8gemmBias without NVIDIA's handle: status %d", (int)st);
    CHECK(cublasDestroy_v2(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
    check_dnn(stream, argv[2]);
    if (dcheck_failures == 0)
        printf("PASS blas_fallback\n");
    return dcheck_failures == 0 ? 0 : 1;
}
