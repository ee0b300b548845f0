/* flood.c -- an authenticated client that creates one kind of object until the
 * server refuses (the session limits' suite, tests/e2e/check_e2e_limits.c).
 *
 * Usage: flood KIND MAX [hold]
 * KIND: streams, events, allocations, pinned, handles (cuBLAS), modules (a small
 * PTX module each, launched once so that it reaches the server), module-bytes (64
 * KiB modules), functions (kernels of one module with MAX of them). Creates up to
 * MAX, checking each with a synchronising call (creation of streams and events is
 * queued), and prints "flood KIND: N created, then ERROR" (ERROR "none" when MAX
 * were created). With "hold" it then prints "holding" and sleeps until killed,
 * keeping everything. Exit 0 after a refusal or MAX, 2 on a usage error. */
#include <cublas_v2.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PTX_HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"
#define BIG_MODULE (64 << 10)

/* PTX with nkernels empty kernels k0..k(n-1), padded by a comment to at least pad
 * bytes; malloc'd. */
static char *ptx_text(int nkernels, size_t pad, int tag)
{
    size_t cap = 256 + (size_t)nkernels * 64 + pad;
    char *p = malloc(cap);
    size_t n = (size_t)snprintf(p, cap, PTX_HEAD "// module %d\n", tag);
    for (int k = 0; k < nkernels; k++)
        n += (size_t)snprintf(p + n, cap - n, ".visible .entry k%d()\n{\n\tret;\n}\n", k);
    if (n + 4 < pad) {
        memcpy(p + n, "// ", 3);
        memset(p + n + 3, 'x', pad - n - 4);
        p[pad - 1] = '\n';
        n = pad;
    }
    p[n] = '\0';
    return p;
}

/* Loads a module of PTX and launches its kernel k`index`: the module and the kernel
 * reach the server at the launch. */
static CUresult launch_from(CUmodule *mod, const char *ptx, int load, int index)
{
    CUfunction f;
    char name[16];
    CUresult rc = load ? cuModuleLoadData(mod, ptx) : CUDA_SUCCESS;
    snprintf(name, sizeof name, "k%d", index);
    if (rc == CUDA_SUCCESS)
        rc = cuModuleGetFunction(&f, *mod, name);
    if (rc == CUDA_SUCCESS)
        rc = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    return rc == CUDA_SUCCESS ? cuCtxSynchronize() : rc;
}

/* Creates object i of kind; CUDA_SUCCESS or the error, as a CUresult or (handles)
 * a cuBLAS status offset by 100000. */
static int create_one(const char *kind, int i, int max, CUmodule *shared)
{
    CUresult rc;
    if (strcmp(kind, "streams") == 0) {
        CUstream s;
        rc = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
        return rc == CUDA_SUCCESS ? cuCtxSynchronize() : rc;
    }
    if (strcmp(kind, "events") == 0) {
        CUevent e;
        rc = cuEventCreate(&e, CU_EVENT_DEFAULT);
        return rc == CUDA_SUCCESS ? cuCtxSynchronize() : rc;
    }
    if (strcmp(kind, "allocations") == 0) {
        CUdeviceptr p;
        return cuMemAlloc(&p, 256);
    }
    if (strcmp(kind, "pinned") == 0) {
        void *p;
        return cuMemAllocHost(&p, 64 << 10); /* shared with the server (over 32 KiB) when it has room */
    }
    if (strcmp(kind, "handles") == 0) {
        cublasHandle_t h;
        cublasStatus_t st = cublasCreate(&h);
        return st == CUBLAS_STATUS_SUCCESS ? 0 : 100000 + (int)st;
    }
    if (strcmp(kind, "modules") == 0 || strcmp(kind, "module-bytes") == 0) {
        CUmodule m;
        char *ptx = ptx_text(1, strcmp(kind, "modules") == 0 ? 0 : BIG_MODULE, i); /* each different */
        rc = launch_from(&m, ptx, 1, 0);
        free(ptx);
        return rc;
    }
    if (strcmp(kind, "functions") == 0) {
        static char *ptx;
        if (ptx == NULL)
            ptx = ptx_text(max, 0, 0);
        return launch_from(shared, ptx, i == 0, i);
    }
    return -1;
}

static const char *error_name(int rc)
{
    static char buf[64];
    const char *name = NULL;
    if (rc >= 100000) {
        snprintf(buf, sizeof buf, "%s", cublasGetStatusName((cublasStatus_t)(rc - 100000)));
        return buf;
    }
    cuGetErrorName((CUresult)rc, &name);
    return name != NULL ? name : "unknown";
}

int main(int argc, char **argv)
{
    if (argc < 3 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: flood KIND MAX [hold]\n");
        return 2;
    }
    const char *kind = argv[1];
    int max = atoi(argv[2]), created = 0, rc = 0;
    CUcontext ctx;
    CUdevice dev;
    CUmodule shared = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
        printf("flood %s: no device\n", kind);
        return 3;
    }
    for (; created < max; created++)
        if ((rc = create_one(kind, created, max, &shared)) != 0)
            break;
    if (rc == -1) {
        fprintf(stderr, "flood: unknown kind %s\n", kind);
        return 2;
    }
    printf("flood %s: %d created, then %s\n", kind, created, rc == 0 ? "none" : error_name(rc));
    if (argc > 3 && strcmp(argv[3], "hold") == 0) {
        printf("holding\n");
        for (;;)
            pause();
    }
    return 0;
}
