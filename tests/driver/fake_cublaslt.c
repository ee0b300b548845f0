/* fake_cublaslt.c -- a stand-in for NVIDIA's cuBLASLt (build/driver/fake/
 * libcublasLt.so.13): its heuristic query answers 0 when it is handed the fake
 * cuBLAS's handle (what a shim's cuBLAS handle, passed as a cuBLASLt handle, must
 * become), 7 for a handle of its own kind it does not know, which must arrive as
 * it was given. */
#include <stdint.h>

#define FAKE_BLAS_HANDLE ((void *)(uintptr_t)0xfa4e0001u)
#define FOREIGN_HANDLE ((void *)(uintptr_t)0x7777u)

int cublasLtMatmulAlgoGetHeuristic(void *handle, void *op, void *a, void *b, void *c, void *d, void *pref,
                                   int requested, void *results, int *returned)
{
    (void)op, (void)a, (void)b, (void)c, (void)d, (void)pref, (void)requested, (void)results;
    if (handle == FAKE_BLAS_HANDLE) {
        *returned = 1;
        return 0;
    }
    return handle == FOREIGN_HANDLE ? 7 : 13;
}

/* What the shim probes a cuBLASLt with. */
int cublasLtCreate(void **handle)
{
    *handle = FOREIGN_HANDLE;
    return 0;
}
