/* crm_conn.h -- the client's one connection to cudarem-server: opened lazily at the
 * first CUDA call, shared by all threads, turned into CUDA errors when it fails. */
#ifndef CRM_CONN_H
#define CRM_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "crm_api.h"

/* What HELLO told us about the session. */
typedef struct crm_session_info {
    int device_count;      /* devices the session may use */
    int driver_version;    /* server's driver version */
    int runtime_version;   /* server backend's runtime version */
    char backend[16];      /* "cuda" or "emu" */
} crm_session_info;

/* Counters kept since the connection opened (CUDAREM_STATS prints them at exit). */
typedef struct crm_conn_stats {
    uint64_t round_trips;  /* RPC messages that waited for an answer */
    uint64_t calls;        /* CUDA calls carried in them and in posts */
    uint64_t posts;        /* messages of queued calls sent without waiting (CRM_POST) */
    uint64_t calls_answered_here; /* synchronisations the last round trip had answered (client/crm_idle.h) */
    uint64_t bytes_h2d;    /* bulk payload bytes sent */
    uint64_t bytes_d2h;    /* bulk payload bytes received */
    uint64_t channel_bytes;/* bytes on the data channel, either way (protocol/crm_chan.h) */
    uint64_t ring_bytes;   /* of which through the shared-memory ring */
    uint64_t pinned_bytes; /* copied by the server straight to or from shared pinned memory
                              (client/crm_hostmem.h), either way */
    uint64_t queued_bytes; /* the encodings of the calls queued, their inline data included */
} crm_conn_stats;

/* The connection reaches every server CUDAREM_SERVER lists (client/crm_pool.h):
 * CUDA device numbers count the pooled devices, and each call goes to the server
 * of the device it is about (the calling thread's, or the one owning the device
 * address or object it names), with that server's own device number selected. */

/* Opens the sessions if needed. Returns cudaSuccess and fills *info, or, logged
 * once with the reason: cudaErrorNoDevice when a server cannot be used
 * (unreachable, refused, TLS, authentication, protocol), cudaErrorDevicesUnavailable
 * when it refused for now (full, the user's quota, a lock-out) or once it was lost. */
cudaError_t crm_conn_session(crm_session_info *info);

/* The CUDA driver version the program is told: the server's, or, when no server
 * can be used, that of the toolkit the shim was built with, as a machine with a
 * current driver and no usable device answers (NVIDIA's static runtime reads a
 * lower number as cudaErrorInsufficientDriver). */
int crm_conn_driver_version(void);

/* Sends n calls in one message and decodes their replies into replies[], whose
 * bulk destinations the caller preset. Returns cudaSuccess when every reply came
 * back (each carries its own error), else the transport error mapped to CUDA. */
cudaError_t crm_conn_exec(crm_call *calls, crm_reply *replies, unsigned n);

/* Sends a call whose failure CUDA reports asynchronously (kernel launches, async
 * memsets and copies to the device, event records, library compute calls): it may
 * be queued and sent with the next call that needs an answer. Returns the error to
 * report now; an error of the call itself surfaces at the next synchronising call
 * and through cudaGetLastError, as on a local GPU. Bulk data the call points to is
 * captured before this returns. */
cudaError_t crm_conn_async(crm_call *call);
/* crm_conn_async of work on wire stream `stream`: while the stream is capturing, the
 * call becomes a node of the capture's graph instead (client/crm_graph.h). */
cudaError_t crm_conn_async_on(crm_call *call, uint64_t stream);

/* Sends an asynchronous call with large bulk data now, after the queue, without
 * waiting for an answer (CRM_POST): it returns once the data has left, so the
 * caller's memory may change; the call's own failure surfaces like a queued
 * call's. Returns the transport error. */
cudaError_t crm_conn_post(crm_call *call);

/* Sends whatever is queued now (program exit, cudaGetLastError); transport error. */
cudaError_t crm_conn_flush(void);
/* Keeps a failure cudarem met on the program's behalf (a synchronisation managed
 * memory made) for whichever thread synchronises next, as an asynchronous failure. */
void crm_conn_keep_failure(int api, int status);
/* Returns and clears the first failure of a call this thread queued or posted, as a
 * runtime error (client/crm_deferred.h). */
cudaError_t crm_conn_take_deferred(void);
/* What a synchronising call returns: its own error, else a deferred one of this
 * thread's; a query's cudaErrorNotReady leaves that for the next. */
cudaError_t crm_conn_sync_status(cudaError_t own);

/* crm_conn_exec of one call; returns the transport error or else the call's error. */
cudaError_t crm_conn_call(crm_call *call, crm_reply *reply);

/* Frees what decoding a reply allocated. */
void crm_conn_reply_free(crm_reply *reply);

/* Where the session's large bulk payloads go: no data channel (inline in the RPC
 * stream), the channel's socket, or its shared-memory ring (the server is on this
 * machine). The channel is opened when the session is. */
enum { CRM_ROUTE_INLINE, CRM_ROUTE_SOCKET, CRM_ROUTE_RING };
int crm_conn_bulk_route(void);

/* Where a copy's bytes travel. Up to CRM_COPY_INLINE_MAX they go inline in the RPC
 * stream, host-to-device ones queued with their data (copied once more on the
 * client, but a small copy costs no system call of its own). Larger ones go on the
 * data channel, written straight from their source and read straight into their
 * destination, through the shared-memory ring when the server is on this machine
 * (the channel's own buffers take pieces under 32 KiB anyway). Without a channel,
 * copies up to CRM_QUEUED_COPY_MAX are queued. */
#define CRM_COPY_INLINE_MAX (32u << 10)
#define CRM_QUEUED_COPY_MAX (1u << 20)
/* The compression level and path of a copy of `bytes` (CRM_LEVEL_CHANNEL: on the
 * data channel); *queued: a host-to-device copy travels queued with its data. */
int crm_conn_copy_level(uint64_t bytes, int *queued);
/* 1 when the calling thread holds the connection's lock (a fault there could not
 * be served: client/crm_managed.h). */
int crm_conn_held_here(void);

/* Adds bulk byte counts to the statistics. */
void crm_conn_count_bulk(uint64_t h2d, uint64_t d2h);
/* Adds bytes of copies the server made to or from shared pinned memory. */
void crm_conn_count_pinned(uint64_t bytes);
/* Snapshot of the counters. */
void crm_conn_get_stats(crm_conn_stats *out);
/* Writes the round trips so far by the call each waited for, "name=count ...",
 * largest first, NUL-terminated and cut to len; returns the whole text's length. */
size_t crm_conn_round_trips_by_call(char *buf, size_t len);

/* 1 when the open connection pools more than one server. */
int crm_conn_pooled(void);
/* Index of the server holding pooled device dev, -1 when there is none. */
int crm_conn_server_of(int dev);
/* Opens the sessions if needed: the index of the server of the calling thread's
 * device (0 without a pool), or -1 when there is no session. */
int crm_conn_thread_server(void);
/* The first device number of server `server`, or -1. */
int crm_conn_server_device(int server);
/* For a call that names device dev by number: sets *local to the server's own
 * number of it and sends the thread's next calls to its server. Returns the
 * thread's device, which crm_conn_device_end restores. */
int crm_conn_device_begin(int dev, int *local);
void crm_conn_device_end(int saved);

#endif
