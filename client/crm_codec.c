/* crm_codec.c -- adaptive compression policy for bulk transfers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_codec.h"
#include "common/crm_log.h"

#define CRM_CODEC_MEASURE_MIN (256u << 10)
#define CRM_CODEC_AUTO_LEVEL 1
#define CRM_CODEC_REPROBE 32             /* in auto mode, try the other choice this often */
#define CRM_CODEC_MARGIN 1.1             /* the compressor must beat the link by this much */
#define CRM_CODEC_RAW_RATIO 0.97         /* wire/raw above this: the transfer went raw */

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static int crm__mode = -2;               /* -2 unread, -1 auto, 0 off, > 0 level */
static crm_codec_model crm__model;

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

int crm_codec_decide(int mode, uint64_t bytes, crm_codec_model *m)
{
    if (mode >= 0)
        return mode;
    if (bytes < CRM_CODEC_MIN_BYTES || m->link_bps <= 0)
        return 0;                      /* measure the link raw first */
    if (m->comp_bps <= 0 || m->ratio <= 0)
        return CRM_CODEC_AUTO_LEVEL | CRM_LEVEL_PROBE; /* then the compressor, on a few chunks */
    int compress = m->ratio < CRM_CODEC_RAW_RATIO && m->comp_bps > CRM_CODEC_MARGIN * m->link_bps;
    if (++m->since_probe >= CRM_CODEC_REPROBE) {
        m->since_probe = 0;            /* the link or the data may have changed */
        return compress ? 0 : CRM_CODEC_AUTO_LEVEL | CRM_LEVEL_PROBE;
    }
    return compress ? CRM_CODEC_AUTO_LEVEL : 0;
}

static double crm__blend(double old, double sample)
{
    return old > 0 ? 0.5 * old + 0.5 * sample : sample;
}

void crm_codec_learn(crm_codec_model *m, const crm_payload_stats *moved, uint64_t elapsed_ns)
{
    if (moved->raw_bytes < CRM_CODEC_MEASURE_MIN || elapsed_ns == 0)
        return;
    /* Chunks compression was tried on: the gain, and the compressor's speed when it ran here. */
    if (moved->tried_raw >= CRM_CODEC_MEASURE_MIN) {
        double ratio = (double)moved->tried_wire / (double)moved->tried_raw;
        m->ratio = m->ratio > 0 ? crm__blend(m->ratio, ratio) : ratio;
        if (moved->compress_ns > 0)
            m->comp_bps = crm__blend(m->comp_bps, (double)moved->tried_raw * 1e9 / (double)moved->compress_ns);
        else if (m->comp_bps <= 0) /* compressed by the server: at least as fast as the whole message */
            m->comp_bps = (double)moved->tried_raw * 1e9 / (double)elapsed_ns;
    }
    /* Mostly raw: the rest of the elapsed time is the link's. With compression
     * throughout, it overlaps the sending and says little of the link. */
    if ((double)moved->wire_bytes >= CRM_CODEC_RAW_RATIO * (double)moved->raw_bytes) {
        uint64_t wire_ns = elapsed_ns > moved->compress_ns ? elapsed_ns - moved->compress_ns : elapsed_ns;
        m->link_bps = crm__blend(m->link_bps, (double)moved->wire_bytes * 1e9 / (double)wire_ns);
    }
}

int crm_codec_choose(uint64_t bytes, int same_machine, int live)
{
    pthread_mutex_lock(&crm__lock);
    if (crm__mode == -2)
        crm__mode = crm__read_mode();
    int level;
    if (crm__mode < 0 && same_machine)
        level = 0; /* through the shared-memory ring the link is memory: no compressor keeps up */
    else if (crm__mode < 0 && live && bytes >= CRM_CODEC_MIN_BYTES)
        level = CRM_CODEC_AUTO_LEVEL | CRM_LEVEL_LIVE;
    else
        level = crm_codec_decide(crm__mode, bytes, &crm__model);
    pthread_mutex_unlock(&crm__lock);
    return level;
}

void crm_codec_observe(const crm_payload_stats *moved, uint64_t elapsed_ns)
{
    pthread_mutex_lock(&crm__lock);
    crm_codec_learn(&crm__model, moved, elapsed_ns);
    pthread_mutex_unlock(&crm__lock);
}
