/* crm_cubin.c -- reads a CUDA ELF cubin: its kernels (FUNC symbols marked as entry
 * points), each kernel's parameter layout from its .nv.info.<kernel> section
 * (EIATTR_KPARAM_INFO and _V2 records: ordinal, offset, size), and its
 * __device__/__constant__ globals (OBJECT symbols in .nv.global* and .nv.constantN
 * sections, with their initial data when the section has bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_fatbin.h"

#define CRM__SHT_SYMTAB 2
#define CRM__SHT_NOBITS 8
#define CRM__STT_OBJECT 1
#define CRM__STT_FUNC 2
#define CRM__STO_CUDA_ENTRY 0x10
#define CRM__EIATTR_PARAM_CBANK 0x0a
#define CRM__EIATTR_KPARAM_INFO 0x17
#define CRM__EIATTR_CBANK_PARAM_SIZE 0x19
#define CRM__EIATTR_KPARAM_INFO_V2 0x45
#define CRM__EIFMT_NVAL 1
#define CRM__EIFMT_SVAL 4
#define CRM__MAX_PARAMS 4096
#define CRM__MAX_PARAM_BYTES 65536

/* Section header fields we use. */
typedef struct crm__sec {
    uint32_t name, type, link;
    uint64_t offset, size;
} crm__sec;

typedef struct crm__elf {
    const unsigned char *d;
    size_t len;
    uint64_t shoff;
    unsigned shnum, shentsize, shstrndx;
} crm__elf;

static uint32_t crm__u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t crm__u64(const unsigned char *p)
{
    return (uint64_t)crm__u32(p) | (uint64_t)crm__u32(p + 4) << 32;
}

static void crm__get_sec(const crm__elf *e, unsigned i, crm__sec *s)
{
    const unsigned char *p = e->d + e->shoff + (uint64_t)i * e->shentsize;
    s->name = crm__u32(p);
    s->type = crm__u32(p + 4);
    s->offset = crm__u64(p + 24);
    s->size = crm__u64(p + 32);
    s->link = crm__u32(p + 40);
}

/* 1 when the section's bytes lie inside the file (NOBITS sections have none). */
static int crm__sec_ok(const crm__elf *e, const crm__sec *s)
{
    return s->type == CRM__SHT_NOBITS || (s->offset <= e->len && s->size <= e->len - s->offset);
}

/* NUL-terminated string at off of string section idx, or NULL. */
static const char *crm__str(const crm__elf *e, unsigned idx, uint64_t off)
{
    crm__sec s;
    if (idx >= e->shnum)
        return NULL;
    crm__get_sec(e, idx, &s);
    if (s.type == CRM__SHT_NOBITS || !crm__sec_ok(e, &s) || off >= s.size)
        return NULL;
    const char *p = (const char *)e->d + s.offset + off;
    return memchr(p, '\0', s.size - off) ? p : NULL;
}

static const char *crm__sec_name(const crm__elf *e, const crm__sec *s)
{
    return crm__str(e, e->shstrndx, s->name);
}

static int crm__open(crm__elf *e, const void *data, size_t len, char *err, size_t errlen)
{
    const unsigned char *d = data;
    memset(e, 0, sizeof *e);
    if (len < 64 || memcmp(d, "\177ELF", 4) != 0 || d[4] != 2 || d[5] != 1) {
        snprintf(err, errlen, "not a 64-bit little-endian ELF image");
        return -1;
    }
    e->d = d;
    e->len = len;
    e->shoff = crm__u64(d + 0x28);
    e->shentsize = (unsigned)(d[0x3a] | d[0x3b] << 8);
    e->shnum = (unsigned)(d[0x3c] | d[0x3d] << 8);
    e->shstrndx = (unsigned)(d[0x3e] | d[0x3f] << 8);
    if (e->shentsize < 64 || e->shoff > len || (uint64_t)e->shnum * e->shentsize > len - e->shoff ||
        e->shstrndx >= e->shnum) {
        snprintf(err, errlen, "ELF section table out of bounds");
        return -1;
    }
    return 0;
}

/* Index of the section called name, or -1. */
static int crm__find_sec(const crm__elf *e, const char *name, crm__sec *out)
{
    for (unsigned i = 0; i < e->shnum; i++) {
        crm__get_sec(e, i, out);
        const char *n = crm__sec_name(e, out);
        if (n != NULL && strcmp(n, name) == 0 && crm__sec_ok(e, out))
            return (int)i;
    }
    return -1;
}

/* Records parameter `ord` of kernel k; -1 when it contradicts an earlier record. */
static int crm__set_param(crm_kernel_info *k, uint32_t ord, uint32_t off, uint32_t size)
{
    if (ord >= CRM__MAX_PARAMS || size == 0 || size > CRM__MAX_PARAM_BYTES || off > CRM__MAX_PARAM_BYTES - size)
        return -1;
    if (ord >= k->nparams) {
        crm_kparam_info *p = realloc(k->params, (ord + 1) * sizeof *p);
        if (p == NULL)
            return -1;
        for (uint32_t i = k->nparams; i <= ord; i++)
            p[i] = (crm_kparam_info){0, 0};
        k->params = p;
        k->nparams = ord + 1;
    }
    crm_kparam_info *p = &k->params[ord];
    if (p->size != 0 && (p->offset != off || p->size != size))
        return -1;
    *p = (crm_kparam_info){off, size};
    return 0;
}

/* One attribute record of .nv.info.<kernel>. */
static int crm__attr(crm_kernel_info *k, int attr, const unsigned char *v, size_t vlen, uint32_t *cbank)
{
    if ((attr == CRM__EIATTR_KPARAM_INFO || attr == CRM__EIATTR_KPARAM_INFO_V2) && vlen >= 12) {
        uint32_t ord = (uint32_t)(v[4] | v[5] << 8), off = (uint32_t)(v[6] | v[7] << 8), w = crm__u32(v + 8);
        uint32_t size = attr == CRM__EIATTR_KPARAM_INFO ? (w >> 18) & 0x3fff : w;
        return crm__set_param(k, ord, off, size);
    }
    if (attr == CRM__EIATTR_PARAM_CBANK && vlen >= 8)
        *cbank = (uint32_t)(v[6] | v[7] << 8);
    return 0;
}

/* Checks the layout: every ordinal present, parameters inside the buffer. */
static int crm__finish_layout(crm_kernel_info *k, uint32_t cbank)
{
    uint32_t end = 0;
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (k->params[i].size == 0)
            return -1;
        if (k->params[i].offset + k->params[i].size > end)
            end = k->params[i].offset + k->params[i].size;
    }
    if (cbank != 0 && end > cbank)
        return -1;
    k->param_bytes = end;
    return 0;
}

/* Parses the .nv.info.<name> section of kernel k, when there is one. */
static int crm__kernel_layout(const crm__elf *e, crm_kernel_info *k, char *err, size_t errlen)
{
    char secname[4200];
    crm__sec s;
    uint32_t cbank = 0, hsize = 0;
    if ((size_t)snprintf(secname, sizeof secname, ".nv.info.%s", k->name) >= sizeof secname)
        return 0;
    if (crm__find_sec(e, secname, &s) < 0 || s.type == CRM__SHT_NOBITS)
        return 0;
    const unsigned char *p = e->d + s.offset, *end = p + s.size;
    while (end - p >= 4) {
        int fmt = p[0], attr = p[1];
        size_t vlen = fmt == CRM__EIFMT_SVAL ? (size_t)(p[2] | p[3] << 8) : 2;
        if (fmt < CRM__EIFMT_NVAL || fmt > CRM__EIFMT_SVAL || (fmt == CRM__EIFMT_SVAL && vlen > (size_t)(end - p - 4)))
            goto bad;
        if (fmt == CRM__EIFMT_SVAL && crm__attr(k, attr, p + 4, vlen, &cbank) != 0)
            goto bad;
        if (fmt != CRM__EIFMT_SVAL && attr == CRM__EIATTR_CBANK_PARAM_SIZE)
            hsize = (uint32_t)(p[2] | p[3] << 8);
        p += fmt == CRM__EIFMT_SVAL ? 4 + vlen : 4;
    }
    if (crm__finish_layout(k, cbank ? cbank : hsize) == 0)
        return 0;
bad:
    snprintf(err, errlen, "bad parameter information for kernel %.200s", k->name);
    return -1;
}

/* Appends one element to a growing array of `size`-byte items. */
static void *crm__push(void **arr, size_t *n, size_t size)
{
    char *a = realloc(*arr, (*n + 1) * size);
    if (a == NULL)
        return NULL;
    *arr = a;
    memset(a + *n * size, 0, size);
    return a + (*n)++ * size;
}

static int crm__add_kernel(const crm__elf *e, crm_module_info *m, const char *name, char *err, size_t errlen)
{
    if (crm_module_info_kernel(m, name) != NULL)
        return 0;
    crm_kernel_info *k = crm__push((void **)&m->kernels, &m->nkernels, sizeof *k);
    if (k == NULL || (k->name = strdup(name)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return crm__kernel_layout(e, k, err, errlen);
}

/* A global in a data section: its size and, when the section has bytes, its data. */
static int crm__add_global(const crm__elf *e, crm_module_info *m, const char *name, unsigned shndx, uint64_t value,
                           uint64_t size, char *err, size_t errlen)
{
    crm__sec s;
    if (shndx == 0 || shndx >= e->shnum || size == 0 || crm_module_info_global(m, name) != NULL)
        return 0;
    crm__get_sec(e, shndx, &s);
    const char *sn = crm__sec_name(e, &s);
    int constant = sn != NULL && strncmp(sn, ".nv.constant", 12) == 0 && strncmp(sn, ".nv.constant0", 13) != 0;
    if (sn == NULL || !(constant || strncmp(sn, ".nv.global", 10) == 0))
        return 0;
    if (!crm__sec_ok(e, &s) || value > s.size || size > s.size - value || size > CRM_FATBIN_MAX) {
        snprintf(err, errlen, "global %.200s lies outside its section", name);
        return -1;
    }
    crm_global_info *g = crm__push((void **)&m->globals, &m->nglobals, sizeof *g);
    if (g == NULL || (g->name = strdup(name)) == NULL)
        goto oom;
    g->size = size;
    g->constant = constant;
    if (s.type != CRM__SHT_NOBITS) {
        if ((g->init = malloc(size)) == NULL)
            goto oom;
        memcpy(g->init, e->d + s.offset + value, size);
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

static int crm__symbols(const crm__elf *e, const crm__sec *sym, crm_module_info *m, char *err, size_t errlen)
{
    if (!crm__sec_ok(e, sym) || sym->type == CRM__SHT_NOBITS) {
        snprintf(err, errlen, "ELF symbol table out of bounds");
        return -1;
    }
    for (uint64_t off = 0; off + 24 <= sym->size; off += 24) {
        const unsigned char *p = e->d + sym->offset + off;
        const char *name = crm__str(e, sym->link, crm__u32(p));
        int type = p[4] & 0xf;
        unsigned shndx = (unsigned)(p[6] | p[7] << 8);
        if (name == NULL || *name == '\0')
            continue;
        int rc = 0;
        if (type == CRM__STT_FUNC && (p[5] & CRM__STO_CUDA_ENTRY))
            rc = crm__add_kernel(e, m, name, err, errlen);
        else if (type == CRM__STT_OBJECT)
            rc = crm__add_global(e, m, name, shndx, crm__u64(p + 8), crm__u64(p + 16), err, errlen);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int crm_module_info_from_elf(const void *elf, size_t len, crm_module_info *out, char *err, size_t errlen)
{
    crm__elf e;
    crm__sec s;
    memset(out, 0, sizeof *out);
    if (crm__open(&e, elf, len, err, errlen) != 0)
        return -1;
    for (unsigned i = 0; i < e.shnum; i++) {
        crm__get_sec(&e, i, &s);
        if (s.type == CRM__SHT_SYMTAB && crm__symbols(&e, &s, out, err, errlen) != 0) {
            crm_module_info_free(out);
            return -1;
        }
    }
    out->has_elf = 1;
    return 0;
}
