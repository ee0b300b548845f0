/* crm_backend.c -- loading the execution backend and probing for a usable GPU. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "server/crm_backend.h"

crm_rt_table crm_rt;
static enum crm_backend_kind crm__kind = CRM_BACKEND_EMU;

const char *crm_backend_name(enum crm_backend_kind kind)
{
    return kind == CRM_BACKEND_CUDA ? "cuda" : "emu";
}

enum crm_backend_kind crm_backend_kind(void)
{
    return crm__kind;
}

int crm_backend_host_addressable(void)
{
    /* CUDAREM_SERVER_STAGING=1 sends emulated-device copies through the GPU
     * backend's staging path, so that path is tested on machines without a GPU. */
    static int forced = -1;
    if (forced < 0) {
        const char *v = getenv("CUDAREM_SERVER_STAGING");
        forced = v != NULL && strcmp(v, "1") == 0;
    }
    return crm__kind == CRM_BACKEND_EMU && !forced;
}

/* CUDAREM_EMU_LIB, else libcudarem-emu.so next to the server binary (the build
 * tree), else in ../lib/cudarem beside it (make install). */
static void crm__emu_path(char *path, size_t len)
{
    const char *env = getenv("CUDAREM_EMU_LIB");
    char exe[PATH_MAX];
    ssize_t n;
    if (env != NULL && *env != '\0') {
        snprintf(path, len, "%s", env);
        return;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(path, len, "libcudarem-emu.so");
        return;
    }
    exe[n] = '\0';
    const char *dir = dirname(exe);
    snprintf(path, len, "%s/libcudarem-emu.so", dir);
    if (access(path, R_OK) != 0)
        snprintf(path, len, "%s/../lib/cudarem/libcudarem-emu.so", dir);
}

/* The real libraries of the GPU backend; the emulated device exports them all. */
static const struct {
    const char *name;      /* library tag used in the API specs */
    const char *soname;    /* what the GPU backend loads */
} crm__libraries[] = {
    {"cudart", "libcudart.so.13"},
    {"cublas", "libcublas.so.13"},
    {"cudnn", "libcudnn.so.9"},
    {"cublasLt", "libcublasLt.so.13"},
    {"cuda", "libcuda.so.1"},
};

static void *crm__handles[sizeof crm__libraries / sizeof crm__libraries[0]];

static void *crm__open(enum crm_backend_kind kind, size_t which, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (kind == CRM_BACKEND_CUDA)
        snprintf(path, sizeof path, "%s", crm__libraries[which].soname);
    else
        crm__emu_path(path, sizeof path);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        snprintf(err, errlen, "cannot load %.200s: %.200s", path, dlerror());
    return lib;
}

/* Handle of library `name`, opened at first use; NULL when it cannot be loaded
 * (fatal only for the CUDA runtime itself). */
static void *crm__library(enum crm_backend_kind kind, const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof crm__libraries / sizeof crm__libraries[0]; i++) {
        if (strcmp(crm__libraries[i].name, name) != 0)
            continue;
        if (crm__handles[i] == NULL)
            crm__handles[i] = crm__open(kind, i, err, errlen);
        return crm__handles[i];
    }
    snprintf(err, errlen, "unknown library %s", name);
    return NULL;
}

/* Resolves one function; a missing CUDA runtime function is fatal, a missing
 * function of another library leaves its entry NULL. */
static int crm__resolve(enum crm_backend_kind kind, const char *lib, const char *name, void **slot, char *err,
                        size_t errlen)
{
    char why[1024] = "";
    void *h = crm__library(kind, lib, why, sizeof why);
    *slot = h ? dlsym(h, name) : NULL;
    if (*slot != NULL || strcmp(lib, "cudart") != 0) {
        if (*slot == NULL)
            crm_debug("backend %s: %s unavailable%s%s", crm_backend_name(kind), name, why[0] ? ": " : "", why);
        return 0;
    }
    snprintf(err, errlen, "backend %s lacks %s%s%s", crm_backend_name(kind), name, why[0] ? ": " : "", why);
    return -1;
}

int crm_backend_load(enum crm_backend_kind kind, char *err, size_t errlen)
{
    /* The emulated device runs each BLAS call on the session's thread; OpenBLAS's own
     * helper threads would only spin beside it, taking a core from the client. */
    if (kind == CRM_BACKEND_EMU)
        setenv("OPENBLAS_NUM_THREADS", "1", 0);
#define CRM_RT_FN(lib, name)                                                          \
    if (crm__resolve(kind, #lib, #name, (void **)&crm_rt.name, err, errlen) != 0) \
        return -1;
#include "crm_rt_fns_gen.h"
#include "server/crm_rt_manual.def"
#include "server/crm_rt_kernels.def"
#include "server/crm_rt_blas.def"
#include "server/crm_rt_dnn.def"
#include "server/crm_rt_lt.def"
#include "server/crm_rt_vmm.def"
#include "server/crm_rt_graph.def"
#undef CRM_RT_FN
    crm__kind = kind;
    if (kind == CRM_BACKEND_EMU) { /* its messages join the log, and the session's bound on it */
        void (*set_log)(void (*)(const char *)) = NULL;
        void *emu = crm__library(kind, "cudart", err, errlen);
        *(void **)&set_log = emu != NULL ? dlsym(emu, "crm_emu_set_log") : NULL;
        if (set_log != NULL)
            set_log(crm_log_raw);
    }
    return 0;
}

/* Child side of the probe: exit status 0 when device `gpu` exists. */
static void crm__probe_child(int gpu)
{
    char err[256];
    int count = 0;
    if (crm_backend_load(CRM_BACKEND_CUDA, err, sizeof err) != 0)
        _exit(2);
    cudaError_t rc = crm_rt.cudaGetDeviceCount(&count);
    if (rc != cudaSuccess)
        _exit(3);
    _exit(gpu >= 0 && gpu < count ? 0 : 4);
}

int crm_backend_probe_cuda(int gpu, char *why, size_t whylen)
{
    pid_t pid = fork();
    int status = 0;
    if (pid == 0)
        crm__probe_child(gpu);
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        snprintf(why, whylen, "cannot run the GPU probe");
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    switch (WIFEXITED(status) ? WEXITSTATUS(status) : -1) {
    case 2: snprintf(why, whylen, "libcudart.so.13 cannot be loaded"); break;
    case 3: snprintf(why, whylen, "the CUDA runtime reports no usable device or driver"); break;
    case 4: snprintf(why, whylen, "GPU %d does not exist", gpu); break;
    default: snprintf(why, whylen, "the GPU probe crashed"); break;
    }
    return 0;
}
