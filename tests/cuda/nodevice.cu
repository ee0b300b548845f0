/* nodevice.cu -- what a program sees when the cudarem server cannot be used
 * (tests/e2e/check_e2e_unusable.c runs it built with each runtime against each
 * way a server can fail). Prints, each on a line of its own:
 *   driver N                   cudaDriverGetVersion's number (and its result)
 *   count NAME: STRING         cudaGetDeviceCount's result, named and described
 *   malloc NAME                cudaMalloc's result
 *   last NAME                  cudaGetLastError afterwards
 * and exits 0: the suite compares the lines across builds. */
#include <cstdio>
#include <cuda_runtime.h>

int main()
{
    int driver = -1, count = -1;
    cudaError_t e = cudaDriverGetVersion(&driver);
    printf("driver %d %s\n", driver, cudaGetErrorName(e));
    e = cudaGetDeviceCount(&count);
    printf("count %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    void *p = nullptr;
    e = cudaMalloc(&p, 256);
    printf("malloc %s\n", cudaGetErrorName(e));
    printf("last %s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
