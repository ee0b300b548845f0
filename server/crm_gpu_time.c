/* crm_gpu_time.c -- a session's kernel time on a GPU from NVML's process samples
 * (server/crm_gpu_time.h): pure arithmetic, unit-tested. */
#include "server/crm_gpu_time.h"

/* The index of the oldest sample of pid newer than after, or -1. */
static int crm__next(const nvmlProcessUtilizationSample_t *s, unsigned n, unsigned pid, unsigned long long after)
{
    int best = -1;
    for (unsigned i = 0; i < n; i++)
        if (s[i].pid == pid && s[i].timeStamp > after && (best < 0 || s[i].timeStamp < s[best].timeStamp))
            best = (int)i;
    return best;
}

uint64_t crm_gpu_time_from_samples(const nvmlProcessUtilizationSample_t *s, unsigned n, unsigned pid,
                                   unsigned long long *last_seen)
{
    uint64_t ns = 0;
    unsigned long long at = *last_seen, newest = *last_seen;
    for (unsigned i = 0; i < n; i++)
        if (s[i].timeStamp > newest)
            newest = s[i].timeStamp;
    for (int i; (i = crm__next(s, n, pid, at)) >= 0; at = s[i].timeStamp) {
        unsigned long long span = at != 0 ? s[i].timeStamp - at : 0; /* the first look has no start */
        if (span > CRM_GPU_TIME_SAMPLE_MAX_US)
            span = CRM_GPU_TIME_SAMPLE_MAX_US; /* a sample speaks for its own period, not an idle gap */
        ns += (uint64_t)span * 10u * (s[i].smUtil <= 100 ? s[i].smUtil : 100);
    }
    *last_seen = newest;
    return ns;
}
