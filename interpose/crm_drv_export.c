/* crm_drv_export.c -- cuGetExportTable: the private tables NVIDIA's runtime (static
 * or shared, in programs, CuPy, cuBLAS, cuDNN) asks its driver for, answered so it
 * runs unmodified on this one.
 *
 * A table is an array of pointers, most starting with their own size in bytes.
 * What each slot does was learned from what the CUDA 13.0 runtime calls and what
 * it does with the answers, as public reverse-engineering work (ZLUDA's dark_api
 * notes) describes it; slots the runtime is not seen to call are NULL. Tables by
 * the id the runtime asks with (bytes in the order the id is written):
 *
 *   6BD5FB6C-5BF4-E74A-8987-D93912FD9DF9  the runtime interface. Required: without
 *       it the runtime's first call fails with cudaErrorSymbolNotFound.
 *       [1]  load the module of an nvcc fatbinary wrapper (__cudaRegisterFatBinary)
 *       [2]  the primary context of a device, without retaining it
 *       [6]  [1] with three more arguments (NULL, NULL, 0 as seen)
 *       [7]  a notification with one word argument; nothing to do
 *       [8]  [6] taking the fatbinary itself before the result pointer
 *       [12] load the JIT compilers: nothing to load on the client
 *   42D85A81-23F6-CB47-8298-F6E78A3AECDC  tools thread-local state: each slot "not supported"
 *   A094798C-2E74-2E74-93F2-0800200C0A66  tools callback hooks: [2] and [6] hand
 *       out buffers (4 KiB and 56 bytes) the runtime writes its callback state to
 *   C693336E-1121-DF11-A8C3-68F355D89593  context-local storage (no size slot):
 *       [0] put (context, key, value, destructor) [1] delete [2] get; the runtime
 *       keeps its per-context state here, destructors run at primary reset
 *   0CA50B8C-1004-929A-89A7-D0DF10E77286  [1] cuCtxCreate_v2 by another door
 *   195BCBF4-D67D-024A-ACC5-1D29CEA631AE  a device heap: not supported
 *   B10541E1-F7C7-C74A-9F64-F223BE99F1E2  extended device queries: not supported
 *   D4082055-BDE6-704B-8D34-BA123C66E1F2  integrity check: [1] (version, seconds,
 *       out[2]) answers an HMAC-MD2 of this process's facts that the runtime
 *       computes too and compares (crm__integrity below)
 *   263E8860-7CD2-6143-92F6-BBD5006DFA7E  context checks: [2] reports 0 (no flag
 *       set), [3] returns 0
 *   21318C60-9714-3248-8CA6-41FF7324C8F2  tools context queries, asked for by CUDA
 *       13.2+ runtimes (cuDNN 9.26's static one): without it their first call fails
 *       (cudnnCreate: "cudaGetDeviceCount(&count) != cudaSuccess"). A size header and
 *       94 slots, as NVIDIA's driver serves it; none was seen called (cuDNN's
 *       handles, heuristics and launches), so each answers CUDA_ERROR_NOT_SUPPORTED
 *       and logs its number once
 * Any other id (the runtime asks for F8CFF951-2146-8B4E-B9E2-FB469E7C0DD9 first and
 * goes on without it) answers CUDA_ERROR_INVALID_VALUE. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "common/crm_md2.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

#define CRM__SIZE(n) ((void *)(uintptr_t)((n) * sizeof(void *)))

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev); /* interpose/crm_drv_ctx.c */

/* ---- the runtime interface ---------------------------------------------------------- */

static CUresult crm__module_from_wrapper(CUmodule *module, const void *wrapper)
{
    return crm_drv_module_load(module, wrapper, 1, 0); /* a program's own image: no copy */
}

static CUresult crm__primary_ctx(CUcontext *pctx, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc == CUDA_SUCCESS && pctx == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *pctx = crm_drv_primary(dev);
    return rc;
}

static CUresult crm__module_from_wrapper_ext(CUmodule *module, const void *wrapper, void *a3, void *a4, unsigned a5)
{
    if (a3 != NULL || a4 != NULL || a5 != 0)
        crm_debug("runtime module load with arguments %p %p %u: not understood, ignored", a3, a4, a5);
    return crm__module_from_wrapper(module, wrapper);
}

static void crm__notify(uintptr_t arg)
{
    (void)arg;
}

static CUresult crm__module_from_fatbin_ext(const void *fatbin, CUmodule *module, void *a3, void *a4, unsigned a5)
{
    if (a3 != NULL || a4 != NULL || a5 != 0)
        crm_debug("runtime module load with arguments %p %p %u: not understood, ignored", a3, a4, a5);
    return crm_drv_module_load(module, fatbin, 1, 0);
}

static CUresult crm__load_compilers(void)
{
    return CUDA_SUCCESS;
}

static void *crm__runtime_iface[13] = {
    [0] = CRM__SIZE(13),
    [1] = (void *)crm__module_from_wrapper,
    [2] = (void *)crm__primary_ctx,
    [6] = (void *)crm__module_from_wrapper_ext,
    [7] = (void *)crm__notify,
    [8] = (void *)crm__module_from_fatbin_ext,
    [12] = (void *)crm__load_compilers,
};

/* ---- tools tables ------------------------------------------------------------------- */

static uint32_t crm__hook_buf1[1024], crm__hook_buf2[14];

static void crm__hook_buffer1(void **ptr, size_t *size)
{
    *ptr = crm__hook_buf1;
    *size = sizeof crm__hook_buf1 / sizeof crm__hook_buf1[0];
}

static void crm__hook_buffer2(void **ptr, size_t *size)
{
    *ptr = crm__hook_buf2;
    *size = sizeof crm__hook_buf2 / sizeof crm__hook_buf2[0];
}

/* The tools' thread-local state is never kept here: each function answers "not
 * supported" whatever its arguments (cuBLASLt calls slot 2 as it creates a handle
 * and takes a failure, as it takes the table's absence, for "no tool attached"). */
static CUresult crm__tools_tls_absent(void)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

static void *crm__tools_tls[4] = {
    [0] = CRM__SIZE(4),
    [1] = (void *)crm__tools_tls_absent,
    [2] = (void *)crm__tools_tls_absent,
    [3] = (void *)crm__tools_tls_absent,
};
static void *crm__tools_hooks[7] = {
    [0] = CRM__SIZE(7),
    [2] = (void *)crm__hook_buffer1,
    [6] = (void *)crm__hook_buffer2,
};

/* ---- context-local storage and context creation ------------------------------------- */

static CUresult crm__cls_get(void **value, CUcontext ctx, void *key)
{
    return value == NULL ? CUDA_ERROR_INVALID_VALUE : crm_drv_cls_get(value, ctx, key);
}

static void *crm__cls_table[4] = {
    [0] = (void *)crm_drv_cls_put,
    [1] = (void *)crm_drv_cls_delete,
    [2] = (void *)crm__cls_get,
};

static void *crm__ctx_bypass[2] = {[0] = CRM__SIZE(2), [1] = (void *)cuCtxCreate_v2};

/* ---- unsupported extensions ------------------------------------------------------------ */

static CUresult crm__heap_alloc(const void **record, size_t a2, size_t a3)
{
    (void)record, (void)a2, (void)a3;
    return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult crm__heap_free(const void *record, size_t *a2)
{
    (void)record, (void)a2;
    return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult crm__device_attr_ext(CUdevice dev, unsigned attr, int a3, size_t result[2])
{
    (void)dev, (void)attr, (void)a3, (void)result;
    return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult crm__device_query(unsigned char *result, CUdevice dev)
{
    (void)result, (void)dev;
    return CUDA_ERROR_NOT_SUPPORTED;
}

static void *crm__heap[3] = {[0] = CRM__SIZE(3), [1] = (void *)crm__heap_alloc, [2] = (void *)crm__heap_free};
static void *crm__device_ext[26] = {
    [0] = CRM__SIZE(26),
    [5] = (void *)crm__device_attr_ext,
    [13] = (void *)crm__device_query,
};

/* ---- context checks ----------------------------------------------------------------- */

static CUresult crm__context_check(CUcontext ctx, uint32_t *flags, const void **extra)
{
    (void)ctx, (void)extra;
    if (flags != NULL)
        *flags = 0;
    return CUDA_SUCCESS;
}

static uint32_t crm__check_fn3(void)
{
    return 0;
}

static void *crm__ctx_checks[4] = {
    [0] = CRM__SIZE(4),
    [2] = (void *)crm__context_check,
    [3] = (void *)crm__check_fn3,
};

/* ---- the integrity check ---------------------------------------------------------------- */

static CUresult crm__integrity(uint32_t version, uint64_t seconds, uint64_t result[2]);
static void *crm__integrity_table[3] = {[0] = CRM__SIZE(3), [1] = (void *)crm__integrity};

/* What the MAC covers: these facts in this order, then each device's identity. */
typedef struct crm__integrity_facts {
    uint32_t driver_version;
    uint32_t version;
    uint32_t pid;
    uint32_t thread;                /* the low 32 bits of pthread_self() */
    const void *runtime_table;      /* where the tables and the function live */
    const void *integrity_table;
    const void *integrity_fn;
    uint64_t seconds;
} crm__integrity_facts;

typedef struct crm__device_facts {
    unsigned char uuid[16];
    int32_t pci_domain, pci_bus, pci_device;
} crm__device_facts;

_Static_assert(sizeof(crm__integrity_facts) == 48, "no padding in the MAC's input");
_Static_assert(sizeof(crm__device_facts) == 28, "no padding in the MAC's input");

static const unsigned char crm__integrity_key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                                                     0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};

/* Appends device i's identity to facts; -1 when it cannot be read. */
static int crm__device_identity(int i, crm__device_facts *d)
{
    CUuuid uuid;
    if (cuDeviceGetUuid_v2(&uuid, i) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&d->pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, i) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&d->pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&d->pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, i) != CUDA_SUCCESS)
        return -1;
    memcpy(d->uuid, uuid.bytes, sizeof d->uuid);
    return 0;
}

#define CRM__MAX_HASHED_DEVICES 64

static CUresult crm__integrity(uint32_t version, uint64_t seconds, uint64_t result[2])
{
    static const uint64_t answers[2][2] = { /* versions ending in 0 and 1 ask for fixed answers */
        {0x3341181C03CB675Cull, 0x8ED383AA1F4CD1E8ull},
        {0x1841181C03CB675Cull, 0x8ED383AA1F4CD1E8ull},
    };
    unsigned char msg[sizeof(crm__integrity_facts) + CRM__MAX_HASHED_DEVICES * sizeof(crm__device_facts)];
    int driver = 0, count = 0;
    if (result == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (version % 10 < 2) {
        memcpy(result, answers[version % 10], sizeof answers[0]);
        return CUDA_SUCCESS;
    }
    cuDriverGetVersion(&driver);
    crm__integrity_facts f = {
        .driver_version = (uint32_t)driver, .version = version, .pid = (uint32_t)getpid(),
        .thread = (uint32_t)(uintptr_t)pthread_self(), .runtime_table = crm__runtime_iface,
        .integrity_table = crm__integrity_table, .integrity_fn = (const void *)crm__integrity, .seconds = seconds,
    };
    memcpy(msg, &f, sizeof f);
    size_t len = sizeof f;
    CUresult rc = cuDeviceGetCount(&count);
    for (int i = 0; rc == CUDA_SUCCESS && i < count && i < CRM__MAX_HASHED_DEVICES; i++) {
        crm__device_facts d;
        if (crm__device_identity(i, &d) != 0)
            return CUDA_ERROR_UNKNOWN;
        memcpy(msg + len, &d, sizeof d);
        len += sizeof d;
    }
    if (rc != CUDA_SUCCESS)
        return rc;
    crm_hmac_md2(crm__integrity_key, sizeof crm__integrity_key, msg, len, (unsigned char *)result);
    return CUDA_SUCCESS;
}

/* ---- tools context queries (CUDA 13.2+ runtimes) ------------------------------------ */

static CUresult crm__tools_ctx_slot(int slot)
{
    static uint64_t told[2]; /* one bit per slot */
    uint64_t bit = 1ull << (slot % 64), was = __atomic_fetch_or(&told[slot / 64], bit, __ATOMIC_RELAXED);
    if (!(was & bit))
        crm_warn("the runtime called slot %d of the driver's tools context table, which cudarem does not "
                 "implement: it returns CUDA_ERROR_NOT_SUPPORTED", slot);
    return CUDA_ERROR_NOT_SUPPORTED;
}

#define CRM__TC(n) static CUresult crm__tc_##n(void) { return crm__tools_ctx_slot(n); }
#define CRM__TC10(t) CRM__TC(t##0) CRM__TC(t##1) CRM__TC(t##2) CRM__TC(t##3) CRM__TC(t##4) \
                     CRM__TC(t##5) CRM__TC(t##6) CRM__TC(t##7) CRM__TC(t##8) CRM__TC(t##9)
CRM__TC(1) CRM__TC(2) CRM__TC(3) CRM__TC(4) CRM__TC(5) CRM__TC(6) CRM__TC(7) CRM__TC(8) CRM__TC(9)
CRM__TC10(1) CRM__TC10(2) CRM__TC10(3) CRM__TC10(4) CRM__TC10(5) CRM__TC10(6) CRM__TC10(7) CRM__TC10(8)
CRM__TC(90) CRM__TC(91) CRM__TC(92) CRM__TC(93) CRM__TC(94)

#define CRM__TS(n) [n] = (void *)crm__tc_##n
#define CRM__TS10(t) CRM__TS(t##0), CRM__TS(t##1), CRM__TS(t##2), CRM__TS(t##3), CRM__TS(t##4), \
                     CRM__TS(t##5), CRM__TS(t##6), CRM__TS(t##7), CRM__TS(t##8), CRM__TS(t##9)
static void *crm__tools_ctx[95] = {
    [0] = CRM__SIZE(95),
    CRM__TS(1), CRM__TS(2), CRM__TS(3), CRM__TS(4), CRM__TS(5), CRM__TS(6), CRM__TS(7), CRM__TS(8), CRM__TS(9),
    CRM__TS10(1), CRM__TS10(2), CRM__TS10(3), CRM__TS10(4), CRM__TS10(5), CRM__TS10(6), CRM__TS10(7), CRM__TS10(8),
    CRM__TS(90), CRM__TS(91), CRM__TS(92), CRM__TS(93), CRM__TS(94),
};

/* ---- the lookup --------------------------------------------------------------------- */

typedef struct crm__table {
    unsigned char id[16];
    void **slots;
} crm__table;

static const crm__table crm__tables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9}, crm__runtime_iface},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}, crm__tools_tls},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66}, crm__tools_hooks},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93}, crm__cls_table},
    {{0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86}, crm__ctx_bypass},
    {{0x19, 0x5b, 0xcb, 0xf4, 0xd6, 0x7d, 0x02, 0x4a, 0xac, 0xc5, 0x1d, 0x29, 0xce, 0xa6, 0x31, 0xae}, crm__heap},
    {{0xb1, 0x05, 0x41, 0xe1, 0xf7, 0xc7, 0xc7, 0x4a, 0x9f, 0x64, 0xf2, 0x23, 0xbe, 0x99, 0xf1, 0xe2}, crm__device_ext},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2}, crm__integrity_table},
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2}, crm__tools_ctx},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e}, crm__ctx_checks},
};

static void crm__log_id(const char *what, const CUuuid *id)
{
    const unsigned char *b = (const unsigned char *)id->bytes;
    crm_debug("cuGetExportTable %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x: %s", b[0], b[1],
              b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15], what);
}

CRM_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (ppExportTable == NULL || pExportTableId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof crm__tables / sizeof crm__tables[0]; i++)
        if (memcmp(crm__tables[i].id, pExportTableId->bytes, 16) == 0) {
            crm__log_id("answered", pExportTableId);
            *ppExportTable = crm__tables[i].slots;
            return CUDA_SUCCESS;
        }
    crm__log_id("unknown", pExportTableId);
    *ppExportTable = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
