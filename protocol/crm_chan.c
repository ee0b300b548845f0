/* crm_chan.c -- the data channel: frames on a socket, the shared-memory ring, the
 * XDR stream over both, and the queue of payloads waiting to be sent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <unistd.h>
#include "protocol/crm_bulk.h"
#include "protocol/crm_chan.h"
#include "protocol/crm_payload.h"
#include "protocol/crm_sockio.h"
#include "protocol/crm_tls.h"

#define CRM_CHAN_BUF (64u << 10)       /* gathered output, read-ahead input */
#define CRM_CHAN_DIRECT (32u << 10)    /* pieces at least this large skip the buffers */
/* Largest piece copied into the ring at once. Small pieces in a small ring keep the
 * bytes in the shared cache between the sender's copy and the receiver's: measured
 * here, 512 KiB pieces in an 8 MiB ring moved about 1.5x what 4 MiB pieces in a
 * 64 MiB ring did. */
#define CRM_RING_PIECE_MAX (512u << 10)
#define CRM_RING_MAX (1u << 30)

enum { CRM_FRAME_INLINE = 1, CRM_FRAME_RING = 2, CRM_FRAME_ACK = 3 };

crm_chan *crm_chan_current;

/* ---- socket I/O --------------------------------------------------------------------- */

static int crm__interrupted(const crm_chan *c)
{
    return errno == EINTR && c->retry_eintr;
}

/* Marks the channel unusable after a failed read or write (got <= 0), noting
 * whether the socket's time limit ran out: the peer stopped, as opposed to gone. */
static void crm__fail(crm_chan *c, ssize_t got)
{
    c->timed_out = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    c->broken = 1;
}

/* Writes every byte of the iovecs (modified); a vanished peer is an error, never
 * a SIGPIPE. */
static bool_t crm__writev_all(crm_chan *c, struct iovec *iov, int n)
{
    while (n > 0 && !c->broken) {
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t got = crm_tls_on(c->fd) ? crm_tls_write(c->fd, iov->iov_base, iov->iov_len) /* one at a time */
                                         : sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (got < 0 && crm__interrupted(c))
            continue;
        if (got <= 0) {
            crm__fail(c, got);
            break;
        }
        c->wrote += (uint64_t)got;
        while (n > 0 && (size_t)got >= iov->iov_len) {
            got -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + got;
            iov->iov_len -= (size_t)got;
        }
    }
    return !c->broken;
}

static bool_t crm__send_frame(crm_chan *c, uint32_t type, uint32_t len, uint32_t offset, const void *data)
{
    uint32_t hdr[3] = {htonl(type), htonl(len), htonl(offset)};
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)data, data ? len : 0}};
    return crm__writev_all(c, iov, data ? 2 : 1);
}

/* Reads exactly n bytes: first what was read ahead, then straight into dst when
 * the rest is large, else through the read-ahead buffer. Each read polls the
 * socket a while before sleeping, payload bytes too: over TCP a payload arrives
 * in segments, and a reader that sleeps between them pays a cross-core wake-up
 * for each (device-to-host copies of 1-4 MiB over TCP loopback ran 20-30 %
 * slower). A server's stop ends a poll as it ends a sleep (crm_sock_stop_on). */
static bool_t crm__read_exact(crm_chan *c, char *dst, uint64_t n)
{
    while (n > 0 && !c->broken) {
        if (c->ipos < c->ilen) {
            uint64_t take = c->ilen - c->ipos < n ? c->ilen - c->ipos : n;
            memcpy(dst, c->ibuf + c->ipos, take);
            c->ipos += (uint32_t)take;
            dst += take;
            n -= take;
            continue;
        }
        int direct = n >= CRM_CHAN_DIRECT;
        size_t want = direct ? (n > (1u << 30) ? (1u << 30) : n) : CRM_CHAN_BUF;
        ssize_t got = crm_sock_read_once(c->fd, direct ? dst : c->ibuf, want, 1);
        if (got < 0 && crm__interrupted(c))
            continue;
        if (got <= 0) {
            crm__fail(c, got);
            break;
        }
        if (direct) {
            dst += got;
            n -= (uint64_t)got;
        } else {
            c->ipos = 0;
            c->ilen = (uint32_t)got;
        }
    }
    return !c->broken;
}

static bool_t crm__read_frame(crm_chan *c, uint32_t *type, uint32_t *len, uint32_t *offset)
{
    uint32_t hdr[3];
    if (!crm__read_exact(c, (char *)hdr, sizeof hdr))
        return FALSE;
    *type = ntohl(hdr[0]);
    *len = ntohl(hdr[1]);
    *offset = ntohl(hdr[2]);
    return TRUE;
}

/* ---- output ------------------------------------------------------------------------- */

static bool_t crm__flush(crm_chan *c)
{
    if (c->olen == 0)
        return !c->broken;
    uint32_t n = c->olen;
    c->olen = 0;
    return crm__send_frame(c, CRM_FRAME_INLINE, n, 0, c->obuf);
}

/* Reads one ack and frees its bytes of the ring. */
static bool_t crm__take_ack(crm_chan *c)
{
    uint32_t type, len, offset;
    if (!crm__read_frame(c, &type, &len, &offset))
        return FALSE;
    if (type != CRM_FRAME_ACK || len > c->ring_used) {
        c->broken = 1;
        return FALSE;
    }
    c->ring_used -= len;
    return TRUE;
}

/* Copies src into the ring piece by piece, each announced by a frame. */
static bool_t crm__put_ring(crm_chan *c, const char *src, uint64_t n)
{
    while (n > 0) {
        uint32_t piece = n < c->ring_piece ? (uint32_t)n : c->ring_piece;
        if (piece > c->ring_size - c->ring_head)
            piece = c->ring_size - c->ring_head;
        while (c->ring_size - c->ring_used < piece)
            if (!crm__take_ack(c))
                return FALSE;
        memcpy(c->ring + c->ring_head, src, piece);
        c->ring_moved += piece;
        if (!crm__send_frame(c, CRM_FRAME_RING, piece, c->ring_head, NULL))
            return FALSE;
        c->ring_used += piece;
        c->ring_head = (c->ring_head + piece) % c->ring_size;
        src += piece;
        n -= piece;
    }
    return TRUE;
}

/* Sends what is gathered and n bytes at src as one INLINE frame: one system call
 * for a payload's header and its bytes. */
static bool_t crm__send_gathered_and(crm_chan *c, const char *src, u_int n)
{
    uint32_t len = c->olen + n;
    uint32_t hdr[3] = {htonl(CRM_FRAME_INLINE), htonl(len), 0};
    struct iovec iov[3] = {{hdr, sizeof hdr}, {c->obuf, c->olen}, {(void *)src, n}};
    c->olen = 0;
    return crm__writev_all(c, iov, 3);
}

static bool_t crm__putbytes(XDR *xdrs, const char *src, u_int n)
{
    crm_chan *c = (crm_chan *)xdrs->x_private;
    c->moved += n;
    if (n >= CRM_CHAN_DIRECT) {
        if (c->ring == NULL)
            return n <= UINT32_MAX - CRM_CHAN_BUF ? crm__send_gathered_and(c, src, n)
                                                  : crm__flush(c) && crm__send_frame(c, CRM_FRAME_INLINE, n, 0, src);
        return crm__flush(c) && crm__put_ring(c, src, n);
    }
    if (c->olen + n > CRM_CHAN_BUF && !crm__flush(c))
        return FALSE;
    memcpy(c->obuf + c->olen, src, n);
    c->olen += n;
    return !c->broken;
}

bool_t crm_chan_end_put(crm_chan *c)
{
    if (!crm__flush(c))
        return FALSE;
    while (c->ring_used > 0 && !c->lazy_acks)
        if (!crm__take_ack(c))
            return FALSE;
    return !c->broken;
}

int crm_chan_link(crm_chan *c, uint64_t *wrote, uint64_t *queued)
{
    int n = 0;
    *wrote = c->wrote;
    *queued = 0;
    if (c->fd < 0 || c->ring != NULL || ioctl(c->fd, SIOCOUTQ, &n) != 0 || n < 0)
        return -1;
    *queued = (uint64_t)n;
    return 0;
}

/* ---- input -------------------------------------------------------------------------- */

/* Acknowledges, in one frame, the ring bytes copied out since the last ack: a
 * quarter of the ring's worth, or what a payload's end leaves (one ack per
 * payload up to that size; they were one per piece). */
static bool_t crm__pay_acks(crm_chan *c)
{
    uint32_t owed = c->ack_owed;
    c->ack_owed = 0;
    return owed == 0 || crm__send_frame(c, CRM_FRAME_ACK, owed, 0, NULL);
}

bool_t crm_chan_end_get(crm_chan *c)
{
    return crm__pay_acks(c) && !c->broken;
}

/* Starts the next frame of a payload; only INLINE and in-bounds RING frames belong there. */
static bool_t crm__next_frame(crm_chan *c)
{
    uint32_t type, len, offset;
    if (!crm__read_frame(c, &type, &len, &offset))
        return FALSE;
    while (type == CRM_FRAME_ACK && len <= c->ring_used) { /* a lazy ack of our earlier pieces */
        c->ring_used -= len;
        if (!crm__read_frame(c, &type, &len, &offset))
            return FALSE;
    }
    int ok = (type == CRM_FRAME_INLINE && len > 0) ||
             (type == CRM_FRAME_RING && c->ring != NULL && len > 0 && offset < c->ring_size &&
              len <= c->ring_size - offset);
    if (!ok) {
        c->broken = 1;
        return FALSE;
    }
    c->ftype = type;
    c->flen = c->fleft = len;
    c->foff = offset;
    return TRUE;
}

static bool_t crm__getbytes(XDR *xdrs, char *dst, u_int n)
{
    crm_chan *c = (crm_chan *)xdrs->x_private;
    c->moved += n;
    while (n > 0) {
        if (c->fleft == 0 && !crm__next_frame(c))
            return FALSE;
        u_int take = n < c->fleft ? n : c->fleft;
        if (c->ftype == CRM_FRAME_INLINE) {
            if (!crm__read_exact(c, dst, take))
                return FALSE;
        } else {
            memcpy(dst, c->ring + c->foff, take);
            c->foff += take;
            c->ring_moved += take;
        }
        c->fleft -= take;
        if (c->ftype == CRM_FRAME_RING && c->fleft == 0) {
            c->ack_owed += c->flen;
            if (c->ack_owed >= c->ring_size / 4 && !crm__pay_acks(c))
                return FALSE;
        }
        dst += take;
        n -= take;
    }
    return TRUE;
}

/* ---- the XDR stream ----------------------------------------------------------------- */

static bool_t crm__getlong(XDR *xdrs, long *lp)
{
    uint32_t v;
    if (!crm__getbytes(xdrs, (char *)&v, 4))
        return FALSE;
    *lp = (long)(int32_t)ntohl(v);
    return TRUE;
}

static bool_t crm__putlong(XDR *xdrs, const long *lp)
{
    uint32_t v = htonl((uint32_t)*lp);
    return crm__putbytes(xdrs, (const char *)&v, 4);
}

static u_int crm__getpostn(XDR *xdrs)
{
    (void)xdrs;
    return 0;
}

static bool_t crm__setpostn(XDR *xdrs, u_int pos)
{
    (void)xdrs;
    (void)pos;
    return FALSE;
}

static int32_t *crm__inline(XDR *xdrs, u_int len)
{
    (void)xdrs;
    (void)len;
    return NULL;
}

static void crm__destroy(XDR *xdrs)
{
    (void)xdrs;
}

static bool_t crm__control(XDR *xdrs, int request, void *info)
{
    (void)xdrs;
    (void)request;
    (void)info;
    return FALSE;
}

static const struct xdr_ops crm__ops = {
    crm__getlong, crm__putlong, crm__getbytes, crm__putbytes, crm__getpostn,
    crm__setpostn, crm__inline, crm__destroy, crm__control,
};

/* ---- set-up ------------------------------------------------------------------------- */

/* A Unix socket's sender may queue CRM_CHAN_UNIX_SNDBUF bytes (capped by
 * net.core.wmem_max) instead of the default 208 KiB: a writer that fills the buffer
 * sleeps until the reader has drained three quarters of it, and with a small buffer
 * the reader then runs dry while the writer's wake-up crosses cores (a stream of
 * 64 KiB copies ran a third of the time). TCP sizes its buffers itself. */
#define CRM_CHAN_UNIX_SNDBUF (4 << 20)

static void crm__size_buffers(int fd)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    int size = CRM_CHAN_UNIX_SNDBUF;
    if (fd >= 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0 && a.ss_family == AF_UNIX)
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size); /* a smaller buffer still works */
}

int crm_chan_init(crm_chan *c, int fd, int retry_eintr)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->retry_eintr = retry_eintr;
    crm__size_buffers(fd);
    c->obuf = malloc(CRM_CHAN_BUF);
    c->ibuf = malloc(CRM_CHAN_BUF);
    c->xdr.x_ops = &crm__ops;
    c->xdr.x_private = (char *)c;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->changed, NULL);
    if (c->obuf == NULL || c->ibuf == NULL) {
        free(c->obuf);
        free(c->ibuf);
        c->obuf = c->ibuf = NULL;
        return -1;
    }
    return 0;
}

bool_t crm_chan_ready(crm_chan *c)
{
    if (c->fd < 0 && !c->broken) {
        if (c->open == NULL || c->open(c) != 0 || c->fd < 0)
            c->broken = 1;
        else
            crm__size_buffers(c->fd);
    }
    return !c->broken;
}

void crm_chan_set_ring(crm_chan *c, char *ring, uint64_t ring_size)
{
    if (ring == NULL || ring_size < 4 * CRM_CHAN_DIRECT)
        return;
    c->ring = ring;
    c->ring_size = ring_size > CRM_RING_MAX ? CRM_RING_MAX : (uint32_t)ring_size;
    c->ring_piece = c->ring_size / 4 < CRM_RING_PIECE_MAX ? c->ring_size / 4 : CRM_RING_PIECE_MAX;
}

/* ---- payloads waiting to be sent ---------------------------------------------------- */

/* Sends one payload: its codec and bytes, then waits for the ring to drain. */
static bool_t crm__send_job(crm_chan *c, const crm_chan_job *job)
{
    c->xdr.x_op = XDR_ENCODE;
    bool_t ok = crm_chan_ready(c);
    if (ok && job->produce != NULL)
        ok = crm_payload_put_produced(&c->xdr, job->width * job->height, job->produce, job->ctx, 0, &crm_bulk_sent);
    else if (ok)
        ok = crm_payload_put(&c->xdr, job->src, job->pitch, job->width, job->height, job->level, &crm_bulk_sent);
    ok = ok && crm_chan_end_put(c);
    if (!ok)
        c->broken = 1;
    return ok;
}

/* Takes the oldest job (lock held); FALSE when none. */
static bool_t crm__take_job(crm_chan *c, crm_chan_job *job)
{
    if (c->job_count == 0)
        return FALSE;
    *job = c->jobs[c->job_head];
    c->job_head = (c->job_head + 1) % CRM_CHAN_MAX_JOBS;
    c->job_count--;
    return TRUE;
}

/* Wakes the threads waiting on the queue when one has something to do now (lock
 * held): a waiter for the queue to drain or a send to end, or the sender thread
 * when it may take a job. A wake-up of a thread with nothing to do would cost each
 * posted copy a round of futex calls and a switch to another core. */
static void crm__wake(crm_chan *c)
{
    if (c->waiters > 0 || c->stopping || (c->threaded && !c->held && !c->sending && c->job_count > 0))
        pthread_cond_broadcast(&c->changed);
}

/* Waits for the queue to change (lock held), counted among the waiters. */
static void crm__wait_change(crm_chan *c)
{
    c->waiters++;
    pthread_cond_wait(&c->changed, &c->lock);
    c->waiters--;
}

bool_t crm_chan_post(crm_chan *c, const crm_chan_job *job)
{
    pthread_mutex_lock(&c->lock);
    bool_t ok = !c->broken && c->job_count < CRM_CHAN_MAX_JOBS;
    if (ok) {
        c->jobs[(c->job_head + c->job_count) % CRM_CHAN_MAX_JOBS] = *job;
        c->job_count++;
        crm__wake(c);
    }
    pthread_mutex_unlock(&c->lock);
    return ok;
}

bool_t crm_chan_run(crm_chan *c)
{
    crm_chan_job job;
    bool_t ok = TRUE;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        while (c->sending) /* the thread finishes what it took first */
            crm__wait_change(c);
        bool_t took = crm__take_job(c, &job);
        c->sending = took;
        pthread_mutex_unlock(&c->lock);
        if (!took)
            break;
        ok = crm__send_job(c, &job) && ok;
        pthread_mutex_lock(&c->lock);
        c->sending = 0;
        crm__wake(c);
        pthread_mutex_unlock(&c->lock);
    }
    return ok && !c->broken;
}

void crm_chan_hold(crm_chan *c, int held)
{
    pthread_mutex_lock(&c->lock);
    c->held = held;
    crm__wake(c); /* what was held and not run is the thread's again */
    pthread_mutex_unlock(&c->lock);
}

static void *crm__sender_main(void *arg)
{
    crm_chan *c = arg;
    crm_chan_job job;
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        if (c->held || c->sending || !crm__take_job(c, &job)) {
            pthread_cond_wait(&c->changed, &c->lock);
            continue;
        }
        c->sending = 1;
        pthread_mutex_unlock(&c->lock);
        crm__send_job(c, &job);
        pthread_mutex_lock(&c->lock);
        c->sending = 0;
        crm__wake(c);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int crm_chan_start_sender(crm_chan *c)
{
    if (pthread_create(&c->sender, NULL, crm__sender_main, c) != 0)
        return -1;
    c->threaded = 1;
    return 0;
}

bool_t crm_chan_wait(crm_chan *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->threaded && (c->job_count > 0 || c->sending))
        crm__wait_change(c);
    bool_t ok = !c->broken;
    pthread_mutex_unlock(&c->lock);
    return ok;
}

void crm_chan_abort(crm_chan *c)
{
    c->broken = 1;
    shutdown(c->fd, SHUT_RDWR);
}

void crm_chan_discard(crm_chan *c)
{
    pthread_mutex_lock(&c->lock);
    c->job_count = 0;
    crm__wake(c);
    pthread_mutex_unlock(&c->lock);
}

void crm_chan_close(crm_chan *c)
{
    if (c->threaded) {
        crm_chan_abort(c);
        pthread_mutex_lock(&c->lock);
        c->stopping = 1;
        crm__wake(c);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->sender, NULL);
        c->threaded = 0;
    }
    crm_chan_discard(c);
    if (c->fd >= 0) {
        crm_tls_drop(c->fd);
        close(c->fd);
    }
    c->fd = -1;
    free(c->obuf);
    free(c->ibuf);
    c->obuf = c->ibuf = NULL;
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->changed);
}
