/* crm_graph_cond.h -- conditional handles of graphs (cudaGraphConditionalHandle).
 * A handle is the device address of the 32-bit value its conditional nodes read
 * (a 4-byte allocation of the session): kernels set it with
 * cudaGraphSetConditional, which the emulated device's PTX engine turns into a
 * store there (server/emu/ptx/ptx_devrt.c), and a conditional node's record reads
 * it when the work before it is done (server/crm_h_graph_cond.c). A handle is held
 * by its graph, the graph's copies and their nodes; the last holder gives the value
 * back to the device. Thread-safe. */
#ifndef CRM_GRAPH_COND_H
#define CRM_GRAPH_COND_H

#include <stdint.h>

typedef struct crm_gcond {
    uint64_t cell;        /* the handle: the value's device address */
    unsigned deflt;       /* defaultLaunchValue */
    unsigned flags;       /* cudaGraphCondAssignDefault: deflt at each launch */
    unsigned holders;
} crm_gcond;

/* A handle of the device allocation `cell` (the caller made it, 4 bytes), held once;
 * the value's first store, deflt, is queued. NULL when memory runs out. */
crm_gcond *crm_gcond_new(uint64_t cell, unsigned deflt, unsigned flags);
void crm_gcond_hold(crm_gcond *c);
/* One holder fewer; the last frees the value's allocation (queued). */
void crm_gcond_release(crm_gcond *c);

#endif
