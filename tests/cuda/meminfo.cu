/* meminfo.cu -- helper for the failure tests: prints the device's free and total memory.
 *
 * On success prints "<free> <total>" (bytes, from cudaMemGetInfo) and exits 0.
 * Otherwise prints "error cudaGetDeviceCount <name>" and/or
 * "error cudaMemGetInfo <name>" for the calls that failed and exits 2; both
 * calls are always made, so an unreachable server is seen by each of them.
 */
#include "cuda_check.h"

int main(void)
{
    int n = 0, rc = 0;
    size_t fr = 0, tot = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("error cudaGetDeviceCount %s\n", cudaGetErrorName(e));
        rc = 2;
    }
    e = cudaMemGetInfo(&fr, &tot);
    if (e != cudaSuccess) {
        printf("error cudaMemGetInfo %s\n", cudaGetErrorName(e));
        rc = 2;
    }
    if (rc == 0)
        printf("%zu %zu\n", fr, tot);
    return rc;
}
