/* crm_log.c -- leveled logging: one line per message, tag and pid first. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
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

/* The bound of crm_log_limit: a token bucket, refilled per_second, holding at most
 * burst; under `lock` (the emulated device's threads log too). */
static pthread_mutex_t crm__bound_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int per_second, burst;
    double tokens;
    double at;               /* CLOCK_MONOTONIC seconds of the last refill */
    unsigned long dropped;   /* lines dropped since the last written */
} crm__bound;

static double crm__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void crm_log_limit(int per_second, int burst)
{
    pthread_mutex_lock(&crm__bound_lock);
    __atomic_store_n(&crm__bound.per_second, per_second, __ATOMIC_RELAXED); /* read unlocked first */
    crm__bound.burst = burst;
    crm__bound.tokens = burst;
    crm__bound.at = crm__now();
    pthread_mutex_unlock(&crm__bound_lock);
}

/* One write() per line so lines from several processes do not interleave. */
static void crm__write(const char *line)
{
    ssize_t rc = write(STDERR_FILENO, line, strlen(line));
    (void)rc;
}

/* The dropped lines' count, written; under the lock. */
static void crm__flush_dropped_locked(void)
{
    char line[200];
    if (crm__bound.dropped == 0)
        return;
    snprintf(line, sizeof line, "%s[%d]: warn: ... %lu lines of this process not logged (at most %d a second, %d at once)\n",
             crm__tag, (int)getpid(), crm__bound.dropped, crm__bound.per_second, crm__bound.burst);
    crm__bound.dropped = 0;
    crm__write(line);
}

void crm_log_flush_dropped(void)
{
    pthread_mutex_lock(&crm__bound_lock);
    crm__flush_dropped_locked();
    pthread_mutex_unlock(&crm__bound_lock);
}

/* 1 when a line may be written now (after the count of those dropped before it). */
static int crm__within_bound(void)
{
    int ok = 1;
    if (__atomic_load_n(&crm__bound.per_second, __ATOMIC_RELAXED) <= 0)
        return 1; /* the client's threads: no bound, no lock */
    pthread_mutex_lock(&crm__bound_lock);
    double now = crm__now();
    crm__bound.tokens += (now - crm__bound.at) * crm__bound.per_second;
    crm__bound.at = now;
    if (crm__bound.tokens > crm__bound.burst)
        crm__bound.tokens = crm__bound.burst;
    if (crm__bound.tokens < 1.0) {
        crm__bound.dropped++;
        ok = 0;
    } else {
        crm__bound.tokens -= 1.0;
        crm__flush_dropped_locked();
    }
    pthread_mutex_unlock(&crm__bound_lock);
    return ok;
}

void crm_log(enum crm_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (level > crm__level || !crm__within_bound())
        return;
    int n = snprintf(line, sizeof line, "%s[%d]: %s: ", crm__tag, (int)getpid(), crm__names[level]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    crm__write(line);
}

void crm_log_raw(const char *text)
{
    char line[1024];
    if (!crm__within_bound())
        return;
    snprintf(line, sizeof line - 1, "%s", text);
    size_t n = strlen(line);
    if (n == 0 || line[n - 1] != '\n')
        strcat(line, "\n");
    crm__write(line);
}
