/* crm_codec.c -- adaptive compression policy for bulk transfers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_codec.h"
#include "common/crm_log.h"

#define CRM_CODEC_MIN_BYTES (256u << 10) /* smaller transfers are never compressed */
#define CRM_CODEC_MEASURE_MIN (256u << 10)
#define CRM_CODEC_AUTO_LEVEL 1
#define CRM_CODEC_REPROBE 32             /* in auto mode, try compression again this often */

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static int crm__mode = -2;       /* -2 unread, -1 auto, 0 off, > 0 level */
static double crm__link_bps;     /* bytes/s on the wire, 0 = unknown */
static double crm__comp_bps;     /* compressor input bytes/s, 0 = unknown */
static double crm__ratio = 1.0;  /* wire bytes / raw bytes when compressing */
static unsigned crm__since_probe;

static int crm__read_mode(void)
{
    const char *v = getenv("CUDAREM_COMPRESS");
    if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
        return -1;
    if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
        return 0;
    if (strcmp(v, "on") == 0)
        return CRM_CODEC_AUTO_LEVEL;
    int level = atoi(v);
    if (level >= 1 && level <= CRM_ZSTD_MAX_LEVEL)
        return level;
    crm_warn("CUDAREM_COMPRESS=%s is not auto, off, on or a level 1-%d; using auto", v, CRM_ZSTD_MAX_LEVEL);
    return -1;
}

int crm_codec_decide(int mode, uint64_t bytes, double link_bps, double comp_bps, double ratio)
{
    if (mode >= 0)
        return mode;
    if (bytes < CRM_CODEC_MIN_BYTES || link_bps <= 0)
        return 0;                      /* measure the link raw first */
    if (comp_bps <= 0)
        return CRM_CODEC_AUTO_LEVEL;   /* probe the compressor */
    /* Compressing wins when the compressor outruns the link on the bytes it saves. */
    return comp_bps * (1.0 - ratio) > link_bps ? CRM_CODEC_AUTO_LEVEL : 0;
}

int crm_codec_choose(uint64_t bytes)
{
    pthread_mutex_lock(&crm__lock);
    if (crm__mode == -2)
        crm__mode = crm__read_mode();
    int level = crm_codec_decide(crm__mode, bytes, crm__link_bps, crm__comp_bps, crm__ratio);
    if (crm__mode < 0 && level == 0 && bytes >= CRM_CODEC_MIN_BYTES && crm__link_bps > 0 &&
        ++crm__since_probe >= CRM_CODEC_REPROBE) {
        crm__since_probe = 0;          /* the data may have become compressible */
        level = CRM_CODEC_AUTO_LEVEL;
    }
    pthread_mutex_unlock(&crm__lock);
    return level;
}

static double crm__blend(double old, double sample)
{
    return old > 0 ? 0.5 * old + 0.5 * sample : sample;
}

void crm_codec_observe(const crm_payload_stats *moved, uint64_t elapsed_ns)
{
    if (moved->wire_bytes < CRM_CODEC_MEASURE_MIN || elapsed_ns == 0)
        return;
    pthread_mutex_lock(&crm__lock);
    uint64_t wire_ns = elapsed_ns > moved->compress_ns ? elapsed_ns - moved->compress_ns : elapsed_ns;
    crm__link_bps = crm__blend(crm__link_bps, (double)moved->wire_bytes * 1e9 / (double)wire_ns);
    if (moved->compress_ns > 0) {
        crm__comp_bps = crm__blend(crm__comp_bps, (double)moved->raw_bytes * 1e9 / (double)moved->compress_ns);
        crm__ratio = crm__blend(crm__ratio, (double)moved->wire_bytes / (double)moved->raw_bytes);
    }
    pthread_mutex_unlock(&crm__lock);
}
