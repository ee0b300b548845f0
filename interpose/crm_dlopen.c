/* crm_dlopen.c -- makes programs that load the CUDA libraries by name (ctypes,
 * frameworks) reach the shim: dlopen of any libcudart.so*, libcublas.so*,
 * libcublasLt.so*, libcudnn.so*, libcuda.so* (the driver), libnvidia-ml.so* or
 * libnvJitLink.so* (interpose/crm_nvjitlink.c) returns this library. Names are matched as prefixes of the file name: "libcublas.so"
 * is no prefix of "libcublasLt.so.13", which has its own entry.
 * Both glibc versions of dlopen are interposed (GLIBC_2.2.5 and GLIBC_2.34). */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef void *(*crm__dlopen_fn)(const char *file, int mode);

static const char *const crm__our_libraries[] = {"libcudart.so", "libcublas.so", "libcublasLt.so", "libcudnn.so",
                                                 "libcuda.so", "libnvidia-ml.so", "libnvJitLink.so"};

static int crm__is_ours(const char *file)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    for (size_t i = 0; i < sizeof crm__our_libraries / sizeof crm__our_libraries[0]; i++)
        if (strncmp(base, crm__our_libraries[i], strlen(crm__our_libraries[i])) == 0)
            return 1;
    return 0;
}

static const char *crm__self_path(void)
{
    static Dl_info info;
    if (info.dli_fname == NULL)
        dladdr((void *)&crm__is_ours, &info);
    return info.dli_fname;
}

static crm__dlopen_fn crm__real_dlopen(void)
{
    static crm__dlopen_fn real;
    if (real == NULL)
        real = (crm__dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    return real;
}

/* glibc's own dlopen, which the shim uses to load NVIDIA's libraries by path
 * (interpose/crm_fallback.c) without being redirected to itself. */
void *crm_dlopen_real(const char *path, int mode)
{
    return crm__real_dlopen()(path, mode);
}

/* Rewrites *file when it names one of ours; returns glibc's dlopen. */
__attribute__((visibility("hidden"))) void *crm_dlopen_prepare(const char **file)
{
    if (*file != NULL && crm__is_ours(*file))
        *file = crm__self_path();
    return (void *)crm__real_dlopen();
}

/* The interposer jumps to glibc's dlopen with the caller's return address still on
 * the stack: glibc then sees the original caller, whose RUNPATH governs the search
 * (libnvrtc finds libnvrtc-builtins beside itself so), in every build flavour
 * (a C tail call is not guaranteed: sanitizers keep the frame). */
__asm__(".text\n"
        ".globl crm_dlopen\n.type crm_dlopen, @function\n"
        ".globl crm_dlopen_old\n.type crm_dlopen_old, @function\n"
        "crm_dlopen:\n"
        "crm_dlopen_old:\n"
        "    subq $24, %rsp\n"            /* entry %rsp is 8 mod 16: now 0 mod 16 */
        "    movq %rdi, 0(%rsp)\n"
        "    movq %rsi, 8(%rsp)\n"
        "    movq %rsp, %rdi\n"
        "    call crm_dlopen_prepare@PLT\n"
        "    movq 0(%rsp), %rdi\n"
        "    movq 8(%rsp), %rsi\n"
        "    addq $24, %rsp\n"
        "    jmp *%rax\n"
        ".size crm_dlopen, .-crm_dlopen\n"
        ".size crm_dlopen_old, .-crm_dlopen_old\n");

__asm__(".symver crm_dlopen, dlopen@@GLIBC_2.34");
__asm__(".symver crm_dlopen_old, dlopen@GLIBC_2.2.5");
