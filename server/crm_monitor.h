/* crm_monitor.h -- what every session of one server knows of the others: the table
 * of sessions (client pid, device memory held per device) and, on the emulated
 * device, the recent time devices spent executing work. It lives in memory shared by
 * the daemon and the session processes it forks; NVML's answers come from it. */
#ifndef CRM_MONITOR_H
#define CRM_MONITOR_H

#include <stdint.h>
#include <sys/types.h>
#include "server/crm_limits.h"

#define CRM_MONITOR_DEVICES 64   /* devices whose figures are kept */
#define CRM_MONITOR_SESSIONS 1024 /* sessions listed at once; more are not listed */
#define CRM_MONITOR_USERS 1024    /* users with sessions at once; more are not counted */
#define CRM_MONITOR_PEER_MAX 160  /* a session's peer text */
#define CRM_MONITOR_NAME_MAX 96   /* a device's name */

/* What a device was busy with, for utilisation. */
enum crm_monitor_busy { CRM_BUSY_COMPUTE = 0, CRM_BUSY_MEMORY = 1 };

/* One listed session. */
typedef struct crm_monitor_proc {
    uint32_t client_pid;      /* the client's process id on its own host (HELLO) */
    pid_t server_pid;         /* the session's process here */
    uint64_t used;            /* device memory it holds on the device asked, bytes */
} crm_monitor_proc;

/* Maps the shared table; the daemon calls it before forking any session, so every
 * session sees the same one. A session process started without it (tests) maps a
 * private table at first use and sees only itself. 0, or -1 when mmap fails. */
int crm_monitor_init(void);

/* The daemon's --max-sessions (0: no limit), before it forks any session. */
void crm_monitor_set_max_sessions(int max_sessions);

/* The calling session process registers itself for user (at HELLO) and leaves (at
 * its end). 0, or -1 when user already has max_sessions sessions (0: no limit),
 * or -2 when the server has its --max-sessions admitted; then it is not
 * registered. */
int crm_monitor_session_start(uint64_t session_id, uint32_t client_pid, const char *user, int max_sessions);
void crm_monitor_session_end(void);
/* The daemon forgets a session process it reaped (one that died without leaving). */
void crm_monitor_forget(pid_t server_pid);

/* Adds (or, negative, removes) bytes of device memory the calling session holds. */
void crm_monitor_charge(int device, int64_t bytes);
/* Adds bytes the calling session is about to hold on device unless its user would
 * then hold more than limit there (0: no limit), or bytes is more than any device
 * holds (beyond INT64_MAX). 0, or -1 (nothing charged). */
int crm_monitor_charge_within(int device, uint64_t bytes, uint64_t limit);
/* Bytes of device memory the calling session's user holds on device. */
uint64_t crm_monitor_user_used(int device);

/* Records that device spent [t0_ns, t1_ns) (CLOCK_MONOTONIC) executing work of kind. */
void crm_monitor_busy(int device, enum crm_monitor_busy kind, uint64_t t0_ns, uint64_t t1_ns);
/* Adds ns of kernel time to the calling session's (on a GPU: server/crm_gpu_time.h). */
void crm_monitor_add_kernel_time(uint64_t ns);
/* Percent of the last second (at least 900 ms of it) that device spent busy with
 * each kind of work, capped at 100. */
void crm_monitor_utilization(int device, unsigned *compute, unsigned *memory);

/* Fills out[] (room for max) with the sessions holding memory on device or having
 * it selected; returns how many there are (may exceed max). */
int crm_monitor_processes(int device, crm_monitor_proc *out, int max);

#define CRM_MONITOR_REFUSALS_LOGGED 10 /* refusals logged per second at most */

/* Whether a refused HELLO may be logged now: at most CRM_MONITOR_REFUSALS_LOGGED
 * a second across every session process, so that strangers cannot fill the log.
 * 1 with *quiet set to the refusals left unlogged since the last one logged (to
 * say so), or 0 (this one counted among them). */
int crm_monitor_refusal_log(uint64_t *quiet);

/* What happened to sessions, counted since the daemon started. */
enum crm_monitor_event {
    CRM_EVENT_ADMITTED = 0,    /* a session opened */
    CRM_EVENT_REFUSED = 1,     /* HELLO refused (version, quota, full server, credentials) */
    CRM_EVENT_AUTH_FAILED = 2, /* of which for want of a valid credential */
    CRM_EVENT_ENDED_BY_ADMIN = 3,
    CRM_MONITOR_EVENTS = 4
};

/* One session as the status request and the metrics show it. */
typedef struct crm_monitor_session {
    uint64_t id;
    char user[72];
    char peer[CRM_MONITOR_PEER_MAX];
    uint32_t client_pid;
    pid_t server_pid;
    int64_t start_unix;       /* when it was admitted, seconds since the epoch */
    uint64_t calls, bytes_in, bytes_out;
    uint64_t memory;          /* device memory held, bytes, on all devices */
    uint64_t kernel_ns;       /* device time its work took (emulated device; 0 on a GPU) */
    uint64_t devices;         /* bit d: it used device d (d < 64) */
    uint64_t held[CRM_LIMIT_KINDS]; /* objects, bytes and host memory it holds (server/crm_limits.h) */
} crm_monitor_session;

/* One device as a session described it, with what the table adds. */
typedef struct crm_monitor_device {
    int known;                /* a session has described it */
    char name[CRM_MONITOR_NAME_MAX];
    uint64_t total;           /* memory, bytes */
    uint64_t used;            /* held by cudarem sessions, bytes */
    unsigned util_compute, util_memory; /* percent of the last second (emulated device) */
    int sessions;             /* sessions that used it */
} crm_monitor_device;

/* Upper bounds of the buckets of calls' execution times (crm_monitor_call_time). */
#define CRM_MONITOR_CALL_BUCKETS 12
extern const uint64_t crm_monitor_call_bounds_ns[CRM_MONITOR_CALL_BUCKETS];

/* The server as a whole. */
typedef struct crm_monitor_server {
    int64_t start_unix;
    char backend[16];
    uint64_t events[CRM_MONITOR_EVENTS];
    uint64_t call_buckets[CRM_MONITOR_CALL_BUCKETS + 1]; /* calls per bucket (not cumulative); last: longer */
    uint64_t call_ns;                                     /* their execution times, summed */
    uint64_t limit_hits[CRM_LIMIT_KINDS];                 /* creations --session-limits refused */
} crm_monitor_server;

/* Daemon: names the backend sessions run on. */
void crm_monitor_set_backend(const char *name);
/* Session: its peer, once admitted (after crm_monitor_session_start). */
void crm_monitor_session_describe(const char *peer);
/* Session: its counters so far, after each batch. */
void crm_monitor_session_counts(uint64_t calls, uint64_t bytes_in, uint64_t bytes_out);
/* Session: what it holds of each kind --session-limits bounds. */
void crm_monitor_session_held(const uint64_t held[CRM_LIMIT_KINDS]);
/* Session: a creation of kind was refused by its limit. */
void crm_monitor_limit_hit(int kind);
/* Session: what device is (the first description of each device stays). */
void crm_monitor_device_describe(int device, const char *name, uint64_t total);
/* Session: one call took ns to execute here (decoded to answered). */
void crm_monitor_call_time(uint64_t ns);
/* Counts one event. */
void crm_monitor_note(enum crm_monitor_event ev);
/* Fills out[] (room for max) with the registered sessions; returns how many there
 * are (may exceed max). */
int crm_monitor_sessions(crm_monitor_session *out, int max);
/* Fills out[0 .. max-1] with devices 0 .. max-1; returns how many are known. */
int crm_monitor_devices(crm_monitor_device *out, int max);
void crm_monitor_server_info(crm_monitor_server *out);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t crm_monitor_now_ns(void);

#endif
