/* crm_zlive.c -- per-chunk compression choice from live link and compressor figures. */
#include <string.h>
#include "protocol/crm_zlive.h"

#define CRM_ZLIVE_MAX_RATIO 0.9           /* chunks must shrink below this to be worth compressing */
#define CRM_ZLIVE_EXPLORE_MIN (16ull << 20) /* raw bytes between measurements of the worse way */
#define CRM_ZLIVE_EXPLORE_MAX (16ull << 30)
#define CRM_ZLIVE_EXPLORE_COST 0.02       /* of the time, spent measuring the worse way */
#define CRM_ZLIVE_RATIO_SHIFT 0.25        /* a sample this far off the ratio: the data changed */

static double crm__blend(double old, double sample)
{
    return old > 0 ? 0.5 * old + 0.5 * sample : sample;
}

/* Begins using way from now on: its window opens once what is queued has left. */
static void crm__begin(crm_zlive *z, int way, uint64_t wrote)
{
    if (way != z->way)
        z->since_switch = 0;
    z->way = way;
    z->turnover = wrote;
    z->open = 0;
    z->way_raw = z->way_wire = 0;
}

void crm_zlive_start(crm_zlive *z, const crm_zlive *prior, uint64_t wrote)
{
    crm_zlive keep = prior != NULL ? *prior : (crm_zlive){.way = CRM_ZLIVE_WAY_MIX};
    memset(z, 0, sizeof *z);
    z->link_Bps = keep.link_Bps;
    z->comp_Bps = keep.comp_Bps;
    z->ratio = keep.ratio;
    z->good[0] = keep.good[0];
    z->good[1] = keep.good[1];
    z->way = keep.way;
    z->since_switch = keep.since_switch;
    crm__begin(z, keep.way, wrote);
}

/* The MIX way's rule, with every figure known. */
static int crm__worth_it(const crm_zlive *z, uint64_t len, uint64_t queued)
{
    if (z->ratio >= CRM_ZLIVE_MAX_RATIO)
        return 0;
    if (z->link_Bps <= 0)
        return 1; /* the link is not measured yet: compress what shrinks */
    return (double)len / z->comp_Bps <= ((double)queued + (1.0 - z->ratio) * (double)len) / z->link_Bps;
}

int crm_zlive_decide(crm_zlive *z, uint64_t len, uint64_t queued)
{
    int compress;
    if (z->comp_Bps <= 0 || z->ratio <= 0)
        compress = 1; /* measure the compressor */
    else
        compress = z->way == CRM_ZLIVE_WAY_MIX && crm__worth_it(z, len, queued);
    if (compress) {
        z->since_try = 0;
        return CRM_ZLIVE_COMPRESS;
    }
    if (++z->since_try < CRM_ZLIVE_RETRY)
        return CRM_ZLIVE_RAW;
    z->since_try = 0;
    return CRM_ZLIVE_PROBE; /* the data may have changed */
}

/* Raw bytes sent the better way before the other is measured again: measuring the
 * worse way sends about two windows its way (the window, and what it queues while
 * the better way's bytes leave), which costs (gap - 1) times their time at the
 * better way's pace; spread so that it comes to CRM_ZLIVE_EXPLORE_COST of the time. */
static uint64_t crm__explore_after(const crm_zlive *z)
{
    double best = z->good[0] > z->good[1] ? z->good[0] : z->good[1];
    double worse = z->good[0] > z->good[1] ? z->good[1] : z->good[0];
    double after = 2.0 * (double)CRM_ZLIVE_WINDOW * (best / worse - 1.0) / CRM_ZLIVE_EXPLORE_COST;
    if (after < (double)CRM_ZLIVE_EXPLORE_MIN)
        return CRM_ZLIVE_EXPLORE_MIN;
    return after > (double)CRM_ZLIVE_EXPLORE_MAX ? CRM_ZLIVE_EXPLORE_MAX : (uint64_t)after;
}

/* The way to use once the current one has been measured. */
static int crm__next_way(const crm_zlive *z)
{
    int other = !z->way;
    if (other == CRM_ZLIVE_WAY_MIX && z->ratio >= CRM_ZLIVE_MAX_RATIO)
        return CRM_ZLIVE_WAY_RAW; /* nothing to gain: stay raw until a sample shrinks */
    if (z->good[other] <= 0)
        return other;
    int best = z->good[CRM_ZLIVE_WAY_MIX] > z->good[CRM_ZLIVE_WAY_RAW] ? CRM_ZLIVE_WAY_MIX : CRM_ZLIVE_WAY_RAW;
    if (best != z->way)
        return best;
    return z->since_switch >= crm__explore_after(z) ? other : z->way;
}

void crm_zlive_link(crm_zlive *z, uint64_t now_ns, uint64_t wrote, uint64_t queued)
{
    uint64_t sent = wrote >= queued ? wrote - queued : 0;
    if (!z->open) {
        if (sent < z->turnover || z->way_raw == 0)
            return; /* the other way's bytes are still leaving */
        z->open = 1;
        z->open_ns = now_ns;
        z->open_sent = sent;
        return;
    }
    if (now_ns <= z->open_ns || z->way_wire == 0)
        return;
    double wire = (double)(sent - z->open_sent);
    double raw = wire * (double)z->way_raw / (double)z->way_wire;
    /* A way never measured gets a short first window: the first transfer measures both. */
    if (raw < (z->good[z->way] > 0 ? (double)CRM_ZLIVE_WINDOW : (double)CRM_ZLIVE_FIRST_WINDOW))
        return;
    double secs = (double)(now_ns - z->open_ns) / 1e9;
    z->good[z->way] = crm__blend(z->good[z->way], raw / secs);
    if (z->way == CRM_ZLIVE_WAY_RAW && z->link_Bps <= 0)
        z->good[CRM_ZLIVE_WAY_MIX] = 0; /* measured compressing all: measure the rule now it knows the link */
    if (z->way == CRM_ZLIVE_WAY_RAW)
        z->link_Bps = crm__blend(z->link_Bps, wire / secs);
    int next = crm__next_way(z);
    if (next != z->way) {
        crm__begin(z, next, wrote);
    } else {
        z->open_ns = now_ns; /* the next window of the same way */
        z->open_sent = sent;
    }
}

void crm_zlive_comp(crm_zlive *z, uint64_t raw, uint64_t stored, uint64_t ns)
{
    if (raw == 0)
        return;
    double ratio = (double)stored / (double)raw;
    if (z->ratio > 0 && (ratio > z->ratio + CRM_ZLIVE_RATIO_SHIFT || ratio < z->ratio - CRM_ZLIVE_RATIO_SHIFT))
        z->good[CRM_ZLIVE_WAY_MIX] = 0; /* the data changed: what compressing delivers must be measured again */
    z->ratio = crm__blend(z->ratio, ratio);
    if (ns > 0)
        z->comp_Bps = crm__blend(z->comp_Bps, (double)raw * 1e9 / (double)ns);
}

void crm_zlive_sent(crm_zlive *z, uint64_t raw, uint64_t wire)
{
    z->way_raw += raw;
    z->way_wire += wire;
    z->since_switch += raw;
}
