/* crm_emu_env.c -- parsing of the emulated device's configuration variables. */
#include "server/emu/crm_emu.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Returns the shift of a binary unit suffix letter, or -1 for an unknown one. */
static int crm__unit_shift(char c)
{
    switch (toupper((unsigned char)c)) {
    case 'K': return 10;
    case 'M': return 20;
    case 'G': return 30;
    case 'T': return 40;
    default: return -1;
    }
}

int crm__emu_parse_size(const char *s, size_t *out)
{
    if (s == NULL || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    int shift = 0;
    if (*end != '\0' && toupper((unsigned char)*end) != 'B') {
        shift = crm__unit_shift(*end++);
        if (shift < 0)
            return -1;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end != '\0' || v == 0 || v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)v << shift;
    return 0;
}

int crm__emu_parse_devices(const char *s, int dflt)
{
    if (s == NULL)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return dflt;
    if (v < 1)
        return 1;
    return v > CRM_EMU_MAX_DEVICES ? CRM_EMU_MAX_DEVICES : (int)v;
}
