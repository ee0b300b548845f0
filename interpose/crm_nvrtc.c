/* crm_nvrtc.c -- NVRTC for programs linked against it (the libnvrtc.so.13 version
 * node exports these names; every other nvrtc* call binds to NVIDIA's library).
 * A program that compiles a kernel to machine code (nvrtcGetCUBIN for sm_XX) and
 * loads it gets code the emulated device cannot run; so, when the server is the
 * emulated device, the program's compilation is replayed here into PTX (the same
 * source, headers, name expressions and options, the architecture made virtual:
 * compute_XX) and the PTX is kept beside the cubin (client/crm_cubin_ptx.h), which
 * the module shipped for that cubin then carries. Everything else is NVIDIA's
 * NVRTC, called as the program called it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nvrtc.h>

#include "client/crm_cubin_ptx.h"
#include "client/crm_modules.h"
#include "common/crm_log.h"
#include "interpose/crm_export.h"

#define CRM__NVRTC_VERSION "libnvrtc.so.13"

/* What the program gave one program object, to compile it again. */
typedef struct crm__prog {
    nvrtcProgram prog;
    char *src, *name;
    int nheaders;
    char **headers, **include_names;
    int nexprs;
    char **exprs;
    int nopts;
    char **opts;             /* of the last compilation */
    struct crm__prog *next;
} crm__prog;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm__prog *crm__progs;

/* NVIDIA's function `name`, or NULL. */
static void *crm__real(const char *name)
{
    void *fn = dlvsym(RTLD_NEXT, name, CRM__NVRTC_VERSION);
    return fn != NULL ? fn : dlsym(RTLD_NEXT, name);
}

#define CRM__REAL(fn, type) ((type)crm__real(#fn))

static char *crm__dup(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

/* A copy of n strings (entries may be NULL); NULL when n is 0 or memory runs out. */
static char **crm__dup_all(int n, const char *const *v)
{
    char **out = n > 0 && v != NULL ? calloc((size_t)n, sizeof *out) : NULL;
    for (int i = 0; out != NULL && i < n; i++)
        out[i] = crm__dup(v[i]);
    return out;
}

static void crm__free_all(int n, char **v)
{
    for (int i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

static void crm__prog_free(crm__prog *p)
{
    free(p->src);
    free(p->name);
    crm__free_all(p->nheaders, p->headers);
    crm__free_all(p->nheaders, p->include_names);
    crm__free_all(p->nexprs, p->exprs);
    crm__free_all(p->nopts, p->opts);
    free(p);
}

/* The record of prog; lock held. */
static crm__prog *crm__find(nvrtcProgram prog)
{
    for (crm__prog *p = crm__progs; p != NULL; p = p->next)
        if (p->prog == prog)
            return p;
    return NULL;
}

typedef nvrtcResult (*crm__create_fn)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                      const char *const *);

CRM_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int numHeaders,
                                          const char *const *headers, const char *const *includeNames)
{
    crm__create_fn real = CRM__REAL(nvrtcCreateProgram, crm__create_fn);
    if (real == NULL)
        return NVRTC_ERROR_INTERNAL_ERROR;
    nvrtcResult rc = real(prog, src, name, numHeaders, headers, includeNames);
    if (rc != NVRTC_SUCCESS || prog == NULL || src == NULL)
        return rc;
    crm__prog *p = calloc(1, sizeof *p);
    if (p == NULL)
        return rc; /* nothing to replay: the cubin alone, as without cudarem */
    p->prog = *prog;
    p->src = crm__dup(src);
    p->name = crm__dup(name);
    p->nheaders = numHeaders > 0 ? numHeaders : 0;
    p->headers = crm__dup_all(p->nheaders, headers);
    p->include_names = crm__dup_all(p->nheaders, includeNames);
    pthread_mutex_lock(&crm__lock);
    p->next = crm__progs;
    crm__progs = p;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CRM_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    typedef nvrtcResult (*fn_t)(nvrtcProgram *);
    fn_t real = CRM__REAL(nvrtcDestroyProgram, fn_t);
    if (real == NULL)
        return NVRTC_ERROR_INTERNAL_ERROR;
    if (prog != NULL) {
        pthread_mutex_lock(&crm__lock);
        for (crm__prog **at = &crm__progs; *at != NULL; at = &(*at)->next)
            if ((*at)->prog == *prog) {
                crm__prog *gone = *at;
                *at = gone->next;
                crm__prog_free(gone);
                break;
            }
        pthread_mutex_unlock(&crm__lock);
    }
    return real(prog);
}

CRM_EXPORT nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char *const name_expression)
{
    typedef nvrtcResult (*fn_t)(nvrtcProgram, const char *const);
    fn_t real = CRM__REAL(nvrtcAddNameExpression, fn_t);
    if (real == NULL)
        return NVRTC_ERROR_INTERNAL_ERROR;
    nvrtcResult rc = real(prog, name_expression);
    pthread_mutex_lock(&crm__lock);
    crm__prog *p = rc == NVRTC_SUCCESS && name_expression != NULL ? crm__find(prog) : NULL;
    char **grown = p != NULL ? realloc(p->exprs, (size_t)(p->nexprs + 1) * sizeof *grown) : NULL;
    if (grown != NULL) {
        p->exprs = grown;
        p->exprs[p->nexprs++] = crm__dup(name_expression);
    }
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CRM_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
    typedef nvrtcResult (*fn_t)(nvrtcProgram, int, const char *const *);
    fn_t real = CRM__REAL(nvrtcCompileProgram, fn_t);
    if (real == NULL)
        return NVRTC_ERROR_INTERNAL_ERROR;
    pthread_mutex_lock(&crm__lock);
    crm__prog *p = crm__find(prog);
    if (p != NULL) {
        crm__free_all(p->nopts, p->opts);
        p->nopts = numOptions > 0 ? numOptions : 0;
        p->opts = crm__dup_all(p->nopts, options);
    }
    pthread_mutex_unlock(&crm__lock);
    return real(prog, numOptions, options);
}

/* The options with every real architecture made virtual (sm_90 -> compute_90, in
 * `-arch=`, `--gpu-architecture=` and the two-word forms); caller frees. */
static char **crm__virtual_options(const crm__prog *p)
{
    char **out = calloc((size_t)p->nopts + 1, sizeof *out);
    for (int i = 0; out != NULL && i < p->nopts; i++) {
        const char *o = p->opts[i] != NULL ? p->opts[i] : "";
        const char *sm = strstr(o, "sm_");
        int arch = strncmp(o, "-arch", 5) == 0 || strncmp(o, "--gpu-architecture", 18) == 0 ||
                   (i > 0 && p->opts[i - 1] != NULL &&
                    (strcmp(p->opts[i - 1], "-arch") == 0 || strcmp(p->opts[i - 1], "--gpu-architecture") == 0));
        size_t n = strlen(o) + 8;
        out[i] = malloc(n);
        if (out[i] == NULL)
            continue;
        if (arch && sm != NULL)
            snprintf(out[i], n, "%.*scompute_%s", (int)(sm - o), o, sm + 3);
        else
            snprintf(out[i], n, "%s", o);
    }
    return out;
}

/* Compiles p again into PTX and keeps it beside cubin[0..len). */
static void crm__keep_ptx(const crm__prog *p, const char *cubin, size_t len)
{
    typedef nvrtcResult (*compile_fn)(nvrtcProgram, int, const char *const *);
    typedef nvrtcResult (*size_fn)(nvrtcProgram, size_t *);
    typedef nvrtcResult (*get_fn)(nvrtcProgram, char *);
    typedef nvrtcResult (*expr_fn)(nvrtcProgram, const char *const);
    typedef nvrtcResult (*destroy_fn)(nvrtcProgram *);
    crm__create_fn create = CRM__REAL(nvrtcCreateProgram, crm__create_fn);
    compile_fn compile = CRM__REAL(nvrtcCompileProgram, compile_fn);
    size_fn ptx_size = CRM__REAL(nvrtcGetPTXSize, size_fn);
    get_fn get_ptx = CRM__REAL(nvrtcGetPTX, get_fn);
    expr_fn add_expr = CRM__REAL(nvrtcAddNameExpression, expr_fn);
    destroy_fn destroy = CRM__REAL(nvrtcDestroyProgram, destroy_fn);
    nvrtcProgram again = NULL;
    size_t n = 0;
    char *ptx = NULL, **opts = crm__virtual_options(p);
    int ok = create != NULL && compile != NULL && ptx_size != NULL && get_ptx != NULL && add_expr != NULL &&
             destroy != NULL && opts != NULL &&
             create(&again, p->src, p->name, p->nheaders, (const char *const *)p->headers,
                    (const char *const *)p->include_names) == NVRTC_SUCCESS;
    for (int i = 0; ok && i < p->nexprs; i++)
        ok = add_expr(again, p->exprs[i]) == NVRTC_SUCCESS;
    ok = ok && compile(again, p->nopts, (const char *const *)opts) == NVRTC_SUCCESS &&
         ptx_size(again, &n) == NVRTC_SUCCESS && n > 0 && (ptx = malloc(n)) != NULL &&
         get_ptx(again, ptx) == NVRTC_SUCCESS;
    if (ok)
        ok = crm_cubin_ptx_note(cubin, len, ptx, strnlen(ptx, n)) == 0;
    if (!ok)
        crm_warn("NVRTC program %s: its PTX could not be made beside its cubin; the emulated device cannot "
                 "run the cubin's kernels", p->name != NULL ? p->name : "(unnamed)");
    else
        crm_debug("NVRTC program %s: %zu bytes of PTX kept beside its %zu-byte cubin", p->name ? p->name : "",
                  n, len);
    free(ptx);
    crm__free_all(p->nopts + 1, opts);
    if (again != NULL)
        destroy(&again);
}

CRM_EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin)
{
    typedef nvrtcResult (*get_fn)(nvrtcProgram, char *);
    typedef nvrtcResult (*size_fn)(nvrtcProgram, size_t *);
    get_fn real = CRM__REAL(nvrtcGetCUBIN, get_fn);
    size_fn size = CRM__REAL(nvrtcGetCUBINSize, size_fn);
    size_t len = 0;
    if (real == NULL || size == NULL)
        return NVRTC_ERROR_INTERNAL_ERROR;
    nvrtcResult rc = real(prog, cubin);
    if (rc != NVRTC_SUCCESS || cubin == NULL || size(prog, &len) != NVRTC_SUCCESS || len == 0 ||
        !crm_modules_server_runs_ptx())
        return rc;
    pthread_mutex_lock(&crm__lock); /* held while compiling: programs compile once, seldom from many threads */
    crm__prog *p = crm__find(prog);
    if (p != NULL && crm_cubin_ptx_find(cubin, len, NULL) == NULL)
        crm__keep_ptx(p, cubin, len);
    pthread_mutex_unlock(&crm__lock);
    return rc;
}
