/* crm_shm_guard.h -- a server's defence against a client that shrinks shared
 * memory it gave the server. A region the server attached (protocol/crm_shm.h) is
 * a file the client may still hold open; truncating it makes the server's next
 * touch of the lost pages raise SIGBUS, which would kill the session process in
 * the middle of a copy. With the guard installed, a SIGBUS inside an attached
 * region maps private zero pages over the whole region instead, so the access
 * completes, and records the fault: the session then ends with a reason its
 * client is told (server/crm_session.c). A SIGBUS anywhere else keeps its default
 * action. The approach is the one Wayland compositors take with clients' shared
 * buffers. */
#ifndef CRM_SHM_GUARD_H
#define CRM_SHM_GUARD_H

#include <signal.h>
#include <stddef.h>

#define CRM_SHM_GUARD_SLOTS 4160 /* attached regions at once: 4096 pinned regions, the window, spare */

/* Installs the SIGBUS handler; a fault then also sets *stop (may be NULL). 0 or -1. */
int crm_shm_guard_install(volatile sig_atomic_t *stop);
/* Watches [map, map + size); 0, or -1 when every slot is taken. */
int crm_shm_guard_add(void *map, size_t size);
/* Stops watching the region starting at map (nothing when it is not watched). */
void crm_shm_guard_remove(void *map);
/* 1 once a watched region faulted (since the last crm_shm_guard_reset). */
int crm_shm_guard_faulted(void);
/* Forgets a fault: a process that serves another session. */
void crm_shm_guard_reset(void);

#endif
