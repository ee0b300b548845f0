/* crm_init.c -- load and unload of libcudarem.so: logging level, the reservation of
 * the emulated-device address window, the driver's and NVML's library names, the
 * CUDAREM_STATS report at exit and the cudaremGetStats counters export. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "client/crm_conn.h"
#include "client/crm_managed.h"
#include "client/crm_managed_fault.h"
#include "common/crm_emu_window.h"
#include "common/crm_log.h"
#include "interpose/crm_export.h"
#include "interpose/crm_fallback.h"

void *crm_dlopen_real(const char *path, int mode); /* interpose/crm_dlopen.c */

/* Takes the driver's and NVML's library names for the shim: loads the empty
 * stand-ins in lib/ beside it (interpose/crm_loader_stub.c), so a library loaded
 * later with DT_NEEDED libcuda.so.1 binds to the shim even on a client without a
 * driver, and a client's own driver is never loaded. Without them, nothing breaks:
 * dlopen of those names reaches the shim anyway (interpose/crm_dlopen.c). */
static void crm__take_library_names(void)
{
    static const char *const names[] = {"libcuda.so.1", "libnvidia-ml.so.1"};
    Dl_info self;
    if (dladdr((void *)crm__take_library_names, &self) == 0 || self.dli_fname == NULL)
        return;
    const char *slash = strrchr(self.dli_fname, '/');
    int dirlen = slash != NULL ? (int)(slash - self.dli_fname) : 1;
    const char *dir = slash != NULL ? self.dli_fname : ".";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%.*s/lib/%s", dirlen, dir, names[i]);
        if (crm_dlopen_real(path, RTLD_NOW | RTLD_GLOBAL) == NULL)
            crm_debug("no loader stand-in %s: a library linked against %s will look for it", path, names[i]);
    }
}

__attribute__((constructor)) static void crm__load(void)
{
    const char *level = getenv("CUDAREM_LOG_LEVEL");
    int lvl = level ? crm_log_parse_level(level) : -1;
    crm_log_init("cudarem", lvl >= 0 ? (enum crm_log_level)lvl : CRM_LOG_WARN);
    /* Emulated device pointers live in this window on the server (in one slot per
     * server of a pool); reserving it here means they can never alias (or be
     * dereferenced as) host memory of ours. */
    void *w = mmap((void *)CRM_EMU_WINDOW_BASE, CRM_EMU_SPAN, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (w == MAP_FAILED)
        crm_debug("could not reserve the emulated-device address window");
    crm_managed_window_note(w == (void *)CRM_EMU_WINDOW_BASE);
    crm__take_library_names();
}

static void crm__write_stats(const char *where, const crm_conn_stats *s)
{
    char by_call[2048]; /* names are letters, digits and '_': safe inside a JSON string */
    crm_managed_stats m;
    crm_conn_round_trips_by_call(by_call, sizeof by_call);
    crm_managed_get_stats(&m);
    if (strcmp(where, "1") == 0 || strcmp(where, "stderr") == 0) {
        fprintf(stderr,
                "cudarem: stats: round_trips=%llu calls=%llu bytes_h2d=%llu bytes_d2h=%llu channel_bytes=%llu "
                "ring_bytes=%llu pinned_bytes=%llu nvidia_calls=%llu synced_here=%llu posts=%llu queued_bytes=%llu\n",
                (unsigned long long)s->round_trips, (unsigned long long)s->calls,
                (unsigned long long)s->bytes_h2d, (unsigned long long)s->bytes_d2h,
                (unsigned long long)s->channel_bytes, (unsigned long long)s->ring_bytes,
                (unsigned long long)s->pinned_bytes,
                (unsigned long long)__atomic_load_n(&crm_fallback_calls, __ATOMIC_RELAXED),
                (unsigned long long)s->calls_answered_here, (unsigned long long)s->posts,
                (unsigned long long)s->queued_bytes);
        fprintf(stderr, "cudarem: stats: round trips by call: %s\n", by_call);
        fprintf(stderr,
                "cudarem: stats: managed memory: faults=%llu fetches=%llu fetched_bytes=%llu pushes=%llu "
                "pushed_bytes=%llu\n",
                (unsigned long long)m.faults, (unsigned long long)m.fetches, (unsigned long long)m.fetched_bytes,
                (unsigned long long)m.pushes, (unsigned long long)m.pushed_bytes);
        return;
    }
    FILE *f = fopen(where, "w");
    if (f == NULL)
        return;
    fprintf(f,
            "{\"round_trips\": %llu, \"calls\": %llu, \"bytes_h2d\": %llu, \"bytes_d2h\": %llu, "
            "\"channel_bytes\": %llu, \"ring_bytes\": %llu, \"pinned_bytes\": %llu, \"nvidia_calls\": %llu, "
            "\"synced_here\": %llu, \"posts\": %llu, \"queued_bytes\": %llu, \"round_trips_by_call\": \"%s\", "
            "\"managed_faults\": %llu, \"managed_fetches\": %llu, \"managed_fetched_bytes\": %llu, "
            "\"managed_pushes\": %llu, \"managed_pushed_bytes\": %llu}\n",
            (unsigned long long)s->round_trips, (unsigned long long)s->calls,
            (unsigned long long)s->bytes_h2d, (unsigned long long)s->bytes_d2h,
            (unsigned long long)s->channel_bytes, (unsigned long long)s->ring_bytes,
            (unsigned long long)s->pinned_bytes,
            (unsigned long long)__atomic_load_n(&crm_fallback_calls, __ATOMIC_RELAXED),
            (unsigned long long)s->calls_answered_here, (unsigned long long)s->posts,
            (unsigned long long)s->queued_bytes, by_call, (unsigned long long)m.faults,
            (unsigned long long)m.fetches, (unsigned long long)m.fetched_bytes, (unsigned long long)m.pushes,
            (unsigned long long)m.pushed_bytes);
    fclose(f);
}

/* cudaremGetStats -- the client's counters for programs that report their own cost
 * (examples/train.py): round trips, calls, bulk bytes sent and received, in that
 * order: queued calls count once they have been sent. Returns 0, or -1 when out
 * is NULL. */
CRM_EXPORT int cudaremGetStats(unsigned long long out[4])
{
    crm_conn_stats s;
    if (out == NULL)
        return -1;
    crm_conn_get_stats(&s);
    out[0] = s.round_trips;
    out[1] = s.calls;
    out[2] = s.bytes_h2d;
    out[3] = s.bytes_d2h;
    return 0;
}

/* cudaremGetRoundTripsByCall -- the round trips so far by the call each waited for,
 * as "name=count name=count ..." (largest first; "flush" is queued work sent on its
 * own), NUL-terminated and cut to len. Returns the length of the whole text. */
CRM_EXPORT size_t cudaremGetRoundTripsByCall(char *buf, size_t len)
{
    return crm_conn_round_trips_by_call(buf, buf != NULL ? len : 0);
}

__attribute__((destructor)) static void crm__unload(void)
{
    crm_conn_flush(); /* queued work runs, as it would on a local GPU */
    const char *where = getenv("CUDAREM_STATS");
    if (where != NULL && *where != '\0') {
        crm_conn_stats s;
        crm_conn_get_stats(&s);
        /* Wrappers and helper processes preloaded too must not overwrite the file. */
        if (s.calls > 0 || strcmp(where, "1") == 0 || strcmp(where, "stderr") == 0)
            crm__write_stats(where, &s);
    }
}
