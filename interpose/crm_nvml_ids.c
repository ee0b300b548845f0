/* crm_nvml_ids.c -- NVML's spellings of device ids: UUID strings, PCI bus ids both
 * ways, and its rule for copying strings into caller buffers. Pure functions. */
#include "interpose/crm_nvml.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int crm_nvml_format_uuid(const unsigned char b[16], char *buf, size_t len)
{
    return snprintf(buf, len,
                    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                    b[13], b[14], b[15]);
}

int crm_nvml_format_bus_id(unsigned domain, unsigned bus, unsigned device, int legacy, char *buf, size_t len)
{
    return snprintf(buf, len, legacy ? "%04X:%02X:%02X.0" : "%08X:%02X:%02X.0", domain, bus, device);
}

/* Parses one hexadecimal field of at most `digits` digits ending at one of `ends`
 * (or the string's end when ends includes '\0'); advances *s past it. */
static int crm__hex_field(const char **s, int digits, const char *ends, unsigned long *out)
{
    const char *p = *s;
    int n = 0;
    unsigned long v = 0;
    while (isxdigit((unsigned char)*p) && n < digits) {
        v = v * 16 + (unsigned long)(isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10);
        p++;
        n++;
    }
    if (n == 0 || strchr(ends, *p) == NULL) /* strchr finds '\0' too */
        return -1;
    *s = p;
    *out = v;
    return 0;
}

int crm_nvml_parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *device, unsigned *function)
{
    unsigned long f[3], fn = 0;
    int nf = 0;
    if (s == NULL)
        return -1;
    /* Up to three colon-separated fields: [domain:]bus:device */
    while (nf < 3) {
        if (crm__hex_field(&s, 8, ":.", &f[nf]) != 0)
            return -1;
        nf++;
        if (*s != ':')
            break;
        s++;
    }
    if (nf < 2 || (*s != '.' && *s != '\0'))
        return -1;
    if (*s == '.') {
        s++;
        if (crm__hex_field(&s, 1, "", &fn) != 0)
            return -1;
    }
    unsigned long dom = nf == 3 ? f[0] : 0, b = f[nf - 2], d = f[nf - 1];
    if (b > 0xff || d > 0x1f || fn > 7)
        return -1;
    *domain = (unsigned)dom;
    *bus = (unsigned)b;
    *device = (unsigned)d;
    *function = (unsigned)fn;
    return 0;
}

nvmlReturn_t crm_nvml_copy_string(const char *src, char *buf, unsigned len)
{
    size_t n = strlen(src);
    if (buf == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (n + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, src, n + 1);
    return NVML_SUCCESS;
}
