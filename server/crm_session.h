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
#include "server/crm_limits.h"
#include "server/crm_quota.h"

/* A stream, event or library handle the client created under its own id. */
typedef struct crm_session_obj {
    void *handle;                  /* cudaStream_t, cudaEvent_t, cublasHandle_t, ... */
    int device;                    /* device current when it was created */
    int kind;                      /* crm_handle_kind, for library handles */
    void (*destroy)(void *handle); /* releases a library handle at session end */
} crm_session_obj;

/* crm_range.kind of a module's __device__/__constant__ global in crm_session.allocs:
 * copies may use it, cudaFree may not. */
#define CRM_RANGE_SYMBOL 0x53594d42u
/* crm_range.kind of a mapping of physical memory (server/crm_h_vmm.c): copies may
 * use it, cudaFree may not; the session unmaps it when it ends. */
#define CRM_RANGE_VMM 0x564d4d4du

/* Kinds of library handles in crm_session.handles; the generated handlers name
 * them CRM_HANDLE_<C type>. */
enum crm_handle_kind {
    CRM_HANDLE_cublasHandle_t = 1,
    CRM_HANDLE_cudnnHandle_t = 2,
    CRM_HANDLE_kernel_module = 3,  /* a loaded fatbinary (server/crm_h_kernels.c) */
    CRM_HANDLE_kernel_func = 4,    /* a kernel of a loaded module */
    CRM_HANDLE_cublasLtHandle_t = 5,
    CRM_HANDLE_vmm_phys = 6,       /* a physical allocation of the driver's VMM (server/crm_h_vmm.c) */
};

typedef struct crm_session {
    uint64_t id;           /* session number, unique per server run */
    int fd;                /* the connection */
    char peer[160];        /* client address (and host/pid after HELLO) */
    char user[72];         /* who it runs for, once admitted (server/crm_auth_srv.h) */
    int auth_failed;       /* HELLO refused for want of a valid credential */
    crm_quota quota;       /* the user's limits (--quota) */
    const char *refuse;    /* non-NULL: answer HELLO with this reason, then end */
    int refuse_status;     /* and this status: CRM_REFUSED or CRM_REFUSED_BUSY */
    int hello_done;        /* HELLO accepted: calls may run */
    int observer;          /* admitted as an observer (CRM_CAP_OBSERVE): no calls, status only */
    crm_rangemap allocs;   /* device memory the client owns (base, size, device) */
    crm_idmap streams;     /* client id -> crm_session_obj */
    crm_idmap events;      /* client id -> crm_session_obj */
    crm_idmap handles;     /* client id -> crm_session_obj of a library handle */
    crm_idmap hostmem;     /* client id -> a shared pinned host region (server/crm_h_hostmem.c) */
    crm_idmap graphs;      /* client id -> a graph program (server/crm_h_graph.c) */
    uint64_t graph_bytes;  /* what the programs hold in all */
    int replaying;         /* a program runs: every stream named is replay_stream */
    cudaStream_t replay_stream;
    unsigned replay_depth; /* conditional bodies running inside one another */
    cudaStream_t capture_stream; /* where programs are captured into CUDA graphs (--graph-capture) */
    struct timespec start; /* for the end-of-session log line */
    uint64_t calls;        /* CUDA calls executed */
    uint64_t bytes_in;     /* bulk bytes received */
    uint64_t bytes_out;    /* bulk bytes sent */
    uint64_t bytes_pinned_in;  /* bytes copied from shared pinned host memory to device */
    uint64_t bytes_pinned_out; /* bytes copied from device to shared pinned host memory */
    uint64_t allocated;    /* device memory allocated, in all (for --scrub's log line) */
    uint64_t scrubbed;     /* bytes zeroed before they were freed (--scrub) */
    unsigned batch_index;  /* position of the running call in its batch */
    unsigned batch_len;    /* calls in the running batch */
    crm_posted_failure posted; /* first failure of a posted batch, for the next reply */
    uint64_t counted[CRM_LIMIT_KINDS]; /* holdings no table says (server/crm_session_limits.c) */
    unsigned limits_logged;    /* bit k: reaching limit k was logged */
    uint64_t host_memory;      /* private resident bytes, last read */
    uint64_t host_memory_at;   /* when, CLOCK_MONOTONIC ns */
} crm_session;

/* The lines a session process may write to the server's log: this many at once,
 * then this many a second (common/crm_log.h); the rest are counted, and the count
 * is logged. */
#define CRM_SESSION_LOG_BURST 100
#define CRM_SESSION_LOG_PER_SECOND 10

/* Exit status of a session process whose client failed to authenticate: the
 * daemon counts these per peer (server/crm_admit.h). */
#define CRM_EXIT_AUTH_FAILED 3

/* Serves the connection until the client leaves or SIGTERM; frees everything the
 * client owned, logs the session's end and returns the process exit status. */
int crm_session_run(uint64_t id, int fd, const char *peer, const char *refuse, int refuse_status);

/* Frees the session's graph programs (server/crm_h_graph.c). */
void crm_session_graphs_free(crm_session *s);
/* Backend stream of client id (0 = legacy default stream) or cudaErrorInvalidResourceHandle. */
cudaError_t crm_session_stream(crm_session *s, uint64_t id, cudaStream_t *out);
cudaError_t crm_session_event(crm_session *s, uint64_t id, cudaEvent_t *out);
/* cudaSuccess when the pitched region (rows of width bytes, pitch apart) lies in one
 * allocation of the session (or in adjacent mappings of one reservation); cudaErrorInvalidPitchValue when width > pitch with
 * several rows; cudaErrorInvalidValue otherwise. */
cudaError_t crm_session_check_region(crm_session *s, uint64_t addr, uint64_t pitch, uint64_t width,
                                     uint64_t height);
/* Library handle `id` of `kind`: 0 and *out, or -1 when unknown or of another kind. */
int crm_session_handle(crm_session *s, int kind, uint64_t id, void **out);
/* Remembers a library handle created for the client; `destroy` releases it if the
 * session ends first. 0, or -1 when id is taken or memory runs out. */
int crm_session_handle_add(crm_session *s, int kind, uint64_t id, void *handle, void (*destroy)(void *));
/* Forgets handle `id` of `kind`, storing it in *out: 0, or -1 when unknown. */
int crm_session_handle_del(crm_session *s, int kind, uint64_t id, void **out);
/* Charges bytes the session is about to allocate on device to its user: 0, or -1
 * when that would take the user past its --quota there (nothing charged: the
 * allocation must fail with the backend's out-of-memory error). */
int crm_session_charge(crm_session *s, int device, uint64_t bytes);
/* Narrows a device's free and total memory to what the session's user may still
 * take of it under --quota (the slice a client sees). */
void crm_session_slice(crm_session *s, int device, size_t *free_bytes, size_t *total_bytes);
/* What the session holds of a --session-limits kind (server/crm_limits.h). */
uint64_t crm_session_held(crm_session *s, int kind);
/* Before creating `more` of kind (not CRM_LIMIT_HOST_MEMORY, which every creation
 * checks): 0 when the session's limits allow it, else -1, and the creation must fail
 * as out of memory (the limit's first hit is logged). */
int crm_session_room(crm_session *s, int kind, uint64_t more);
/* Counts a creation (delta > 0) or release of kind that the session's tables do
 * not show by themselves: library handles, modules, their bytes, kernels, VMM
 * physical allocations. */
void crm_session_count(crm_session *s, int kind, int64_t delta);
/* Publishes the holdings for cudarem-smi and the metrics. */
void crm_session_publish_held(crm_session *s);
/* Unmaps every shared pinned host region of the session, once the device is idle. */
void crm_session_hostmem_release(crm_session *s);
/* Device current in the backend. */
int crm_session_device(void);
/* Frees every allocation, stream and event of `device` (-1: of every device),
 * calling the backend unless `forget_only`. */
void crm_session_release(crm_session *s, int device, int forget_only);

#endif
