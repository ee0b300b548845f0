/* crm_dlopen.c -- makes programs that load the CUDA libraries by name (ctypes,
 * frameworks) reach the shim: dlopen of any libcudart.so*, libcublas.so*,
 * libcudnn.so*, libcuda.so* (the driver) or libnvidia-ml.so* returns this library
 * (not libcublasLt, whose name differs).
 * Both glibc versions of dlopen are interposed (GLIBC_2.2.5 and GLIBC_2.34). */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef void *(*crm__dlopen_fn)(const char *file, int mode);

static const char *const crm__our_libraries[] = {"libcudart.so", "libcublas.so", "libcudnn.so", "libcuda.so",
                                                 "libnvidia-ml.so"};

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

/* Written so the compiler turns the last call into a jump: glibc then sees the
 * original caller, whose RUNPATH governs the search for other libraries. */
void *crm_dlopen(const char *file, int mode)
{
    if (file != NULL && crm__is_ours(file))
        file = crm__self_path();
    return crm__real_dlopen()(file, mode);
}

void *crm_dlopen_old(const char *file, int mode)
{
    return crm_dlopen(file, mode);
}

__asm__(".symver crm_dlopen, dlopen@@GLIBC_2.34");
__asm__(".symver crm_dlopen_old, dlopen@GLIBC_2.2.5");
