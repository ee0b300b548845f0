/* crm_fallback.c -- finding NVIDIA's libraries on the client and resolving the
 * calls cudarem hands to them (crm_fallback.h), and the slow paths of the generated
 * trampolines.
 *
 * Where a library (libcudart.so.13, libcublas.so.13, libcudnn.so.9,
 * libcublasLt.so.13) is looked for: the directories of CUDAREM_NVIDIA_LIBS
 * (colon-separated); a copy the program loaded already (torch links NVIDIA's
 * cuBLAS, whose symbols the shim's hide); the directories other NVIDIA libraries
 * the program loaded came from (the torch and CuPy wheels bring libcudart beside
 * them); $CUDA_HOME/lib64; /usr/local/cuda/lib64. It is loaded by path, privately
 * (RTLD_LOCAL), so it never answers a call the shim implements; its
 * own dlopen of libcuda.so.1 reaches the shim's driver. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "interpose/crm_fallback.h"

void *crm_dlopen_real(const char *path, int mode);               /* interpose/crm_dlopen.c */
void *crm_blas_real_handle(void *handle);                         /* interpose/crm_blas.c */
void *crm_dnn_real_handle(void *handle);                          /* interpose/crm_dnn_handle.c */
void *crm_lt_real_handle(void *handle);                           /* interpose/crm_lt.c */

uint64_t crm_fallback_calls;
unsigned char crm_fallback_is_nvidia[CRM_FALLBACK_MAX];

typedef struct crm__nvlib {
    const char *file;          /* its SONAME and file name */
    const char *probe;         /* a function it must export */
    const char *what;          /* for the log */
    int looked;                /* located once */
    void *handle;              /* loaded, or NULL */
    char path[PATH_MAX];
} crm__nvlib;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm__nvlib crm__libs[CRM_FALLBACK_NLIBS] = {
    {"libcudart.so.13", "cudaGetDeviceCount", "runtime", 0, NULL, ""},
    {"libcublas.so.13", "cublasCreate_v2", "cuBLAS", 0, NULL, ""},
    {"libcudnn.so.9", "cudnnCreate", "cuDNN", 0, NULL, ""},
    {"libcublasLt.so.13", "cublasLtCreate", "cuBLASLt", 0, NULL, ""},
};

/* Tries dir/FILE for l; 1 when it loaded. */
static int crm__try_dir(crm__nvlib *l, const char *dir, size_t len)
{
    char path[PATH_MAX], real[PATH_MAX], self_real[PATH_MAX];
    Dl_info self;
    if (len == 0 || len + strlen(l->file) + 2 > sizeof path)
        return 0;
    snprintf(path, sizeof path, "%.*s/%s", (int)len, dir, l->file);
    if (access(path, R_OK) != 0 || realpath(path, real) == NULL)
        return 0;
    if (dladdr((void *)crm__try_dir, &self) && self.dli_fname && realpath(self.dli_fname, self_real) &&
        strcmp(real, self_real) == 0)
        return 0; /* build/lib's links of these names are the shim itself */
    void *h = crm_dlopen_real(real, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL || dlsym(h, l->probe) == NULL) {
        crm_debug("fallback: %s is not a usable %s: %s", real, l->what, h ? "a function is missing" : dlerror());
        return 0;
    }
    l->handle = h;
    snprintf(l->path, sizeof l->path, "%s", real);
    return 1;
}

/* Each directory of a colon-separated list; 1 when one served. */
static int crm__try_list(crm__nvlib *l, const char *list)
{
    while (list != NULL && *list != '\0') {
        const char *end = strchr(list, ':');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (crm__try_dir(l, list, len))
            return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

typedef struct crm__scan {
    crm__nvlib *lib;
    int own_name;              /* 1: only loaded copies of the library itself */
    int found;
} crm__scan;

/* With own_name, a loaded copy of the library; else the directory of any loaded
 * NVIDIA library (a path naming libcublas, libcudnn, libnvrtc or an "nvidia" wheel). */
static int crm__phdr_dir(struct dl_phdr_info *info, size_t size, void *data)
{
    crm__scan *sc = data;
    const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
    (void)size;
    if (slash == NULL || *name != '/')
        return 0;
    int hit = sc->own_name ? strcmp(slash + 1, sc->lib->file) == 0
                           : strstr(name, "/nvidia/") || strstr(name, "libcublas") || strstr(name, "libnvrtc") ||
                                 strstr(name, "libcudnn");
    return hit && crm__try_dir(sc->lib, name, (size_t)(slash - name)) ? (sc->found = 1) : 0;
}

static int crm__scan_loaded(crm__nvlib *l, int own_name)
{
    crm__scan sc = {l, own_name, 0};
    dl_iterate_phdr(crm__phdr_dir, &sc);
    return sc.found;
}

/* Finds library l once; lock held. */
static void crm__locate(crm__nvlib *l)
{
    const char *mode = getenv("CUDAREM_FALLBACK"), *home = getenv("CUDA_HOME");
    char dir[PATH_MAX];
    l->looked = 1;
    if (mode != NULL && strcmp(mode, "off") == 0)
        return;
    int found = crm__try_list(l, getenv("CUDAREM_NVIDIA_LIBS")) || crm__scan_loaded(l, 1) || crm__scan_loaded(l, 0);
    if (!found && home != NULL) {
        snprintf(dir, sizeof dir, "%s/lib64", home);
        found = crm__try_dir(l, dir, strlen(dir));
    }
    if (!found)
        found = crm__try_dir(l, "/usr/local/cuda/lib64", strlen("/usr/local/cuda/lib64"));
    if (found)
        crm_info("%s calls cudarem does not remote go to NVIDIA's %s", l->what, l->path);
    else
        crm_debug("no NVIDIA %s on this client: %s calls cudarem does not remote are not supported", l->what,
                  l->what);
}

static crm__nvlib *crm__lib(enum crm_fallback_lib lib)
{
    crm__nvlib *l = &crm__libs[lib];
    pthread_mutex_lock(&crm__lock);
    if (!l->looked)
        crm__locate(l);
    pthread_mutex_unlock(&crm__lock);
    return l;
}

const char *crm_fallback_library(enum crm_fallback_lib lib)
{
    crm__nvlib *l = crm__lib(lib);
    return l->handle != NULL ? l->path : NULL;
}

int crm_fallback_loaded(enum crm_fallback_lib lib)
{
    crm__nvlib *l = &crm__libs[lib];
    pthread_mutex_lock(&crm__lock);
    int loaded = l->looked && l->handle != NULL;
    pthread_mutex_unlock(&crm__lock);
    return loaded;
}

void *crm_fallback_symbol(enum crm_fallback_lib lib, const char *name)
{
    crm__nvlib *l = crm__lib(lib);
    return l->handle != NULL ? dlsym(l->handle, name) : NULL;
}

/* The target of idx, resolved once; no counting. */
static void *crm__target(unsigned idx)
{
    if (idx >= crm_fallback_count)
        abort(); /* only generated trampolines call here, with their own index */
    void *cached = __atomic_load_n(&crm_fallback_slots[idx], __ATOMIC_ACQUIRE);
    if (cached != NULL)
        return cached;
    enum crm_fallback_lib lib = (enum crm_fallback_lib)crm_fallback_lib_of[idx];
    void *target = lib == CRM_FALLBACK_NEVER ? NULL : crm_fallback_symbol(lib, crm_fallback_names[idx]);
    if (target != NULL) {
        crm_info("%s: handed to NVIDIA's %s (%s)", crm_fallback_names[idx], crm__libs[lib].what,
                 crm__libs[lib].path);
        crm_fallback_is_nvidia[idx] = 1;
    } else {
        target = crm_fallback_unsupported[idx];
    }
    __atomic_store_n(&crm_fallback_slots[idx], target, __ATOMIC_RELEASE);
    return target;
}

/* The first call of a plain trampoline (its later ones count themselves). */
void *crm_fallback_resolve(unsigned idx)
{
    void *target = crm__target(idx);
    if (crm_fallback_is_nvidia[idx])
        __atomic_fetch_add(&crm_fallback_calls, 1, __ATOMIC_RELAXED);
    return target;
}

crm_fallback_call crm_fallback_translate(unsigned idx, void *arg0)
{
    crm_fallback_call c = {crm__target(idx), arg0};
    if (!crm_fallback_is_nvidia[idx])
        return c;
    if (crm_fallback_lib_of[idx] == CRM_FALLBACK_CUBLASLT) {
        /* a handle that is not the shim's is NVIDIA's own (its cuBLAS passes the
         * ones it makes): it goes as it is; NULL: the shim's, with none of NVIDIA's */
        c.arg0 = crm_lt_real_handle(arg0);
        if (c.arg0 == NULL && arg0 != NULL) {
            c.fn = crm_fallback_unsupported[idx];
            return c;
        }
        __atomic_fetch_add(&crm_fallback_calls, 1, __ATOMIC_RELAXED);
        return c;
    }
    if (crm_fallback_lib_of[idx] == CRM_FALLBACK_CUBLAS)
        c.arg0 = crm_blas_real_handle(arg0);
    else if (crm_fallback_lib_of[idx] == CRM_FALLBACK_CUDNN)
        c.arg0 = crm_dnn_real_handle(arg0);
    if (c.arg0 == arg0 && arg0 != NULL) {
        /* no handle of NVIDIA's for it (not one of ours, or its library could not
         * make one): the shim's value must never reach NVIDIA's code */
        c.fn = crm_fallback_unsupported[idx];
        return c;
    }
    __atomic_fetch_add(&crm_fallback_calls, 1, __ATOMIC_RELAXED);
    return c;
}

/* Saving and restoring every argument register around a call: the integer ones,
 * %rax (the vector count of a variadic call) and %xmm0-7. Seven pushes after the
 * return address leave %rsp 0 mod 16, as the call needs. */
#define CRM__SAVE_ARGS                                                                      \
    "    pushq %rdi\n    pushq %rsi\n    pushq %rdx\n    pushq %rcx\n"                     \
    "    pushq %r8\n    pushq %r9\n    pushq %rax\n"                                       \
    "    subq $128, %rsp\n"                                                                 \
    "    movdqu %xmm0, 0(%rsp)\n    movdqu %xmm1, 16(%rsp)\n    movdqu %xmm2, 32(%rsp)\n"   \
    "    movdqu %xmm3, 48(%rsp)\n    movdqu %xmm4, 64(%rsp)\n    movdqu %xmm5, 80(%rsp)\n"  \
    "    movdqu %xmm6, 96(%rsp)\n    movdqu %xmm7, 112(%rsp)\n"
#define CRM__RESTORE_ARGS                                                                   \
    "    movdqu 0(%rsp), %xmm0\n    movdqu 16(%rsp), %xmm1\n    movdqu 32(%rsp), %xmm2\n"   \
    "    movdqu 48(%rsp), %xmm3\n    movdqu 64(%rsp), %xmm4\n    movdqu 80(%rsp), %xmm5\n"  \
    "    movdqu 96(%rsp), %xmm6\n    movdqu 112(%rsp), %xmm7\n"                            \
    "    addq $128, %rsp\n"                                                                 \
    "    popq %rax\n    popq %r9\n    popq %r8\n    popq %rcx\n"                           \
    "    popq %rdx\n    popq %rsi\n    popq %rdi\n"

/* The slow path every trampoline jumps to with its index in %r11 when its slot is
 * empty: saves the argument registers (integer, vector, and %rax, the vector count
 * of a variadic call), resolves, restores them and jumps to the target. On entry
 * %rsp is 8 mod 16 (the caller's return address). */
__asm__(".text\n"
        ".globl crm_fallback_slow\n"
        ".hidden crm_fallback_slow\n"
        ".type crm_fallback_slow, @function\n"
        "crm_fallback_slow:\n"
        CRM__SAVE_ARGS
        "    movl %r11d, %edi\n"
        "    call crm_fallback_resolve@PLT\n"
        "    movq %rax, %r11\n"
        CRM__RESTORE_ARGS
        "    jmp *%r11\n"
        ".size crm_fallback_slow, .-crm_fallback_slow\n");

/* The slow path of handle-translating trampolines (index in %r11): as above, but
 * crm_fallback_translate also gives the first argument (in %rdx), which replaces
 * %rdi once the others are restored. */
__asm__(".text\n"
        ".globl crm_fallback_slow_translate\n"
        ".hidden crm_fallback_slow_translate\n"
        ".type crm_fallback_slow_translate, @function\n"
        "crm_fallback_slow_translate:\n"
        CRM__SAVE_ARGS
        "    movq %rdi, %rsi\n"
        "    movl %r11d, %edi\n"
        "    call crm_fallback_translate@PLT\n"
        "    movq %rax, %r11\n"
        "    movq %rdx, %r10\n"
        CRM__RESTORE_ARGS
        "    movq %r10, %rdi\n"
        "    jmp *%r11\n"
        ".size crm_fallback_slow_translate, .-crm_fallback_slow_translate\n");
