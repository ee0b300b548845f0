/* crm_xfer.h -- bulk data between the wire and device memory: the H2D sink that
 * decodes payloads straight into device memory (emulated device) or through a
 * pinned staging buffer (GPU), and the D2H capture of data for a reply. */
#ifndef CRM_XFER_H
#define CRM_XFER_H

#include "protocol/crm_bulk.h"
#include "server/crm_session.h"

/* Installs the H2D sink for session s. */
void crm_xfer_init(crm_session *s);
/* Frees the staging buffer. */
void crm_xfer_fini(void);
/* Copies a checked device region into a buffer the reply owns and sends. */
cudaError_t crm_xfer_d2h(crm_session *s, uint64_t src, uint64_t spitch, uint64_t width, uint64_t height,
                         cudaStream_t stream, int async, crm_d2h_res *out);

#endif
