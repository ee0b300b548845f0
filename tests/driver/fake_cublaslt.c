/* fake_cublaslt.c -- a stand-in for NVIDIA's cuBLASLt (build/driver/fake/
 * libcublasLt.so.13): its algorithm-id query (a call the shim does not remote)
 * answers 0 when it is handed the fake
 * cuBLAS's handle (what a shim's cuBLAS handle, passed as a cuBLASLt handle, must
 * become), 7 for a handle of its own kind it does not know, which must arrive as
 * it was given. */
#include <stddef.h>
#include <stdint.h>

#define FAKE_BLAS_HANDLE ((void *)(uintptr_t)0xfa4e0001u)
#define FOREIGN_HANDLE ((void *)(uintptr_t)0x7777u)

int cublasLtMatmulAlgoGetIds(void *handle, int compute, int scale, int a, int b, int c, int d, int requested,
                             int *ids, int *returned)
{
    (void)compute, (void)scale, (void)a, (void)b, (void)c, (void)d;
    if (handle == FAKE_BLAS_HANDLE) {
        if (requested < 1 || ids == NULL || returned == NULL)
            return 7;
        ids[0] = 42;
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
