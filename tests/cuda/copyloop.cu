/* copyloop.cu -- helper for the failure tests: copies until a CUDA call fails.
 *
 * Usage: copyloop [ITERATIONS [PAUSE_MS]]   (0 or absent: loop until an error)
 * Allocates 1 MiB on the device, then loops H2D + D2H with a fresh pattern per
 * iteration, checking each round trip, and idles PAUSE_MS between iterations.
 * Prints "started" after the first good iteration. On the first failing CUDA
 * call prints "error <call> <name>" and exits 3; on a data mismatch exits 4;
 * after ITERATIONS good ones prints "PASS copyloop" and exits 0.
 */
#include "cuda_check.h"
#include <cstdlib>
#include <unistd.h>
#include <vector>

enum { BYTES = 1 << 20 };

/* Exits 3 naming CALL when E is an error. */
static void die_on(cudaError_t e, const char *call)
{
    if (e == cudaSuccess)
        return;
    printf("error %s %s\n", call, cudaGetErrorName(e));
    fflush(stdout);
    exit(3);
}

int main(int argc, char **argv)
{
    unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    unsigned long pause_ms = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    std::vector<unsigned char> h(BYTES), r(BYTES);
    char *d = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    die_on(cudaMalloc(&d, BYTES), "cudaMalloc");
    for (unsigned long i = 0; iters == 0 || i < iters; i++) {
        unsigned seed = (unsigned)i;
        ct_fill(h.data(), BYTES, seed);
        die_on(cudaMemcpy(d, h.data(), BYTES, cudaMemcpyHostToDevice), "cudaMemcpyH2D");
        die_on(cudaMemcpy(r.data(), d, BYTES, cudaMemcpyDeviceToHost), "cudaMemcpyD2H");
        if (ct_mismatch(r.data(), BYTES, seed) >= 0) {
            printf("FAIL copyloop iteration %lu data mismatch\n", i);
            return 4;
        }
        if (i == 0)
            printf("started\n");
        if (pause_ms > 0)
            usleep((useconds_t)(pause_ms * 1000));
    }
    die_on(cudaFree(d), "cudaFree");
    printf("PASS copyloop\n");
    return 0;
}
