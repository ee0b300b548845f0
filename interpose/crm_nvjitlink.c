/* crm_nvjitlink.c -- nvJitLink for programs that load it by name (cuda.core's
 * linker, numba-cuda; interpose/crm_dlopen.c returns the shim for libnvJitLink.so*,
 * and the libnvJitLink.so.13 version node exports these names). When the server
 * runs the emulated device, whose PTX engine needs PTX, a link of one PTX input
 * keeps that PTX as its result, and a link-time-optimised link of LTO-IR (what
 * numba-cuda makes) is made by NVIDIA's nvJitLink into PTX (-ptx), which is kept:
 * the module the program then loads carries PTX. Every other link, and every link
 * for a GPU server, is handed, options and inputs replayed, to NVIDIA's nvJitLink
 * on the client (the newest found: LTO-IR needs one at least as new as the NVVM
 * that made it); without it a one-PTX link keeps its PTX (the GPU's driver compiles it),
 * and others fail with NVJITLINK_ERROR_INTERNAL, saying why in the error log. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The toolkit's header defines each call as a static inline wrapper of a
 * versioned symbol; its types are used, its wrappers renamed out of the way. */
#define nvJitLinkCreate crm__hdr_create
#define nvJitLinkDestroy crm__hdr_destroy
#define nvJitLinkAddData crm__hdr_add_data
#define nvJitLinkAddFile crm__hdr_add_file
#define nvJitLinkComplete crm__hdr_complete
#define nvJitLinkGetLinkedCubinSize crm__hdr_cubin_size
#define nvJitLinkGetLinkedCubin crm__hdr_cubin
#define nvJitLinkGetLinkedPtxSize crm__hdr_ptx_size
#define nvJitLinkGetLinkedPtx crm__hdr_ptx
#define nvJitLinkGetErrorLogSize crm__hdr_error_size
#define nvJitLinkGetErrorLog crm__hdr_error
#define nvJitLinkGetInfoLogSize crm__hdr_info_size
#define nvJitLinkGetInfoLog crm__hdr_info
#include <nvJitLink.h>
#undef nvJitLinkCreate
#undef nvJitLinkDestroy
#undef nvJitLinkAddData
#undef nvJitLinkAddFile
#undef nvJitLinkComplete
#undef nvJitLinkGetLinkedCubinSize
#undef nvJitLinkGetLinkedCubin
#undef nvJitLinkGetLinkedPtxSize
#undef nvJitLinkGetLinkedPtx
#undef nvJitLinkGetErrorLogSize
#undef nvJitLinkGetErrorLog
#undef nvJitLinkGetInfoLogSize
#undef nvJitLinkGetInfoLog

#include "client/crm_conn.h"
#include "common/crm_log.h"
#include "interpose/crm_export.h"

typedef struct crm__input {
    nvJitLinkInputType type;
    char *data;                   /* its bytes (a file's, read at AddFile) */
    size_t size;
    char *name;
} crm__input;

/* A link: its options and inputs until it completes, then its result: the PTX
 * kept (ptx), or NVIDIA's link it was handed to (real). */
typedef struct crm__link {
    char **options;
    uint32_t noptions;
    crm__input *inputs;
    size_t ninputs;
    nvJitLinkHandle real;
    char *ptx;                    /* NUL-terminated */
    size_t ptx_size;              /* with the NUL */
    char error[256];
} crm__link;

typedef nvJitLinkResult (*crm__create_fn)(nvJitLinkHandle *, uint32_t, const char **);
typedef nvJitLinkResult (*crm__add_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
typedef nvJitLinkResult (*crm__one_fn)(nvJitLinkHandle);
typedef nvJitLinkResult (*crm__ptr_fn)(nvJitLinkHandle *);
typedef nvJitLinkResult (*crm__size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*crm__get_fn)(nvJitLinkHandle, void *);

void *crm_dlopen_real(const char *path, int mode); /* interpose/crm_dlopen.c */

typedef struct crm__pick {
    void *handle;                 /* the newest nvJitLink found so far */
    unsigned version;             /* its major * 1000 + minor */
    char self[PATH_MAX];          /* the shim's own file: never a candidate */
} crm__pick;

/* Loads dir/libnvJitLink.so.13 and keeps it when newer than the pick so far:
 * LTO-IR from a newer NVVM needs a nvJitLink at least as new. */
static void crm__consider(crm__pick *p, const char *dir, size_t len)
{
    typedef nvJitLinkResult (*version_fn)(unsigned int *, unsigned int *);
    char path[PATH_MAX], real[PATH_MAX];
    unsigned major = 0, minor = 0;
    if (len == 0 || len + 20 > sizeof path)
        return;
    snprintf(path, sizeof path, "%.*s/libnvJitLink.so.13", (int)len, dir);
    if (realpath(path, real) == NULL || strcmp(real, p->self) == 0)
        return;
    void *h = crm_dlopen_real(real, RTLD_NOW | RTLD_LOCAL);
    version_fn version = h != NULL ? (version_fn)dlsym(h, "nvJitLinkVersion") : NULL;
    if (version == NULL || version(&major, &minor) != NVJITLINK_SUCCESS || major * 1000 + minor <= p->version) {
        if (h != NULL && h != p->handle)
            dlclose(h);
        return;
    }
    p->handle = h;
    p->version = major * 1000 + minor;
}

/* The directories of the loaded CUDA libraries (a program's NVVM, NVRTC, wheels). */
static int crm__loaded_dir(struct dl_phdr_info *info, size_t size, void *data)
{
    const char *name = info->dlpi_name, *slash = name != NULL ? strrchr(name, '/') : NULL;
    (void)size;
    if (slash != NULL && (strstr(name, "/nvidia/") || strstr(name, "libnvvm") || strstr(name, "libnvrtc")))
        crm__consider(data, name, (size_t)(slash - name));
    return 0;
}

static crm__pick crm__found;
static pthread_once_t crm__found_once = PTHREAD_ONCE_INIT;

/* The newest of CUDAREM_NVIDIA_LIBS's, the loaded CUDA libraries' directories',
 * CUDA_HOME's and /usr/local/cuda's into *p; none with CUDAREM_FALLBACK=off. */
static void crm__scan(crm__pick *p)
{
    const char *mode = getenv("CUDAREM_FALLBACK"), *list = getenv("CUDAREM_NVIDIA_LIBS"), *home = getenv("CUDA_HOME");
    Dl_info self;
    char dir[PATH_MAX];
    if (mode != NULL && strcmp(mode, "off") == 0)
        return;
    if (!dladdr((void *)crm__scan, &self) || self.dli_fname == NULL || realpath(self.dli_fname, p->self) == NULL)
        p->self[0] = '\0';
    while (list != NULL && *list != '\0') {
        const char *end = strchr(list, ':');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        crm__consider(p, list, len);
        list = end ? end + 1 : NULL;
    }
    dl_iterate_phdr(crm__loaded_dir, p);
    if (home != NULL) {
        snprintf(dir, sizeof dir, "%s/lib64", home);
        crm__consider(p, dir, strlen(dir));
    }
    crm__consider(p, "/usr/local/cuda/lib64", strlen("/usr/local/cuda/lib64"));
}

/* Chosen at the first link (a program's NVVM is loaded by then). */
static void crm__find(void)
{
    crm__scan(&crm__found);
    if (crm__found.handle != NULL)
        crm_info("links cudarem does not keep as PTX go to NVIDIA's nvJitLink %u.%u", crm__found.version / 1000,
                 crm__found.version % 1000);
}

/* NVIDIA's nvJitLink, found once, or NULL. */
static void *crm__nvidia(void)
{
    pthread_once(&crm__found_once, crm__find);
    return crm__found.handle;
}

static void *crm__real(const char *name)
{
    void *h = crm__nvidia();
    return h != NULL ? dlsym(h, name) : NULL;
}

static crm__link *crm__of(nvJitLinkHandle h)
{
    return (crm__link *)(void *)h;
}

CRM_EXPORT nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle);

CRM_EXPORT nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions, const char **options)
{
    if (handle == NULL || (numOptions > 0 && options == NULL))
        return NVJITLINK_ERROR_NULL_INPUT;
    crm__link *l = calloc(1, sizeof *l);
    if (l == NULL || (numOptions > 0 && (l->options = calloc(numOptions, sizeof *l->options)) == NULL)) {
        free(l);
        return NVJITLINK_ERROR_INTERNAL;
    }
    *handle = (nvJitLinkHandle)(void *)l;
    for (uint32_t i = 0; i < numOptions; i++)
        if (options[i] != NULL && (l->options[l->noptions++] = strdup(options[i])) == NULL) {
            nvJitLinkDestroy(handle);
            return NVJITLINK_ERROR_INTERNAL;
        }
    return NVJITLINK_SUCCESS;
}

static nvJitLinkResult crm__keep(crm__link *l, nvJitLinkInputType type, const void *data, size_t size,
                                 const char *name)
{
    crm__input *in = realloc(l->inputs, (l->ninputs + 1) * sizeof *in);
    if (in == NULL)
        return NVJITLINK_ERROR_INTERNAL;
    l->inputs = in;
    in = &l->inputs[l->ninputs];
    in->type = type;
    in->size = size;
    in->data = malloc(size ? size : 1);
    in->name = strdup(name != NULL ? name : "");
    if (in->data == NULL || in->name == NULL) {
        free(in->data);
        free(in->name);
        return NVJITLINK_ERROR_INTERNAL;
    }
    memcpy(in->data, data, size);
    l->ninputs++;
    return NVJITLINK_SUCCESS;
}

CRM_EXPORT nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle handle, nvJitLinkInputType inputType, const void *data,
                                            size_t size, const char *name)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || data == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL || l->ptx != NULL)
        return NVJITLINK_ERROR_INVALID_INPUT;
    return crm__keep(l, inputType, data, size, name);
}

CRM_EXPORT nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle handle, nvJitLinkInputType inputType, const char *fileName)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || fileName == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    FILE *f = fopen(fileName, "rb");
    if (f == NULL)
        return NVJITLINK_ERROR_INVALID_INPUT;
    char *buf = NULL;
    size_t size = 0, cap = 0, got;
    do {
        char *grown = size == cap ? realloc(buf, cap = cap ? cap * 2 : 65536) : buf;
        if (grown == NULL)
            break;
        buf = grown;
        got = fread(buf + size, 1, cap - size, f);
        size += got;
    } while (got > 0);
    fclose(f);
    nvJitLinkResult rc = buf != NULL ? crm__keep(l, inputType, buf, size, fileName) : NVJITLINK_ERROR_INTERNAL;
    free(buf);
    return rc;
}

static int crm__has_option(const crm__link *l, const char *prefix)
{
    for (uint32_t i = 0; i < l->noptions; i++)
        if (strncmp(l->options[i], prefix, strlen(prefix)) == 0)
            return 1;
    return 0;
}

static int crm__is_ptx(const crm__input *in)
{
    return in->type == NVJITLINK_INPUT_PTX ||
           (in->type == NVJITLINK_INPUT_ANY && in->size > 8 && memmem(in->data, in->size, ".version", 8) != NULL);
}

/* One PTX input and no link-time optimisation: the PTX is the link. */
static int crm__one_ptx(const crm__link *l)
{
    return l->ninputs == 1 && !crm__has_option(l, "-lto") && crm__is_ptx(&l->inputs[0]);
}

/* Every input LTO-IR, linked with -lto (numba-cuda's kernels): NVIDIA's nvJitLink
 * can give the optimised program as PTX (-ptx). */
static int crm__all_ltoir(const crm__link *l)
{
    if (l->ninputs == 0 || !crm__has_option(l, "-lto"))
        return 0;
    for (size_t i = 0; i < l->ninputs; i++)
        if (l->inputs[i].type != NVJITLINK_INPUT_LTOIR)
            return 0;
    return 1;
}

/* Keeps text[0..len) as the link's PTX result. */
static nvJitLinkResult crm__keep_ptx(crm__link *l, const char *text, size_t len)
{
    len = strnlen(text, len);
    if ((l->ptx = malloc(len + 1)) == NULL)
        return NVJITLINK_ERROR_INTERNAL;
    memcpy(l->ptx, text, len);
    l->ptx[len] = '\0';
    l->ptx_size = len + 1;
    return NVJITLINK_SUCCESS;
}

/* Hands the link to NVIDIA's nvJitLink: its options (and `extra`, when not NULL)
 * and inputs, then its Complete. */
static nvJitLinkResult crm__hand_over(crm__link *l, const char *extra)
{
    crm__create_fn create = (crm__create_fn)crm__real("nvJitLinkCreate");
    crm__add_fn add = (crm__add_fn)crm__real("nvJitLinkAddData");
    crm__one_fn complete = (crm__one_fn)crm__real("nvJitLinkComplete");
    const char **options = calloc(l->noptions + 1, sizeof *options);
    if (create == NULL || add == NULL || complete == NULL || options == NULL) {
        free(options);
        snprintf(l->error, sizeof l->error, "cudarem: this link needs NVIDIA's nvJitLink, which this client lacks");
        crm_warn("%s", l->error);
        return NVJITLINK_ERROR_INTERNAL;
    }
    for (uint32_t i = 0; i < l->noptions; i++)
        options[i] = l->options[i];
    if (extra != NULL)
        options[l->noptions] = extra;
    nvJitLinkResult rc = create(&l->real, l->noptions + (extra != NULL), options);
    free(options);
    for (size_t i = 0; rc == NVJITLINK_SUCCESS && i < l->ninputs; i++)
        rc = add(l->real, l->inputs[i].type, l->inputs[i].data, l->inputs[i].size, l->inputs[i].name);
    return rc == NVJITLINK_SUCCESS ? complete(l->real) : rc;
}

static void crm__drop_real(crm__link *l)
{
    crm__ptr_fn destroy = l->real != NULL ? (crm__ptr_fn)crm__real("nvJitLinkDestroy") : NULL;
    if (destroy != NULL)
        destroy(&l->real);
    l->real = NULL;
}

/* An LTO link made by NVIDIA's nvJitLink into PTX, kept; -1 when it could not be
 * (the caller then links to machine code). */
static int crm__lto_to_ptx(crm__link *l)
{
    crm__size_fn size_of = (crm__size_fn)crm__real("nvJitLinkGetLinkedPtxSize");
    crm__get_fn get = (crm__get_fn)crm__real("nvJitLinkGetLinkedPtx");
    size_t size = 0;
    char *text = NULL;
    int ok = size_of != NULL && get != NULL && crm__hand_over(l, "-ptx") == NVJITLINK_SUCCESS &&
             size_of(l->real, &size) == NVJITLINK_SUCCESS && size > 0 && (text = malloc(size)) != NULL &&
             get(l->real, text) == NVJITLINK_SUCCESS && crm__keep_ptx(l, text, size) == NVJITLINK_SUCCESS;
    free(text);
    crm__drop_real(l);
    return ok ? 0 : -1;
}

/* Whether the session's server runs the emulated device, whose engine needs PTX
 * (a GPU server gets NVIDIA's link unchanged). */
static int crm__server_needs_ptx(void)
{
    crm_session_info info;
    return crm_conn_session(&info) == cudaSuccess && strcmp(info.backend, "emu") == 0;
}

CRM_EXPORT nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle)
{
    crm__link *l = crm__of(handle);
    if (l == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL || l->ptx != NULL)
        return NVJITLINK_SUCCESS;
    int one_ptx = crm__one_ptx(l);
    if (crm__server_needs_ptx()) {
        if (one_ptx)
            return crm__keep_ptx(l, l->inputs[0].data, l->inputs[0].size);
        if (crm__all_ltoir(l) && crm__lto_to_ptx(l) == 0)
            return NVJITLINK_SUCCESS;
    } else if (one_ptx && crm__real("nvJitLinkCreate") == NULL) { /* the GPU's driver compiles it */
        return crm__keep_ptx(l, l->inputs[0].data, l->inputs[0].size);
    }
    return crm__hand_over(l, NULL);
}

/* A size query: NVIDIA's answer for a handed-over link, else what was kept. */
static nvJitLinkResult crm__size(nvJitLinkHandle handle, const char *real_name, size_t *size, size_t kept)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || size == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL) {
        crm__size_fn f = (crm__size_fn)crm__real(real_name);
        return f != NULL ? f(l->real, size) : NVJITLINK_ERROR_INTERNAL;
    }
    *size = kept;
    return NVJITLINK_SUCCESS;
}

static nvJitLinkResult crm__copy(nvJitLinkHandle handle, const char *real_name, void *out, const char *kept,
                                 size_t size)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || out == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL) {
        crm__get_fn f = (crm__get_fn)crm__real(real_name);
        return f != NULL ? f(l->real, out) : NVJITLINK_ERROR_INTERNAL;
    }
    memcpy(out, kept, size);
    return NVJITLINK_SUCCESS;
}

/* The kept PTX is the linked "cubin": the module the program loads from it carries PTX. */
CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubinSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL && l->ptx == NULL)
        return NVJITLINK_ERROR_INVALID_INPUT; /* not completed */
    return crm__size(handle, "nvJitLinkGetLinkedCubinSize", size, l != NULL ? l->ptx_size : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubin(nvJitLinkHandle handle, void *cubin)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL && l->ptx == NULL)
        return NVJITLINK_ERROR_INVALID_INPUT;
    return crm__copy(handle, "nvJitLinkGetLinkedCubin", cubin, l != NULL ? l->ptx : NULL, l != NULL ? l->ptx_size : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtxSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL)
        return nvJitLinkGetLinkedCubinSize(handle, size);
    return crm__size(handle, "nvJitLinkGetLinkedPtxSize", size, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtx(nvJitLinkHandle handle, char *ptx)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL)
        return nvJitLinkGetLinkedCubin(handle, ptx);
    return crm__copy(handle, "nvJitLinkGetLinkedPtx", ptx, NULL, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetErrorLogSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    return crm__size(handle, "nvJitLinkGetErrorLogSize", size, l != NULL ? strlen(l->error) + 1 : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetErrorLog(nvJitLinkHandle handle, char *log)
{
    crm__link *l = crm__of(handle);
    return crm__copy(handle, "nvJitLinkGetErrorLog", log, l != NULL ? l->error : NULL,
                     l != NULL ? strlen(l->error) + 1 : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetInfoLogSize(nvJitLinkHandle handle, size_t *size)
{
    return crm__size(handle, "nvJitLinkGetInfoLogSize", size, 1);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetInfoLog(nvJitLinkHandle handle, char *log)
{
    return crm__copy(handle, "nvJitLinkGetInfoLog", log, "", 1);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedLTOIRSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    return l != NULL && l->real == NULL ? NVJITLINK_ERROR_LTO_NOT_ENABLED
                                        : crm__size(handle, "nvJitLinkGetLinkedLTOIRSize", size, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedLTOIR(nvJitLinkHandle handle, void *ltoir)
{
    crm__link *l = crm__of(handle);
    return l != NULL && l->real == NULL ? NVJITLINK_ERROR_LTO_NOT_ENABLED
                                        : crm__copy(handle, "nvJitLinkGetLinkedLTOIR", ltoir, NULL, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle)
{
    if (handle == NULL || *handle == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    crm__link *l = crm__of(*handle);
    crm__ptr_fn destroy = l->real != NULL ? (crm__ptr_fn)crm__real("nvJitLinkDestroy") : NULL;
    if (destroy != NULL)
        destroy(&l->real);
    for (uint32_t i = 0; i < l->noptions; i++)
        free(l->options[i]);
    for (size_t i = 0; i < l->ninputs; i++) {
        free(l->inputs[i].data);
        free(l->inputs[i].name);
    }
    free(l->options);
    free(l->inputs);
    free(l->ptx);
    free(l);
    *handle = NULL;
    return NVJITLINK_SUCCESS;
}

/* The newest NVIDIA nvJitLink's version, looked up now without choosing it (a
 * program asks before it loads its NVVM), else that of the toolkit cudarem was
 * built against (13.0). */
CRM_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int *major, unsigned int *minor)
{
    crm__pick p = {.handle = NULL};
    if (major == NULL || minor == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    crm__scan(&p);
    *major = p.handle != NULL ? p.version / 1000 : 13;
    *minor = p.handle != NULL ? p.version % 1000 : 0;
    if (p.handle != NULL) /* the library stays loaded while the chosen one holds it */
        dlclose(p.handle);
    return NVJITLINK_SUCCESS;
}
