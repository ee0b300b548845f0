/* crm_log.c -- leveled logging: one line per message, tag and pid first. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/crm_log.h"

static const char *crm__tag = "cudarem";
static enum crm_log_level crm__level = CRM_LOG_WARN;
static const char *const crm__names[] = {"error", "warn", "info", "debug"};

void crm_log_init(const char *tag, enum crm_log_level level)
{
    crm__tag = tag;
    crm__level = level;
}

int crm_log_parse_level(const char *name)
{
    for (int i = 0; i < (int)(sizeof crm__names / sizeof crm__names[0]); i++)
        if (strcmp(name, crm__names[i]) == 0)
            return i;
    return -1;
}

void crm_log(enum crm_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (level > crm__level)
        return;
    int n = snprintf(line, sizeof line, "%s[%d]: %s: ", crm__tag, (int)getpid(), crm__names[level]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    /* One write() per line so lines from several processes do not interleave. */
    ssize_t rc = write(STDERR_FILENO, line, strlen(line));
    (void)rc;
}
