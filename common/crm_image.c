/* crm_image.c -- kind, size and contents of a device code image (crm_image.h). Every
 * length is checked against the bytes the caller says may be read. */
#include <stdint.h>
#include <string.h>
#include "common/crm_image.h"

#define CRM__ELF_HDR 64

static uint64_t crm__get(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

enum crm_image_kind crm_image_kind(const void *data, size_t maxlen)
{
    const unsigned char *p = data;
    if (p == NULL || maxlen < 8)
        return CRM_IMAGE_NONE;
    uint32_t magic = (uint32_t)crm__get(p, 4);
    if (magic == CRM_FATBIN_MAGIC)
        return CRM_IMAGE_FATBIN;
    if (magic == CRM_FATBIN_WRAPPER_MAGIC && maxlen >= 24)
        return CRM_IMAGE_WRAPPER;
    if (memcmp(p, "\177ELF", 4) == 0 && p[4] == 2 /* 64-bit */ && maxlen >= CRM__ELF_HDR)
        return CRM_IMAGE_ELF;
    /* PTX starts with comments or directives; a version directive comes first. */
    size_t n = strnlen((const char *)p, maxlen < 65536 ? maxlen : 65536);
    const char *v = memmem(p, n, ".version", 8);
    return v != NULL && memmem(p, n, ".target", 7) != NULL ? CRM_IMAGE_PTX : CRM_IMAGE_NONE;
}

/* End of the furthest section or program header table entry of an ELF image. */
static size_t crm__elf_size(const unsigned char *p, size_t maxlen)
{
    uint64_t shoff = crm__get(p + 40, 8), phoff = crm__get(p + 32, 8);
    uint64_t shentsize = crm__get(p + 58, 2), shnum = crm__get(p + 60, 2);
    uint64_t phentsize = crm__get(p + 54, 2), phnum = crm__get(p + 56, 2);
    uint64_t end = CRM__ELF_HDR;
    if (shentsize < 64 || phnum * phentsize > maxlen || shnum * shentsize > maxlen || shoff > maxlen ||
        phoff > maxlen)
        return 0;
    if (shoff + shnum * shentsize > end)
        end = shoff + shnum * shentsize;
    if (phoff + phnum * phentsize > end)
        end = phoff + phnum * phentsize;
    if (end > maxlen)
        return 0;
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *s = p + shoff + i * shentsize;
        uint64_t type = crm__get(s + 4, 4), off = crm__get(s + 24, 8), size = crm__get(s + 32, 8);
        if (type != 8 /* SHT_NOBITS */ && off <= maxlen && size <= maxlen - off && off + size > end)
            end = off + size;
    }
    return end <= maxlen ? (size_t)end : 0;
}

size_t crm_image_size(const void *data, size_t maxlen, const void **inner)
{
    const unsigned char *p = data;
    *inner = data;
    switch (crm_image_kind(data, maxlen)) {
    case CRM_IMAGE_FATBIN:
        return crm_fatbin_size(data, maxlen);
    case CRM_IMAGE_WRAPPER: {
        const void *fatbin;
        memcpy(&fatbin, p + 8, sizeof fatbin);
        *inner = fatbin;
        return fatbin != NULL ? crm_fatbin_size(fatbin, CRM_FATBIN_MAX) : 0;
    }
    case CRM_IMAGE_ELF:
        return crm__elf_size(p, maxlen);
    case CRM_IMAGE_PTX: {
        size_t n = strnlen((const char *)p, maxlen);
        return n < maxlen ? n + 1 : 0; /* the NUL is part of the image */
    }
    default:
        return 0;
    }
}

int crm_image_check(const void *data, size_t len)
{
    const void *inner;
    enum crm_image_kind kind = crm_image_kind(data, len);
    if (kind == CRM_IMAGE_NONE || kind == CRM_IMAGE_WRAPPER)
        return -1;
    return crm_image_size(data, len, &inner) == len ? 0 : -1;
}

int crm_module_info_from_image(const void *data, size_t len, crm_module_info *out, char *err, size_t errlen)
{
    switch (crm_image_kind(data, len)) {
    case CRM_IMAGE_FATBIN:
        return crm_module_info_parse(data, len, out, err, errlen);
    case CRM_IMAGE_ELF:
        return crm_module_info_from_elf(data, len, out, err, errlen);
    case CRM_IMAGE_PTX:
        return crm_module_info_from_ptx(data, len, out, err, errlen);
    default:
        if (errlen > 0)
            strncpy(err, "not a fatbinary, cubin or PTX image", errlen - 1), err[errlen - 1] = '\0';
        return -1;
    }
}
