/* fuzz_ptx.c -- a libFuzzer harness over the PTX text a client can ship in a
 * module: the emulated device's readers (common/crm_ptx.c's kernels, layouts and
 * variables; the engine's parser and preparation) and the engine itself, which
 * runs the first kernel of each input that parses with two threads on a small
 * buffer (every pointer argument points into it) under a short watchdog.
 * Seeds: the PTX of the engine's test kernels and benchmarks (tests/fuzz/fuzz.mk). */
#include <stdint.h>
#include <string.h>
#include "common/crm_fatbin.h"
#include "server/emu/ptx/crm_ptx.h"

#define FUZZ_ARGS 64
#define FUZZ_ARG_BYTES 65536

static unsigned char memory[4096];
static unsigned char arg_bytes[FUZZ_ARGS][FUZZ_ARG_BYTES];

static int device_memory(void *ctx, uint64_t addr, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    uint64_t base = (uint64_t)(uintptr_t)memory;
    (void)ctx;
    if (addr < base || n > sizeof memory || addr - base > sizeof memory - n)
        return 0;
    *lo = base;
    *hi = base + sizeof memory;
    return 1;
}

/* Runs kernel k of the module: every argument starts with the buffer's address. */
static void run_kernel(const crm_ptx_module *m, const crm_kernel_info *k)
{
    void *args[FUZZ_ARGS];
    uint64_t at = (uint64_t)(uintptr_t)memory;
    char msg[256];
    if (k->nparams > FUZZ_ARGS || !crm_ptx_runnable(m, k->name, msg, sizeof msg))
        return;
    for (uint32_t i = 0; i < k->nparams; i++) {
        memset(arg_bytes[i], 0, 16);
        memcpy(arg_bytes[i], &at, sizeof at);
        args[i] = arg_bytes[i];
    }
    crm_ptx_launch l = {{1, 1, 1}, {2, 1, 1}, args, k->params, k->nparams, 0, device_memory, NULL, NULL, NULL, NULL, 0};
    crm_ptx_run(m, k->name, &l, msg, sizeof msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    crm_ptx_module *m = NULL;
    crm_module_info info;
    int have_info = crm_module_info_from_ptx((const char *)data, size, &info, err, sizeof err) == 0;
    if (crm_ptx_load((const char *)data, size, &m, err, sizeof err) == 0) {
        if (have_info && info.nkernels > 0)
            run_kernel(m, &info.kernels[0]);
        crm_ptx_free(m);
    }
    if (have_info)
        crm_module_info_free(&info);
    return 0;
}
