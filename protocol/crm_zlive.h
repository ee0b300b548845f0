/* crm_zlive.h -- the compression choice of a payload being sent on a data channel
 * socket, made chunk by chunk from what the transfers themselves measure.
 *
 * Two ways to send are compared on the live link by what they deliver: raw bytes
 * per second out of the socket (bytes written minus bytes still queued in it,
 * SIOCOUTQ, counted back to raw bytes by the ratio the chunks reached). RAW sends
 * every chunk raw. MIX compresses a chunk when, by the figures measured, the time
 * compressing it takes is covered by the link draining what is queued plus the
 * link time its shrinking saves,
 *
 *     len / comp  <=  queued / link + (1 - ratio) * len / link
 *
 * so on a slow link it compresses every chunk that shrinks, and on a link faster
 * than the compressor only while the link is busy anyway. Measuring both catches
 * what the formula cannot see: a link that itself needs the CPU the compressor
 * takes, or a receiver that decompresses slower than it copies.
 *
 * A measurement is a window of at least CRM_ZLIVE_WINDOW raw bytes delivered in
 * one way (CRM_ZLIVE_FIRST_WINDOW the first time), opened once what the other way
 * queued has left the socket. The better
 * way is used; the other is measured again after an amount of data that grows with
 * how much worse it was, so exploring costs a few per cent at most. Chunks that do
 * not shrink are sent raw in either way, with a sample now and then in case the
 * data changes. A transfer starts from what the previous one measured. Pure: the
 * encoder (protocol/crm_payload.c) feeds it the clock, the socket's counters, the
 * compressor's timings and what it wrote. */
#ifndef CRM_ZLIVE_H
#define CRM_ZLIVE_H

#include <stdint.h>

#define CRM_ZLIVE_RETRY 16               /* raw chunks before a sample is tried again */
#define CRM_ZLIVE_WINDOW (4ull << 20)    /* raw bytes delivered per measurement */
#define CRM_ZLIVE_FIRST_WINDOW (1ull << 20) /* the first measurement of a way */

/* What to do with the next chunk. */
enum { CRM_ZLIVE_RAW = 0, CRM_ZLIVE_COMPRESS = 1, CRM_ZLIVE_PROBE = 2 /* compress a sample only */ };
/* The ways to send. */
enum { CRM_ZLIVE_WAY_RAW = 0, CRM_ZLIVE_WAY_MIX = 1 };

typedef struct crm_zlive {
    /* estimates, kept from one transfer to the next; 0 = not measured */
    double link_Bps;         /* bytes per second the link took while sending raw */
    double comp_Bps;         /* raw bytes per second the compressor takes */
    double ratio;            /* stored / raw bytes of the chunks compression was tried on */
    double good[2];          /* raw bytes per second each way delivered */
    int way;                 /* the way being used */
    uint64_t since_switch;   /* raw bytes sent since the way last changed */
    /* the way's measuring window, in this transfer */
    uint64_t turnover;       /* bytes written before the way began: the window opens once they left */
    int open;
    uint64_t open_ns, open_sent;
    uint64_t way_raw, way_wire; /* raw bytes written this way, and the bytes they became */
    unsigned since_try;      /* chunks sent raw since compression was last tried */
} crm_zlive;

/* Starts a transfer from the estimates of prior (NULL: none); wrote: bytes the
 * socket has been given so far. */
void crm_zlive_start(crm_zlive *z, const crm_zlive *prior, uint64_t wrote);
/* What to do with the next len raw bytes (CRM_ZLIVE_*), queued bytes being still in
 * the socket. */
int crm_zlive_decide(crm_zlive *z, uint64_t len, uint64_t queued);
/* A sample of the socket at now_ns: wrote bytes given to it so far, queued of them
 * still in it. Closes a measuring window when it is complete, and may change the way. */
void crm_zlive_link(crm_zlive *z, uint64_t now_ns, uint64_t wrote, uint64_t queued);
/* The compressor took ns to turn raw bytes into stored ones (stored = raw when they
 * did not compress); ns 0: a sample, which says how the data shrinks, not how fast. */
void crm_zlive_comp(crm_zlive *z, uint64_t raw, uint64_t stored, uint64_t ns);
/* raw bytes of the payload were written to the socket as wire bytes. */
void crm_zlive_sent(crm_zlive *z, uint64_t raw, uint64_t wire);

#endif
