/* errors.cu -- self-checking test of CUDA runtime error reporting.
 *
 * Covers bad frees (host pointer, double free), copies past the end of an
 * allocation, invalid memcpy kinds, the per-thread last-error slot
 * (cudaGetLastError returns and clears, cudaPeekAtLastError only returns,
 * successful calls leave it alone, a newer error replaces an older one) and
 * cudaGetErrorName/cudaGetErrorString for several codes. None of these errors
 * is sticky, so the program checks that the context keeps working after each.
 */
#include "cuda_check.h"
#include <cstdlib>
#include <thread>
#include <vector>

/* The context still allocates, copies and frees correctly. */
static void check_still_works(int line)
{
    char *d = NULL;
    unsigned char h[64];
    ct_fill(h, sizeof h, (unsigned)line);
    cudaError_t e1 = cudaMalloc(&d, sizeof h);
    cudaError_t e2 = cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    memset(h, 0, sizeof h);
    cudaError_t e3 = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaError_t e4 = cudaFree(d);
    if (e1 || e2 || e3 || e4 || ct_mismatch(h, sizeof h, (unsigned)line) >= 0)
        ct_fail(__FILE__, line, "context usable after error", "yes", "no");
}

static void check_bad_free(void)
{
    void *m = malloc(256);
    CT_ERR(cudaFree(m), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    free(m);
    check_still_works(__LINE__);

    void *d = NULL;
    CT_OK(cudaMalloc(&d, 1 << 20));
    CT_OK(cudaFree(d));
    CT_ERR(cudaFree(d), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    check_still_works(__LINE__);
}

/* Any copy reaching past the end of a device allocation is rejected whole. */
static void check_out_of_range(void)
{
    const size_t n = 64u << 20;
    char *d = NULL, *d2 = NULL;
    unsigned char *h = (unsigned char *)calloc(2 * n, 1);
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMalloc(&d2, n));
    CT_OK(cudaMemset(d, 0x61, n));
    CT_ERR(cudaMemcpy(d + n / 2, h, n, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaMemcpy(h, d + n / 2, n, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaMemcpy(h, d, 2 * n, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaMemcpy(d2, d + 1, n, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    /* The rejected H2D copy wrote nothing. */
    CT_OK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
    CT_BYTES(h, n, 0x61);
    /* The exact end is fine. */
    CT_OK(cudaMemcpy(h, d + n - 1, 1, cudaMemcpyDeviceToHost));
    CT_EQ(h[0], 0x61);
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
    free(h);
    check_still_works(__LINE__);
}

static void check_bad_kind(void)
{
    char *d = NULL;
    unsigned char h[32] = { 0 };
    CT_OK(cudaMalloc(&d, sizeof h));
    CT_ERR(cudaMemcpy(d, h, sizeof h, (cudaMemcpyKind)42), cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaMemcpyAsync(d, h, sizeof h, (cudaMemcpyKind)7, 0),
           cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaMemcpy2D(d, 16, h, 16, 16, 2, (cudaMemcpyKind)-1),
           cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    CT_OK(cudaFree(d));
    check_still_works(__LINE__);
}

static void check_last_error(void)
{
    CT_ERR(cudaGetLastError(), cudaSuccess);
    CT_ERR(cudaPeekAtLastError(), cudaSuccess);
    void *m = malloc(16);
    CT_ERR(cudaFree(m), cudaErrorInvalidValue);
    free(m);
    /* Peek does not clear. */
    CT_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
    /* Successful calls do not clear it either. */
    void *d = NULL;
    CT_OK(cudaMalloc(&d, 16));
    CT_OK(cudaFree(d));
    CT_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
    /* Another thread has its own slot. */
    cudaError_t other_peek = cudaErrorUnknown, other_get = cudaErrorUnknown;
    std::thread t([&] {
        other_peek = cudaPeekAtLastError();
        other_get = cudaGetLastError();
    });
    t.join();
    CT_EQ(other_peek, cudaSuccess);
    CT_EQ(other_get, cudaSuccess);
    /* Get returns and clears. */
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaSuccess);
    CT_ERR(cudaPeekAtLastError(), cudaSuccess);
    /* A newer error replaces the older one. */
    CT_ERR(cudaSetDevice(-1), cudaErrorInvalidDevice);
    CT_ERR(cudaMemcpy(&m, &m, 1, (cudaMemcpyKind)42), cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaPeekAtLastError(), cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    CT_ERR(cudaGetLastError(), cudaSuccess);
}

static void check_strings(void)
{
    struct { cudaError_t e; const char *name, *str; } tab[] = {
        { cudaSuccess, "cudaSuccess", "no error" },
        { cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
        { cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
        { cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error" },
        { cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
        { cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
        { cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
          "invalid copy direction for memcpy" },
        { cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer" },
        { cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
        { cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
        { cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
          "part or all of the requested memory range is already mapped" },
        { cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
          "pointer does not correspond to a registered memory region" },
        { cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered" },
        { cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
        { (cudaError_t)12345, "unrecognized error code", "unrecognized error code" },
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        CT_STREQ(cudaGetErrorName(tab[i].e), tab[i].name);
        CT_STREQ(cudaGetErrorString(tab[i].e), tab[i].str);
    }
    /* The lookups are not runtime calls that fail: the last error stays clear. */
    CT_ERR(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
    int n = 0;
    CT_OK(cudaGetDeviceCount(&n));
    if (n < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("errors");
    }
    check_strings();
    check_last_error();
    check_bad_free();
    check_out_of_range();
    check_bad_kind();
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("errors");
}
