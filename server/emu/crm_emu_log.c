/* crm_emu_log.c -- where the emulated device's messages go: the server's log, with
 * its bound on a session's lines (common/crm_log.h), once the server has named it
 * (crm_emu_set_log); standard error before, and in programs linking the library
 * themselves. */
#include "server/emu/crm_emu.h"

#include <stdarg.h>
#include <stdio.h>

static void (*crm__sink)(const char *line);

CRM_EXPORT void crm_emu_set_log(void (*sink)(const char *line))
{
    crm__sink = sink;
}

void crm__emu_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n = snprintf(line, sizeof line, "cudarem-emu: ");
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (crm__sink != NULL)
        crm__sink(line);
    else
        fprintf(stderr, "%s\n", line);
}
