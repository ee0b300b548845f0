/* crm_fallback.c -- finding NVIDIA's runtime on the client and resolving the
 * runtime calls cudarem hands to it (crm_fallback.h), and the slow path of the
 * generated trampolines.
 *
 * Where NVIDIA's libcudart.so.13 is looked for: the directories of
 * CUDAREM_NVIDIA_LIBS (colon-separated), the directories NVIDIA libraries the
 * program loaded came from (the torch and CuPy wheels bring libcudart beside
 * them), $CUDA_HOME/lib64, /usr/local/cuda/lib64. It is loaded by path, privately
 * (RTLD_LOCAL), so it never answers a call the shim implements; its own dlopen of
 * libcuda.so.1 reaches the shim's driver. */
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

#define CRM__RUNTIME "libcudart.so.13"

void *crm_dlopen_real(const char *path, int mode); /* interpose/crm_dlopen.c */

uint64_t crm_fallback_calls;
unsigned char crm_fallback_is_nvidia[CRM_FALLBACK_MAX];

static pthread_once_t crm__once = PTHREAD_ONCE_INIT;
static void *crm__lib;                 /* NVIDIA's runtime, or NULL */
static char crm__path[PATH_MAX];

/* Tries dir/libcudart.so.13; 1 when it loaded. */
static int crm__try_dir(const char *dir, size_t len)
{
    char path[PATH_MAX];
    if (len == 0 || len + sizeof CRM__RUNTIME + 1 > sizeof path)
        return 0;
    snprintf(path, sizeof path, "%.*s/%s", (int)len, dir, CRM__RUNTIME);
    char real[PATH_MAX];
    if (access(path, R_OK) != 0 || realpath(path, real) == NULL)
        return 0;
    Dl_info self;
    char self_real[PATH_MAX];
    if (dladdr((void *)crm__try_dir, &self) && self.dli_fname && realpath(self.dli_fname, self_real) &&
        strcmp(real, self_real) == 0)
        return 0; /* build/lib/libcudart.so.13 is the shim itself */
    void *h = crm_dlopen_real(real, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL || dlsym(h, "cudaGetDeviceCount") == NULL) {
        crm_debug("fallback: %s is not a usable CUDA runtime: %s", real, h ? "no cudaGetDeviceCount" : dlerror());
        return 0;
    }
    crm__lib = h;
    snprintf(crm__path, sizeof crm__path, "%s", real);
    return 1;
}

/* Each directory of a colon-separated list; 1 when one served. */
static int crm__try_list(const char *list)
{
    while (list != NULL && *list != '\0') {
        const char *end = strchr(list, ':');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (crm__try_dir(list, len))
            return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

/* The directory of every loaded NVIDIA library (a path naming libcublas,
 * libcudnn, libnvrtc or an "nvidia" wheel), one per call. */
static int crm__phdr_dir(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name;
    if (name == NULL || *name != '/' ||
        (!strstr(name, "/nvidia/") && !strstr(name, "libcublas") && !strstr(name, "libnvrtc") &&
         !strstr(name, "libcudnn")))
        return 0;
    const char *slash = strrchr(name, '/');
    return crm__try_dir(name, (size_t)(slash - name)) ? *(int *)data = 1 : 0;
}

static void crm__locate(void)
{
    const char *mode = getenv("CUDAREM_FALLBACK");
    if (mode != NULL && strcmp(mode, "off") == 0)
        return;
    int found = crm__try_list(getenv("CUDAREM_NVIDIA_LIBS"));
    if (!found)
        dl_iterate_phdr(crm__phdr_dir, &found);
    const char *home = getenv("CUDA_HOME");
    char dir[PATH_MAX];
    if (!found && home != NULL) {
        snprintf(dir, sizeof dir, "%s/lib64", home);
        found = crm__try_dir(dir, strlen(dir));
    }
    if (!found)
        found = crm__try_dir("/usr/local/cuda/lib64", strlen("/usr/local/cuda/lib64"));
    if (found)
        crm_info("runtime calls cudarem does not remote go to NVIDIA's runtime %s", crm__path);
    else
        crm_debug("no NVIDIA runtime on this client: runtime calls cudarem does not remote are not supported");
}

const char *crm_fallback_library(void)
{
    pthread_once(&crm__once, crm__locate);
    return crm__lib != NULL ? crm__path : NULL;
}

void *crm_fallback_resolve(unsigned idx)
{
    void *target = NULL;
    if (idx >= crm_fallback_count)
        abort(); /* only generated trampolines call here, with their own index */
    if (crm_fallback_library() != NULL)
        target = dlsym(crm__lib, crm_fallback_names[idx]);
    if (target != NULL) {
        crm_info("%s: handed to NVIDIA's runtime (%s)", crm_fallback_names[idx], crm__path);
        crm_fallback_is_nvidia[idx] = 1; /* the trampoline counts its later calls */
        __atomic_fetch_add(&crm_fallback_calls, 1, __ATOMIC_RELAXED);
    } else {
        target = crm_fallback_unsupported[idx];
    }
    __atomic_store_n(&crm_fallback_slots[idx], target, __ATOMIC_RELEASE);
    return target;
}

/* The slow path every trampoline jumps to with its index in %r11 when its slot is
 * empty: saves the argument registers (integer, vector, and %rax, the vector count
 * of a variadic call), resolves, restores them and jumps to the target. On entry
 * %rsp is 8 mod 16 (the caller's return address); 7 pushes make it 0, as the call
 * needs. */
__asm__(".text\n"
        ".globl crm_fallback_slow\n"
        ".hidden crm_fallback_slow\n"
        ".type crm_fallback_slow, @function\n"
        "crm_fallback_slow:\n"
        "    pushq %rdi\n    pushq %rsi\n    pushq %rdx\n    pushq %rcx\n"
        "    pushq %r8\n    pushq %r9\n    pushq %rax\n"
        "    subq $128, %rsp\n"
        "    movdqu %xmm0, 0(%rsp)\n    movdqu %xmm1, 16(%rsp)\n    movdqu %xmm2, 32(%rsp)\n"
        "    movdqu %xmm3, 48(%rsp)\n    movdqu %xmm4, 64(%rsp)\n    movdqu %xmm5, 80(%rsp)\n"
        "    movdqu %xmm6, 96(%rsp)\n    movdqu %xmm7, 112(%rsp)\n"
        "    movl %r11d, %edi\n"
        "    call crm_fallback_resolve@PLT\n"
        "    movq %rax, %r11\n"
        "    movdqu 0(%rsp), %xmm0\n    movdqu 16(%rsp), %xmm1\n    movdqu 32(%rsp), %xmm2\n"
        "    movdqu 48(%rsp), %xmm3\n    movdqu 64(%rsp), %xmm4\n    movdqu 80(%rsp), %xmm5\n"
        "    movdqu 96(%rsp), %xmm6\n    movdqu 112(%rsp), %xmm7\n"
        "    addq $128, %rsp\n"
        "    popq %rax\n    popq %r9\n    popq %r8\n    popq %rcx\n"
        "    popq %rdx\n    popq %rsi\n    popq %rdi\n"
        "    jmp *%r11\n"
        ".size crm_fallback_slow, .-crm_fallback_slow\n");
