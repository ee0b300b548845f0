/* crm_cubin_ptx.h -- PTX kept beside machine code the client compiled itself
 * (NVRTC: interpose/crm_nvrtc.c), so that a module loaded from that cubin can run on
 * the emulated device, whose PTX engine needs PTX: the table maps the cubin's
 * SHA-256 to the PTX of the same program. Locked. */
#ifndef CRM_CUBIN_PTX_H
#define CRM_CUBIN_PTX_H

#include <stddef.h>

/* Keeps a copy of ptx[0..ptx_len) as the PTX of cubin[0..len); 0, or -1 when
 * memory runs out. A cubin already known keeps its first PTX. */
int crm_cubin_ptx_note(const void *cubin, size_t len, const char *ptx, size_t ptx_len);
/* The PTX kept for cubin[0..len) (NUL-terminated, *ptx_len bytes without the NUL),
 * or NULL. The table's copy: valid for the life of the process. */
const char *crm_cubin_ptx_find(const void *cubin, size_t len, size_t *ptx_len);

#endif
