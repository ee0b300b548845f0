/* crm_chan.h -- the data channel: a second stream socket of a session that carries
 * bulk payloads beside the RPC connection. The RPC stream only says "this payload
 * is on the channel" (codec CRM_CODEC_STREAM); the bytes are written straight from
 * their source and read straight into their destination, without the record
 * marking and buffer copies of the RPC stream. When client and server share a
 * machine the channel also has a ring in the shared window (protocol/crm_shm.h):
 * large pieces are copied into the ring and the socket carries only small frames
 * saying where, so the sender's copy of one piece overlaps the receiver's copy of
 * the previous one.
 *
 * Frames, in each direction: {u32 type, u32 len, u32 offset}, then for
 * CRM_FRAME_INLINE len bytes. CRM_FRAME_RING: len bytes at offset in the ring;
 * the receiver answers CRM_FRAME_ACK {len} for the bytes it has copied out, once
 * they come to a quarter of the ring and at the end of each payload
 * (crm_chan_end_get), so the sender always gets the space it waits for. A payload
 * is a sequence of frames from one side; its writer waits for every ack before the
 * payload counts as sent, so the channel is idle between payloads, except with
 * lazy_acks (the client's host-to-device payloads): the server copies them out of
 * the ring before it runs anything later, so the client need not wait, and reads
 * the acks when it needs the ring's space or finds them before the frames of a
 * payload coming back.
 *
 * The channel is an XDR stream (crm_chan.xdr): the payload codec (crm_payload.h)
 * encodes into it and decodes from it like any other stream. Writers of a payload
 * do not run while the RPC call that announced it is in flight: the client hands
 * its payloads to a sender thread (crm_chan_post), the server sends its own after
 * the reply (crm_chan_post, then crm_chan_run). */
#ifndef CRM_CHAN_H
#define CRM_CHAN_H

#include <pthread.h>
#include <stdint.h>
#include <rpc/rpc.h>

#define CRM_CHAN_TOKEN 16            /* random bytes a connecting client proves itself with */
#define CRM_CHAN_MAX_JOBS 64         /* payloads waiting to be sent */

/* Writes `total` payload bytes into xdrs in order (XDR_PUTBYTES), producing them
 * as it goes; FALSE on failure. */
typedef bool_t (*crm_produce_fn)(XDR *xdrs, void *ctx, uint64_t total);

/* A payload to send: rows of width bytes, pitch apart, at src, compressed at level
 * (0 = raw); or, with `produce`, width * height raw bytes that produce writes. The
 * memory stays valid until the payload is sent. */
typedef struct crm_chan_job {
    const char *src;
    uint64_t pitch, width, height;
    int level;
    crm_produce_fn produce;
    void *ctx;
} crm_chan_job;

typedef struct crm_chan crm_chan;
struct crm_chan {
    XDR xdr;                 /* payload stream over the channel */
    int fd;                  /* the socket, owned; -1 until `open` gives it */
    int (*open)(crm_chan *c);/* opens fd on first use (server: accepts); 0 or -1 */
    int retry_eintr;         /* 1: an interrupted read or write is retried */
    int broken;              /* a read, write or frame failed: the channel is unusable */
    int timed_out;           /* that failure was the socket's time limit (SO_RCVTIMEO/SNDTIMEO) */
    /* ring in the shared window; NULL when none */
    char *ring;
    uint32_t ring_size;
    uint32_t ring_head;      /* where the next piece goes */
    uint32_t ring_used;      /* bytes sent and not yet acknowledged */
    uint32_t ring_piece;     /* largest piece */
    int lazy_acks;           /* a payload counts as sent once it is in the ring; its acks
                                are read when the ring needs the space or among the next
                                payload's frames (the client: the server reads its pieces
                                before it runs anything later, so they never overlap a
                                payload coming back) */
    /* output: bytes of the INLINE frame being gathered */
    char *obuf;
    uint32_t olen;
    /* input: bytes read ahead from the socket, and the frame being consumed */
    char *ibuf;
    uint32_t ipos, ilen;
    uint32_t ftype, flen, fleft, foff;
    uint32_t ack_owed;       /* ring bytes copied out and not yet acknowledged */
    /* bytes moved by payload frames, either way, and the part through the ring */
    uint64_t moved, ring_moved;
    uint64_t wrote;          /* bytes written to the socket */
    /* payloads waiting to be sent, and the thread that sends them (client) */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    crm_chan_job jobs[CRM_CHAN_MAX_JOBS];
    unsigned job_head, job_count;
    int sending;             /* a job is being sent */
    unsigned waiters;        /* threads waiting for the queue to drain or a send to end */
    int held;                /* jobs posted now are sent by crm_chan_run, not the thread */
    int threaded;            /* the sender thread runs */
    int stopping;
    pthread_t sender;
};

/* Sets up a channel over connected socket fd (owned from now on), or over the one
 * `open` gives on first use when fd is -1. 0 or -1. */
int crm_chan_init(crm_chan *c, int fd, int retry_eintr);
/* The socket is there (opening it now if needed) and the channel unbroken. */
bool_t crm_chan_ready(crm_chan *c);
/* Uses ring_size bytes at ring (the shared window) for large pieces. */
void crm_chan_set_ring(crm_chan *c, char *ring, uint64_t ring_size);
/* Starts the sender thread: posted payloads are sent at once. 0 or -1. */
int crm_chan_start_sender(crm_chan *c);
/* Stops the sender, closes the socket and frees the buffers. */
void crm_chan_close(crm_chan *c);

/* Queues a payload; FALSE when the queue is full or the channel broken. */
bool_t crm_chan_post(crm_chan *c, const crm_chan_job *job);
/* Sends the queued payloads in this thread (no sender thread, or held jobs).
 * FALSE on failure. */
bool_t crm_chan_run(crm_chan *c);
/* Holds (1) or releases (0) the payloads posted from now on for crm_chan_run in
 * the posting thread: a message that is not answered (CRM_POST) is written first,
 * then its payloads, with no hand-over to the sender thread. */
void crm_chan_hold(crm_chan *c, int held);
/* Waits until the sender thread has sent every queued payload. FALSE on failure. */
bool_t crm_chan_wait(crm_chan *c);
/* Unblocks a sender stuck on a peer that stopped reading; the channel is broken. */
void crm_chan_abort(crm_chan *c);
/* Drops queued payloads without sending them. */
void crm_chan_discard(crm_chan *c);

/* Ends the payload being written: sends what is gathered and waits for the ring's
 * acks. FALSE on failure. */
bool_t crm_chan_end_put(crm_chan *c);
/* Ends the payload being read: acknowledges the ring bytes it still owes, which
 * the sender may be waiting for. Every reader of a payload calls it. */
bool_t crm_chan_end_get(crm_chan *c);

/* For the live compression choice (protocol/crm_zlive.h): bytes written to the
 * socket so far and how many of them it still holds (SIOCOUTQ). 0, or -1 when the
 * channel has a ring (its bytes skip the socket) or the socket does not say. */
int crm_chan_link(crm_chan *c, uint64_t *wrote, uint64_t *queued);
/* The channel of this process (the client's connection, or a server session),
 * NULL when none; the payload codec reads and posts through it. */
extern crm_chan *crm_chan_current;

#endif
