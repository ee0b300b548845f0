/* hog.cu -- helper for the failure tests: holds device memory and copies forever.
 *
 * Usage: hog BYTES
 * cudaMalloc's BYTES, prints "allocated", then loops H2D/D2H copies of up to
 * 16 MiB into the allocation until killed. Exits 3 printing "error <name>" if a
 * CUDA call fails, 2 on a bad argument.
 */
#include "cuda_check.h"
#include <cstdlib>
#include <vector>

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
    if (bytes == 0) {
        fprintf(stderr, "usage: hog BYTES\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *d = NULL;
    cudaError_t e = cudaMalloc(&d, bytes);
    if (e != cudaSuccess) {
        printf("error %s\n", cudaGetErrorName(e));
        return 3;
    }
    printf("allocated\n");
    size_t chunk = bytes < (16u << 20) ? bytes : (16u << 20);
    std::vector<unsigned char> h(chunk);
    ct_fill(h.data(), chunk, 5);
    for (size_t off = 0;; off = (off + chunk) % (bytes - chunk + 1)) {
        e = cudaMemcpy(d + off, h.data(), chunk, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMemcpy(h.data(), d + off, chunk, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            printf("error %s\n", cudaGetErrorName(e));
            return 3;
        }
    }
}
