/* crm_fatbin.c -- the fatbinary container: header, entries, decompression of
 * compressed entries (zstd frames, LZ4 raw blocks), and the choice of the image a
 * module's kernel list and parameter layouts are read from.
 *
 * Layout (little-endian), as nvcc 13 writes it:
 *   header  u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 entries_size
 *   entry   u16 kind (1 PTX, 2 ELF), u16 version, u32 header_size, u64 stored_size,
 *           u32 compressed_size, u32 -, u16 minor, u16 major, u32 arch,
 *           u32 name_offset, u32 name_len, u64 flags, u64 -, u64 raw_size
 *           followed by the stored bytes (padded to 8); entries follow each other.
 * Flag 0x2000 marks an LZ4-compressed entry, 0x8000 a zstd-compressed one.
 */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "common/crm_fatbin.h"

#define CRM__HEADER_LEN 16
#define CRM__ENTRY_MIN 64
#define CRM__FLAG_LZ4 0x2000ull
#define CRM__FLAG_ZSTD 0x8000ull
#define CRM__RAW_MAX (1ull << 30) /* largest decompressed entry */

static uint16_t crm__u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t crm__u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t crm__u64(const unsigned char *p)
{
    return (uint64_t)crm__u32(p) | (uint64_t)crm__u32(p + 4) << 32;
}

size_t crm_fatbin_size(const void *data, size_t maxlen)
{
    const unsigned char *p = data;
    if (p == NULL || maxlen < CRM__HEADER_LEN || crm__u32(p) != CRM_FATBIN_MAGIC)
        return 0;
    uint64_t hs = crm__u16(p + 6), body = crm__u64(p + 8);
    if (hs < CRM__HEADER_LEN || body > CRM_FATBIN_MAX || hs + body > maxlen)
        return 0;
    return (size_t)(hs + body);
}

/* Decodes the entry header at p (avail bytes); 0 and *entry_len, or -1. */
static int crm__entry(const unsigned char *p, size_t avail, crm_fatbin_entry *e, size_t *entry_len)
{
    if (avail < CRM__ENTRY_MIN)
        return -1;
    uint64_t hs = crm__u32(p + 4), stored = crm__u64(p + 8), csize = crm__u32(p + 16);
    if (hs < CRM__ENTRY_MIN || hs > avail || stored > avail - hs)
        return -1;
    memset(e, 0, sizeof *e);
    e->kind = crm__u16(p);
    e->arch = crm__u32(p + 28);
    e->flags = crm__u64(p + 40);
    e->payload = p + hs;
    e->payload_len = (size_t)stored;
    e->raw_len = (size_t)stored;
    if (crm_fatbin_compressed(e)) {
        if (csize != 0 && csize <= stored)
            e->payload_len = (size_t)csize;
        uint64_t raw = crm__u64(p + 56);
        if (raw == 0 || raw > CRM__RAW_MAX)
            return -1;
        e->raw_len = (size_t)raw;
    }
    *entry_len = (size_t)(hs + stored);
    return 0;
}

int crm_fatbin_entries(const void *data, size_t len, crm_fatbin_entry *out, int max)
{
    size_t total = crm_fatbin_size(data, len);
    const unsigned char *p = data;
    if (total == 0)
        return -1;
    size_t off = crm__u16(p + 6);
    int n = 0;
    while (off < total) {
        crm_fatbin_entry e;
        size_t elen;
        if (crm__entry(p + off, total - off, &e, &elen) != 0 || n == 1 << 20)
            return -1;
        if (n < max)
            out[n] = e;
        n++;
        off += elen;
    }
    return n;
}

int crm_fatbin_compressed(const crm_fatbin_entry *e)
{
    return (e->flags & (CRM__FLAG_LZ4 | CRM__FLAG_ZSTD)) != 0;
}

static int crm__inflate(const crm_fatbin_entry *e, unsigned char *dst, char *err, size_t errlen)
{
    if (e->flags & CRM__FLAG_ZSTD) {
        size_t got = ZSTD_decompress(dst, e->raw_len, e->payload, e->payload_len);
        if (ZSTD_isError(got) || got != e->raw_len) {
            snprintf(err, errlen, "bad zstd entry: %s",
                     ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size differs from the header");
            return -1;
        }
        return 0;
    }
    if (e->payload_len > (size_t)LZ4_MAX_INPUT_SIZE || e->raw_len > (size_t)INT32_MAX) {
        snprintf(err, errlen, "LZ4 entry too large");
        return -1;
    }
    int got = LZ4_decompress_safe((const char *)e->payload, (char *)dst, (int)e->payload_len, (int)e->raw_len);
    if (got < 0 || (size_t)got != e->raw_len) {
        snprintf(err, errlen, "bad LZ4 entry");
        return -1;
    }
    return 0;
}

int crm_fatbin_payload(const crm_fatbin_entry *e, unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
    unsigned char *buf = malloc(e->raw_len + 1);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!crm_fatbin_compressed(e))
        memcpy(buf, e->payload, e->raw_len);
    else if (crm__inflate(e, buf, err, errlen) != 0) {
        free(buf);
        return -1;
    }
    buf[e->raw_len] = '\0';
    *out = buf;
    *outlen = e->raw_len;
    return 0;
}

/* Index of the entry of `kind` with the highest arch, or -1. */
static int crm__best(const crm_fatbin_entry *es, int n, int kind)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (es[i].kind == kind && (best < 0 || es[i].arch > es[best].arch))
            best = i;
    return best;
}

#define CRM__MAX_ENTRIES 256

int crm_module_info_parse(const void *fatbin, size_t len, crm_module_info *out, char *err, size_t errlen)
{
    crm_fatbin_entry es[CRM__MAX_ENTRIES];
    memset(out, 0, sizeof *out);
    int n = crm_fatbin_entries(fatbin, len, es, CRM__MAX_ENTRIES);
    if (n < 0) {
        snprintf(err, errlen, "not a valid fatbinary");
        return -1;
    }
    if (n > CRM__MAX_ENTRIES)
        n = CRM__MAX_ENTRIES;
    int elf = crm__best(es, n, CRM_FATBIN_ELF), ptx = crm__best(es, n, CRM_FATBIN_PTX);
    int pick = elf >= 0 ? elf : ptx;
    if (pick < 0) {
        snprintf(err, errlen, "the fatbinary holds neither a cubin nor PTX");
        return -1;
    }
    unsigned char *img;
    size_t ilen;
    if (crm_fatbin_payload(&es[pick], &img, &ilen, err, errlen) != 0)
        return -1;
    int rc = elf >= 0 ? crm_module_info_from_elf(img, ilen, out, err, errlen)
                      : crm_module_info_from_ptx((const char *)img, ilen, out, err, errlen);
    free(img);
    out->has_elf = elf >= 0;
    out->has_ptx = ptx >= 0;
    out->arch = es[pick].arch;
    return rc;
}

/* 1 when entry e suits a device of architecture arch better than entry best (which
 * may be NULL): machine code of the same major version not newer than the device,
 * the newest such; else PTX not newer than the device, the newest such. Arch 0 is
 * a device that runs any machine code (the emulated device): the newest cubin. */
static int crm__better_for(const crm_fatbin_entry *e, const crm_fatbin_entry *best, unsigned arch)
{
    int fits = arch == 0 ? e->kind == CRM_FATBIN_PTX || e->kind == CRM_FATBIN_ELF
                         : e->arch <= arch && (e->kind == CRM_FATBIN_PTX ||
                                               (e->kind == CRM_FATBIN_ELF && e->arch / 10 == arch / 10));
    if (!fits)
        return 0;
    if (best == NULL)
        return 1;
    if (e->kind != best->kind)
        return e->kind == CRM_FATBIN_ELF;
    return e->arch > best->arch;
}

int crm_fatbin_slim(const void *fatbin, size_t len, unsigned arch, unsigned char **out, size_t *outlen)
{
    const unsigned char *p = fatbin;
    if (len == 0 || crm_fatbin_size(fatbin, len) != len) /* 0: not a fatbinary */
        return -1;
    size_t hs = crm__u16(p + 6), off = hs, best_off = 0, best_len = 0;
    crm_fatbin_entry e, best;
    int n = 0, have = 0;
    while (off < len) {
        size_t elen;
        if (crm__entry(p + off, len - off, &e, &elen) != 0)
            return -1;
        if (crm__better_for(&e, have ? &best : NULL, arch)) {
            best = e, have = 1;
            best_off = off, best_len = elen;
        }
        off += elen;
        n++;
    }
    if (!have || n == 1)
        return 1; /* nothing suits, or nothing to leave out: the whole image */
    unsigned char *slim = malloc(hs + best_len);
    if (slim == NULL)
        return -1;
    memcpy(slim, p, hs);
    memcpy(slim + hs, p + best_off, best_len);
    for (int i = 0; i < 8; i++) /* the header's entries size, little-endian */
        slim[8 + i] = (unsigned char)((uint64_t)best_len >> (8 * i));
    *out = slim;
    *outlen = hs + best_len;
    return 0;
}

void crm_module_info_free(crm_module_info *m)
{
    for (size_t i = 0; i < m->nkernels; i++) {
        free(m->kernels[i].name);
        free(m->kernels[i].params);
    }
    for (size_t i = 0; i < m->nglobals; i++) {
        free(m->globals[i].name);
        free(m->globals[i].init);
    }
    free(m->kernels);
    free(m->globals);
    memset(m, 0, sizeof *m);
}

const crm_kernel_info *crm_module_info_kernel(const crm_module_info *m, const char *name)
{
    for (size_t i = 0; name != NULL && i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0)
            return &m->kernels[i];
    return NULL;
}

const crm_global_info *crm_module_info_global(const crm_module_info *m, const char *name)
{
    for (size_t i = 0; name != NULL && i < m->nglobals; i++)
        if (strcmp(m->globals[i].name, name) == 0)
            return &m->globals[i];
    return NULL;
}
