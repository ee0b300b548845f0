/* drv_vmm.c -- the driver's virtual memory management, as torch's expandable
 * segments use it: reserve a range, create physical chunks, map them side by side,
 * grant access, then copy and memset across the chunks' boundary as one range;
 * grow by mapping another chunk at the end, unmap and release, and the errors a
 * GPU gives (unaligned sizes, unknown handles, unmapped or unreserved addresses,
 * more memory than the device has). Runs on a local GPU and through the shim.
 * Prints "PASS drv_vmm". */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dcheck.h"

#define CU(call) CHECK((call) == CUDA_SUCCESS, "%s failed", #call)

static CUmemAllocationProp device_prop(CUdevice dev)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
}

static CUmemAccessDesc read_write(CUdevice dev)
{
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = dev;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

/* Writes a pattern across [base, base + n), reads it back, checks it. */
static void check_span(CUdeviceptr base, size_t n, unsigned seed)
{
    unsigned char *out = malloc(n), *in = malloc(n);
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(i * 31 + seed);
    CU(cuMemcpyHtoD(base, out, n));
    memset(in, 0, n);
    CU(cuMemcpyDtoH(in, base, n));
    CHECK(memcmp(in, out, n) == 0, "the %zu bytes across mappings came back changed", n);
    CU(cuMemsetD8(base + n / 2 - 7, 0x5a, 14));
    CU(cuMemcpyDtoH(in, base, n));
    CHECK(in[n / 2 - 8] == out[n / 2 - 8] && in[n / 2 - 7] == 0x5a && in[n / 2 + 6] == 0x5a &&
              in[n / 2 + 7] == out[n / 2 + 7], "memset across the boundary");
    free(out);
    free(in);
}

/* 1 through the shim: copies to unmapped addresses are checked there (on a GPU
 * such a copy may be a fault that ends the context, so it is not tried). */
static int through_shim(void)
{
    return dlsym(RTLD_DEFAULT, "cudaremGetStats") != NULL;
}

static void check_errors(CUdevice dev, size_t gran, CUdeviceptr base)
{
    CUmemAllocationProp p = device_prop(dev);
    CUmemGenericAllocationHandle h = 0;
    CHECK(cuMemCreate(&h, gran + 1, &p, 0) == CUDA_ERROR_INVALID_VALUE, "an unaligned size was accepted");
    CHECK(cuMemMap(base, gran, 0, (CUmemGenericAllocationHandle)0x7777, 0) != CUDA_SUCCESS, "an unknown handle mapped");
    CUdeviceptr none = 0;
    if (through_shim())
        CHECK(cuMemcpyHtoD(base + 3 * gran, &none, sizeof none) != CUDA_SUCCESS, "a copy into unmapped addresses worked");
    size_t free_b = 0, total = 0;
    CU(cuMemGetInfo(&free_b, &total));
    size_t too_much = (total / gran + 1) * gran;
    CHECK(cuMemCreate(&h, too_much, &p, 0) == CUDA_ERROR_OUT_OF_MEMORY, "more than the device has was created");
}

int main(void)
{
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    size_t gran = 0, rec = 0;
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CUmemAllocationProp p = device_prop(dev);
    CU(cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CU(cuMemGetAllocationGranularity(&rec, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    CHECK(gran > 0 && rec >= gran && rec % gran == 0, "granularity %zu, recommended %zu", gran, rec);

    CUdeviceptr base = 0;
    CU(cuMemAddressReserve(&base, 8 * gran, 0, 0, 0));
    CHECK(base != 0 && base % gran == 0, "reservation at %#llx", (unsigned long long)base);
    CUmemGenericAllocationHandle h[3];
    for (int i = 0; i < 3; i++)
        CU(cuMemCreate(&h[i], gran, &p, 0));
    CUmemAllocationProp got;
    CU(cuMemGetAllocationPropertiesFromHandle(&got, h[1]));
    CHECK(got.location.id == dev && got.type == CU_MEM_ALLOCATION_TYPE_PINNED, "properties from the handle");
    CU(cuMemMap(base, gran, 0, h[0], 0));
    CU(cuMemMap(base + gran, gran, 0, h[1], 0));
    CHECK(cuMemMap(base + gran, gran, 0, h[2], 0) != CUDA_SUCCESS, "a second mapping over a mapped range");
    CUmemAccessDesc rw = read_write(dev);
    CU(cuMemSetAccess(base, 2 * gran, &rw, 1));
    check_span(base, 2 * gran, 1);
    check_span(base + gran - 100, 200, 2); /* a small range across the boundary */

    /* grow at the end, as an expandable segment does; the memory before stays */
    unsigned char first = 0;
    CU(cuMemcpyDtoH(&first, base, 1));
    CU(cuMemMap(base + 2 * gran, gran, 0, h[2], 0));
    CU(cuMemSetAccess(base + 2 * gran, gran, &rw, 1));
    check_span(base + gran, 2 * gran, 3);
    unsigned char again = 0;
    CU(cuMemcpyDtoH(&again, base, 1));
    CHECK(again == first, "growing changed the memory before");

    check_errors(dev, gran, base);
    CHECK(cuMemAddressFree(base, 8 * gran) != CUDA_SUCCESS, "a reservation with mappings was freed");
    for (int i = 0; i < 3; i++)
        CU(cuMemRelease(h[i])); /* released while mapped: the memory stays until unmapped */
    check_span(base, 3 * gran, 4);
    CU(cuMemUnmap(base, 3 * gran));
    if (through_shim())
        CHECK(cuMemcpyHtoD(base, &first, 1) != CUDA_SUCCESS, "a copy into unmapped memory worked");
    CHECK(cuMemRelease(h[0]) != CUDA_SUCCESS, "a handle was released twice");
    CU(cuMemAddressFree(base, 8 * gran));
    CU(cuDevicePrimaryCtxRelease(dev));
    if (dcheck_failures == 0)
        printf("PASS drv_vmm\n");
    else
        printf("FAILED drv_vmm: %d check(s)\n", dcheck_failures);
    return dcheck_failures == 0 ? 0 : 1;
}
