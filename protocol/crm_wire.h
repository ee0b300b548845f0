/* crm_wire.h -- constants both ends agree on: default port, capability bits, names. */
#ifndef CRM_WIRE_H
#define CRM_WIRE_H

#define CRM_DEFAULT_PORT 7470          /* TCP port of cudarem-server when none is given */
#define CRM_DEFAULT_SERVER "tcp:127.0.0.1:7470"

/* Capability bits exchanged in HELLO; a peer ignores bits it does not know. */
#define CRM_CAP_BATCH   (1ull << 0)    /* CRM_EXEC takes more than one call */
#define CRM_CAP_BULK2D  (1ull << 1)    /* pitched bulk payloads */
#define CRM_CAP_SHM     (1ull << 2)    /* the data channel may use the shared window */
#define CRM_CAP_CHANNEL (1ull << 3)    /* bulk payloads on a data channel (protocol/crm_chan.h) */
#define CRM_CAP_OBSERVE (1ull << 4)    /* HELLO: an observer (cudarem-smi): no devices, no CUDA
                                          calls, not in the session table; STATUS and END are
                                          answered when its user is an administrator */
#define CRM_CAP_ADDR_SLOT (1ull << 5)  /* HELLO: device addresses lie in the address slot the
                                          client asked for (common/crm_emu_window.h) */

/* A reply no call asked for: the server ends the session, and the reply's results
 * are the reason, a string of at most CRM_GOODBYE_MAX bytes (an administrator
 * ended it, the server shuts down). Clients never use this xid for a call. */
#define CRM_GOODBYE_XID 0u
#define CRM_GOODBYE_MAX 200

/* Transfer buffer size of the RPC record streams (both ends). */
#define CRM_RPC_BUFSZ   (1u << 20)

/* Name of an API number from protocol/cudart.api, "unknown" when none. */
const char *crm_api_name(int num);

#endif
