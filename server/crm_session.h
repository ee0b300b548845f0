/* crm_session.h -- one client session, served by its own process: the RPC loop, the
 * tables of everything the client owns (device memory, streams, events), and the
 * lookups handlers use to check what arrives over the wire before using it. */
#ifndef CRM_SESSION_H
#define CRM_SESSION_H

#include <stdint.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include "common/crm_idmap.h"
#include "common/crm_rangemap.h"

/* A stream or event the client created under its own id. */
typedef struct crm_session_obj {
    void *handle;          /* cudaStream_t or cudaEvent_t of the backend */
    int device;            /* device current when it was created */
} crm_session_obj;

typedef struct crm_session {
    uint64_t id;           /* session number, unique per server run */
    int fd;                /* the connection */
    char peer[160];        /* client address (and host/pid after HELLO) */
    const char *refuse;    /* non-NULL: answer HELLO with this reason, then end */
    int hello_done;        /* HELLO accepted: calls may run */
    crm_rangemap allocs;   /* device memory the client owns (base, size, device) */
    crm_idmap streams;     /* client id -> crm_session_obj */
    crm_idmap events;      /* client id -> crm_session_obj */
    struct timespec start; /* for the end-of-session log line */
    uint64_t calls;        /* CUDA calls executed */
    uint64_t bytes_in;     /* bulk bytes received */
    uint64_t bytes_out;    /* bulk bytes sent */
    unsigned batch_index;  /* position of the running call in its batch */
    unsigned batch_len;    /* calls in the running batch */
} crm_session;

/* Serves the connection until the client leaves or SIGTERM; frees everything the
 * client owned, logs the session's end and returns the process exit status. */
int crm_session_run(uint64_t id, int fd, const char *peer, const char *refuse);

/* Backend stream of client id (0 = legacy default stream) or cudaErrorInvalidResourceHandle. */
cudaError_t crm_session_stream(crm_session *s, uint64_t id, cudaStream_t *out);
cudaError_t crm_session_event(crm_session *s, uint64_t id, cudaEvent_t *out);
/* cudaSuccess when the pitched region (rows of width bytes, pitch apart) lies in one
 * allocation of the session; cudaErrorInvalidPitchValue when width > pitch with
 * several rows; cudaErrorInvalidValue otherwise. */
cudaError_t crm_session_check_region(crm_session *s, uint64_t addr, uint64_t pitch, uint64_t width,
                                     uint64_t height);
/* Device current in the backend. */
int crm_session_device(void);
/* Frees every allocation, stream and event of `device` (-1: of every device),
 * calling the backend unless `forget_only`. */
void crm_session_release(crm_session *s, int device, int forget_only);

#endif
