/* cpu_kernels.c -- CPU implementations of the test programs' kernels for the
 * emulated device (libktest_cpu_kernels.so, given to the server with --emu-kernels).
 * Each is called once per thread; names are the kernels' mangled names. */
#include <stdint.h>
#include <string.h>
#include "server/emu/cudarem_emu_kernel.h"

#define ARG(type, i) (*(type *)args[i])

static unsigned gid(const cudarem_emu_ctx *c)
{
    return c->blockIdx.x * c->blockDim.x + c->threadIdx.x;
}

static void vadd(const cudarem_emu_ctx *c, void **args)
{
    unsigned i = gid(c);
    if ((int)i < ARG(int, 3))
        ARG(float *, 2)[i] = ARG(const float *, 0)[i] + ARG(const float *, 1)[i];
}

struct saxpy_params { float a; int n; double unused; };

static void saxpy(const cudarem_emu_ctx *c, void **args)
{
    const struct saxpy_params *p = args[0];
    unsigned i = gid(c);
    if ((int)i < p->n)
        ARG(float *, 2)[i] = p->a * ARG(const float *, 1)[i] + ARG(float *, 2)[i];
}

struct small { char c; double d; short s; };
struct block { int v[2000]; };
struct result { long long c, s, i, ll; double f, d; long long small_c, small_s; double small_d; long long block_sum; };

static void scalars(const cudarem_emu_ctx *c, void **args)
{
    if (c->blockIdx.x != 0 || c->threadIdx.x != 0)
        return;
    const struct small *sm = args[6];
    const struct block *blk = args[7];
    struct result r = {ARG(char, 0), ARG(short, 1), ARG(int, 2), ARG(long long, 3), ARG(float, 4), ARG(double, 5),
                       sm->c, sm->s, sm->d, 0};
    for (int k = 0; k < 2000; k++)
        r.block_sum += blk->v[k];
    memcpy(ARG(struct result *, 8), &r, sizeof r);
}

static void lookup(const cudarem_emu_ctx *c, void **args)
{
    unsigned i = gid(c);
    const int *table = c->symbol(c, "table", NULL);
    int *counter = c->symbol(c, "counter", NULL);
    if ((int)i < ARG(int, 2) && table != NULL && counter != NULL) {
        ARG(int *, 1)[i] = table[ARG(const int *, 0)[i] & 15];
        ++*counter;
    }
}

static void fill(const cudarem_emu_ctx *c, void **args)
{
    unsigned i = gid(c);
    if ((int)i < ARG(int, 2))
        ARG(int *, 0)[i] = ARG(int, 1);
}

static void scale(const cudarem_emu_ctx *c, void **args)
{
    unsigned i = gid(c);
    if ((int)i < ARG(int, 2))
        ARG(int *, 0)[i] *= ARG(int, 1);
}

static void square(const cudarem_emu_ctx *c, void **args)
{
    unsigned i = gid(c);
    float *p = ARG(float *, 0);
    if ((int)i < ARG(int, 1))
        p[i] = p[i] * p[i];
    int *calls = c->symbol(c, "shlib_calls", NULL);
    if (i == 0 && calls != NULL)
        ++*calls;
}

static void nop(const cudarem_emu_ctx *c, void **args)
{
    (void)c;
    if (ARG(int *, 0) != NULL)
        *ARG(int *, 0) = 1;
}

static void incr(const cudarem_emu_ctx *c, void **args)
{
    unsigned i = gid(c);
    if ((int)i < ARG(int, 1))
        ARG(unsigned long long *, 0)[i] += ARG(unsigned long long, 2);
}

CUDAREM_EMU_KERNELS_BEGIN
    CUDAREM_EMU_KERNEL("_Z4vaddPKfS0_Pfi", vadd),
    CUDAREM_EMU_KERNEL("_Z5saxpy11SaxpyParamsPKfPf", saxpy),
    CUDAREM_EMU_KERNEL("_Z7scalarscsixfd5Small5BlockP6Result", scalars),
    CUDAREM_EMU_KERNEL("_Z6lookupPKiPii", lookup),
    CUDAREM_EMU_KERNEL("_Z4fillPiii", fill),
    CUDAREM_EMU_KERNEL("_Z5scalePiii", scale),
    CUDAREM_EMU_KERNEL("_Z6squarePfi", square),
    CUDAREM_EMU_KERNEL("_Z3nopPi", nop),
    CUDAREM_EMU_KERNEL("_Z4incrPyiy", incr),
CUDAREM_EMU_KERNELS_END
