/* nvml_query.c -- an NVML client as monitoring tools are: it links no NVIDIA library,
 * loads libnvidia-ml.so.1 (and the CUDA runtime) by name and prints what NVML says
 * of every device, checking it against the runtime and NVML's own rules. Run
 * through the shim it sees the server's devices.
 *
 *   nvml_query            query every device, print, check; "PASS nvml_query" at the end
 *   nvml_query hold MIB   allocate MIB MiB on device 0, print "holding", wait (60 s at most)
 *   nvml_query noserver   the server is unreachable: nvmlInit fails, NO_GPUS init has 0 devices
 *
 * Exit status 0 when every check passed; each failed check prints a FAIL line. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <nvml.h>

#define MIB (1024ull * 1024ull)
#define HELD_MIB 64

static int failures;

#define CHECK(cond, ...)                                       \
    do {                                                       \
        if (!(cond)) {                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
            printf(__VA_ARGS__);                               \
            printf("\n");                                      \
            failures++;                                        \
        }                                                      \
    } while (0)
#define CHECK_RC(call, want)                                                                     \
    do {                                                                                         \
        nvmlReturn_t rc_ = (call);                                                               \
        CHECK(rc_ == (want), "%s returned %d (%s), want %d", #call, (int)rc_, nvml.ErrorString(rc_), \
              (int)(want));                                                                      \
    } while (0)

/* The NVML functions used, resolved with dlsym. */
static struct {
#define NVML_FN(name) __typeof__(nvml##name) *name;
#include "nvml_fns.def"
#undef NVML_FN
} nvml;
/* The runtime functions used, resolved with dlsym. */
static struct {
    __typeof__(cudaSetDevice) *SetDevice;
    __typeof__(cudaMalloc) *Malloc;
    __typeof__(cudaMemset) *Memset;
    __typeof__(cudaDeviceSynchronize) *DeviceSynchronize;
    __typeof__(cudaMemGetInfo) *MemGetInfo;
    __typeof__(cudaGetLastError) *GetLastError;
} rt;

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (p == NULL) {
        printf("FAIL: %s not found: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void load(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    void *cudart = dlopen("libcudart.so.13", RTLD_NOW);
    if (lib == NULL || cudart == NULL) {
        printf("FAIL: cannot load libnvidia-ml.so.1 or libcudart.so.13: %s\n", dlerror());
        exit(2);
    }
#define NVML_FN(name) *(void **)&nvml.name = sym(lib, "nvml" #name);
#include "nvml_fns.def"
#undef NVML_FN
    *(void **)&rt.SetDevice = sym(cudart, "cudaSetDevice");
    *(void **)&rt.Malloc = sym(cudart, "cudaMalloc");
    *(void **)&rt.Memset = sym(cudart, "cudaMemset");
    *(void **)&rt.DeviceSynchronize = sym(cudart, "cudaDeviceSynchronize");
    *(void **)&rt.MemGetInfo = sym(cudart, "cudaMemGetInfo");
    *(void **)&rt.GetLastError = sym(cudart, "cudaGetLastError");
}

/* Calls before nvmlInit are refused. */
static void check_uninitialized(void)
{
    unsigned n;
    char buf[96];
    nvmlDevice_t h;
    CHECK_RC(nvml.DeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    CHECK_RC(nvml.DeviceGetHandleByIndex_v2(0, &h), NVML_ERROR_UNINITIALIZED);
    CHECK_RC(nvml.SystemGetDriverVersion(buf, sizeof buf), NVML_ERROR_UNINITIALIZED);
    CHECK_RC(nvml.Shutdown(), NVML_ERROR_UNINITIALIZED);
}

static void print_system(void)
{
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "", version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = "";
    int cuda = 0;
    CHECK_RC(nvml.SystemGetDriverVersion(driver, sizeof driver), NVML_SUCCESS);
    CHECK_RC(nvml.SystemGetNVMLVersion(version, sizeof version), NVML_SUCCESS);
    CHECK_RC(nvml.SystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
    CHECK(cuda >= 13000, "CUDA driver version %d", cuda);
    printf("nvml: driver %s, CUDA driver %d, NVML %s\n", driver, cuda, version);
}

/* Lookups by UUID and by each spelling of the PCI bus id give back device i. */
static void check_lookups(unsigned i, const char *uuid, const nvmlPciInfo_t *pci)
{
    nvmlDevice_t h;
    unsigned idx = 99;
    char shortid[32];
    CHECK_RC(nvml.DeviceGetHandleByUUID(uuid, &h), NVML_SUCCESS);
    CHECK(nvml.DeviceGetIndex(h, &idx) == NVML_SUCCESS && idx == i, "by UUID: index %u, want %u", idx, i);
    CHECK_RC(nvml.DeviceGetHandleByPciBusId_v2(pci->busId, &h), NVML_SUCCESS);
    CHECK(nvml.DeviceGetIndex(h, &idx) == NVML_SUCCESS && idx == i, "by busId: index %u, want %u", idx, i);
    CHECK_RC(nvml.DeviceGetHandleByPciBusId_v2(pci->busIdLegacy, &h), NVML_SUCCESS);
    CHECK(nvml.DeviceGetIndex(h, &idx) == NVML_SUCCESS && idx == i, "by busIdLegacy: index %u", idx);
    snprintf(shortid, sizeof shortid, "%02x:%02x.0", pci->bus, pci->device);
    CHECK_RC(nvml.DeviceGetHandleByPciBusId_v2(shortid, &h), NVML_SUCCESS);
    CHECK(nvml.DeviceGetIndex(h, &idx) == NVML_SUCCESS && idx == i, "by %s: index %u", shortid, idx);
}

/* NVML's memory agrees with cudaMemGetInfo of the same device, taken right after. */
static void check_memory(unsigned i, nvmlDevice_t h)
{
    nvmlMemory_t m;
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    size_t cfree = 0, ctotal = 0;
    CHECK_RC(nvml.DeviceGetMemoryInfo(h, &m), NVML_SUCCESS);
    CHECK(rt.SetDevice((int)i) == cudaSuccess && rt.MemGetInfo(&cfree, &ctotal) == cudaSuccess, "cudaMemGetInfo");
    printf("nvml: device %u: memory total %llu used %llu free %llu; cudaMemGetInfo total %zu free %zu\n", i,
           m.total, m.used, m.free, ctotal, cfree);
    CHECK(m.total == ctotal, "NVML total %llu, cudaMemGetInfo total %zu", m.total, ctotal);
    CHECK(m.free == cfree, "NVML free %llu, cudaMemGetInfo free %zu", m.free, cfree);
    CHECK(m.used + m.free == m.total, "used + free != total");
    CHECK_RC(nvml.DeviceGetMemoryInfo_v2(h, &m2), NVML_SUCCESS);
    CHECK(m2.total == m.total && m2.reserved == 0, "v2 total %llu reserved %llu", m2.total, m2.reserved);
    m2.version = 1;
    CHECK_RC(nvml.DeviceGetMemoryInfo_v2(h, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
}

/* Prints the processes on device i; returns the memory NVML says pid uses there, or
 * -1 when pid is not listed. */
static long long processes(unsigned i, nvmlDevice_t h, unsigned pid)
{
    nvmlProcessInfo_t infos[64];
    unsigned n = 0;
    long long used = -1;
    nvmlReturn_t rc = nvml.DeviceGetComputeRunningProcesses_v3(h, &n, NULL);
    CHECK(rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE, "processes count: %d", (int)rc);
    unsigned want = n;
    n = 64;
    CHECK_RC(nvml.DeviceGetComputeRunningProcesses_v3(h, &n, infos), NVML_SUCCESS);
    CHECK(n == want, "process count %u, then %u", want, n);
    printf("nvml: device %u: %u process(es)", i, n);
    for (unsigned k = 0; k < n && k < 64; k++) {
        printf("%s pid %u used %llu", k ? "," : ":", infos[k].pid, infos[k].usedGpuMemory);
        if (infos[k].pid == pid)
            used = (long long)infos[k].usedGpuMemory;
    }
    printf("\n");
    return used;
}

/* Arguments NVML refuses. */
static void check_bad_arguments(unsigned count, nvmlDevice_t h)
{
    nvmlDevice_t bad = (nvmlDevice_t)(void *)&failures, out;
    char small[4], name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    nvmlMemory_t m;
    CHECK_RC(nvml.DeviceGetName(bad, name, sizeof name), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetName(NULL, name, sizeof name), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetMemoryInfo(bad, &m), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetName(h, NULL, sizeof name), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetName(h, small, sizeof small), NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK_RC(nvml.DeviceGetMemoryInfo(h, NULL), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetHandleByIndex_v2(count, &out), NVML_ERROR_INVALID_ARGUMENT);
    CHECK_RC(nvml.DeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &out), NVML_ERROR_NOT_FOUND);
    CHECK_RC(nvml.DeviceGetHandleByPciBusId_v2("not a bus id", &out), NVML_ERROR_INVALID_ARGUMENT);
    /* Not remoted: NVML's "not supported", and the CUDA runtime's last error untouched. */
    unsigned milliwatts;
    CHECK_RC(nvml.DeviceGetPowerUsage(h, &milliwatts), NVML_ERROR_NOT_SUPPORTED);
    CHECK(rt.GetLastError() == cudaSuccess, "an NVML call set the runtime's last error");
}

/* Device memory work for the last second's utilisation: the emulated device counts
 * the time its memsets ran. */
static void keep_busy(void *buf)
{
    for (int k = 0; k < 8; k++)
        rt.Memset(buf, k, HELD_MIB * MIB);
    rt.DeviceSynchronize();
}

static void query_device(unsigned i, unsigned count)
{
    nvmlDevice_t h;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "", uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
    nvmlPciInfo_t pci;
    nvmlUtilization_t u = {0, 0};
    int major = 0, minor = 0;
    unsigned idx = 99;
    void *buf = NULL;
    CHECK_RC(nvml.DeviceGetHandleByIndex_v2(i, &h), NVML_SUCCESS);
    CHECK(nvml.DeviceGetIndex(h, &idx) == NVML_SUCCESS && idx == i, "index %u, want %u", idx, i);
    CHECK_RC(nvml.DeviceGetName(h, name, sizeof name), NVML_SUCCESS);
    CHECK_RC(nvml.DeviceGetUUID(h, uuid, sizeof uuid), NVML_SUCCESS);
    CHECK_RC(nvml.DeviceGetPciInfo_v3(h, &pci), NVML_SUCCESS);
    CHECK_RC(nvml.DeviceGetCudaComputeCapability(h, &major, &minor), NVML_SUCCESS);
    printf("nvml: device %u: \"%s\" %s pci %s (legacy %s) compute capability %d.%d\n", i, name, uuid, pci.busId,
           pci.busIdLegacy, major, minor);
    CHECK(strncmp(uuid, "GPU-", 4) == 0 && strlen(uuid) == 40, "UUID %s", uuid);
    check_lookups(i, uuid, &pci);
    CHECK(rt.SetDevice((int)i) == cudaSuccess && rt.Malloc(&buf, HELD_MIB * MIB) == cudaSuccess, "cudaMalloc");
    keep_busy(buf);
    check_memory(i, h);
    /* The emulated device measures the memsets it just ran; a GPU server answers from
     * its own NVML when it has one. */
    int emulated = strstr(name, "cudarem emulated device") != NULL;
    nvmlReturn_t urc = nvml.DeviceGetUtilizationRates(h, &u);
    CHECK(urc == NVML_SUCCESS || (!emulated && urc == NVML_ERROR_NOT_SUPPORTED), "utilization: %s",
          nvml.ErrorString(urc));
    printf("nvml: device %u: utilization gpu %u%% memory %u%%%s\n", i, u.gpu, u.memory,
           urc == NVML_SUCCESS ? "" : " (not supported)");
    CHECK(u.gpu <= 100 && u.memory <= 100 && (u.memory > 0 || !emulated), "utilization gpu %u memory %u", u.gpu,
          u.memory);
    long long used = processes(i, h, (unsigned)getpid());
    CHECK(used >= (long long)(HELD_MIB * MIB), "this process (pid %d) listed with %lld bytes", (int)getpid(), used);
    check_bad_arguments(count, h);
}

static int run_query(void)
{
    unsigned count = 0;
    check_uninitialized();
    CHECK_RC(nvml.Init_v2(), NVML_SUCCESS);
    print_system();
    CHECK_RC(nvml.DeviceGetCount_v2(&count), NVML_SUCCESS);
    printf("nvml: %u device(s)\n", count);
    CHECK(count >= 1, "no device");
    for (unsigned i = 0; i < count; i++)
        query_device(i, count);
    CHECK_RC(nvml.Shutdown(), NVML_SUCCESS);
    CHECK_RC(nvml.DeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
    return 0;
}

/* Holds memory on device 0 for another process to list, until killed (60 s at most). */
static int run_hold(unsigned mib)
{
    void *buf = NULL;
    if (rt.Malloc(&buf, mib * MIB) != cudaSuccess) {
        printf("FAIL: cudaMalloc of %u MiB\n", mib);
        return 1;
    }
    printf("holding %u MiB, pid %d\n", mib, (int)getpid());
    fflush(stdout);
    sleep(60);
    return 0;
}

static int run_noserver(void)
{
    unsigned count = 99;
    CHECK_RC(nvml.Init_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
    CHECK_RC(nvml.InitWithFlags(NVML_INIT_FLAG_NO_GPUS), NVML_SUCCESS);
    CHECK_RC(nvml.DeviceGetCount_v2(&count), NVML_SUCCESS);
    CHECK(count == 0, "%u devices without a server", count);
    CHECK_RC(nvml.Shutdown(), NVML_SUCCESS);
    printf("nvml: no server: nvmlInit_v2 %s\n", nvml.ErrorString(NVML_ERROR_DRIVER_NOT_LOADED));
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    load();
    if (argc == 3 && strcmp(argv[1], "hold") == 0)
        return run_hold((unsigned)atoi(argv[2]));
    if (argc == 2 && strcmp(argv[1], "noserver") == 0)
        run_noserver();
    else
        run_query();
    if (failures == 0)
        printf("PASS nvml_query\n");
    return failures == 0 ? 0 : 1;
}
