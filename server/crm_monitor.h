/* crm_monitor.h -- what every session of one server knows of the others: the table
 * of sessions (client pid, device memory held per device) and, on the emulated
 * device, the recent time devices spent executing work. It lives in memory shared by
 * the daemon and the session processes it forks; NVML's answers come from it. */
#ifndef CRM_MONITOR_H
#define CRM_MONITOR_H

#include <stdint.h>
#include <sys/types.h>

#define CRM_MONITOR_DEVICES 64   /* devices whose figures are kept */
#define CRM_MONITOR_SESSIONS 1024 /* sessions listed at once; more are not listed */
#define CRM_MONITOR_USERS 1024    /* users with sessions at once; more are not counted */

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

/* The calling session process registers itself for user (at HELLO) and leaves (at
 * its end). 0, or -1 when user already has max_sessions sessions (0: no limit);
 * then it is not registered. */
int crm_monitor_session_start(uint64_t session_id, uint32_t client_pid, const char *user, int max_sessions);
void crm_monitor_session_end(void);
/* The daemon forgets a session process it reaped (one that died without leaving). */
void crm_monitor_forget(pid_t server_pid);

/* Adds (or, negative, removes) bytes of device memory the calling session holds. */
void crm_monitor_charge(int device, int64_t bytes);
/* Adds bytes the calling session is about to hold on device unless its user would
 * then hold more than limit there (0: no limit). 0, or -1 (nothing charged). */
int crm_monitor_charge_within(int device, uint64_t bytes, uint64_t limit);
/* Bytes of device memory the calling session's user holds on device. */
uint64_t crm_monitor_user_used(int device);

/* Records that device spent [t0_ns, t1_ns) (CLOCK_MONOTONIC) executing work of kind. */
void crm_monitor_busy(int device, enum crm_monitor_busy kind, uint64_t t0_ns, uint64_t t1_ns);
/* Percent of the last second (at least 900 ms of it) that device spent busy with
 * each kind of work, capped at 100. */
void crm_monitor_utilization(int device, unsigned *compute, unsigned *memory);

/* Fills out[] (room for max) with the sessions holding memory on device or having
 * it selected; returns how many there are (may exceed max). */
int crm_monitor_processes(int device, crm_monitor_proc *out, int max);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t crm_monitor_now_ns(void);

#endif
