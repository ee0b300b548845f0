// kcheck.h -- self-checking helpers of the kernel test programs: FAIL lines, a
// final "PASS name", exit status 0 only when every check passed.
#ifndef KCHECK_H
#define KCHECK_H
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>

static int kcheck_failures = 0;

#define KCHECK(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                \
            std::printf(__VA_ARGS__);                                       \
            std::printf("\n");                                              \
            kcheck_failures++;                                              \
        }                                                                   \
    } while (0)

#define KCUDA(call)                                                         \
    do {                                                                    \
        cudaError_t kc_err = (call);                                        \
        KCHECK(kc_err == cudaSuccess, "%s: %s", #call, cudaGetErrorName(kc_err)); \
    } while (0)

/* A driver call found as torch, CuPy and the static runtime find it
 * (cudaGetDriverEntryPointByVersion at `version`): the programs link no libcuda. */
static inline void *kcheck_driver_fn(const char *name, unsigned version)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult found;
    KCUDA(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found));
    KCHECK(fn != NULL && found == cudaDriverEntryPointSuccess, "%s: no entry point", name);
    return fn;
}

static inline int kcheck_finish(const char *name)
{
    if (kcheck_failures == 0)
        std::printf("PASS %s\n", name);
    return kcheck_failures == 0 ? 0 : 1;
}
#endif
