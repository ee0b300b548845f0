/* crm_handles.h -- per-thread CUDA state kept by the client: last error, current
 * device, per-thread default stream; and the mapping between the stream and event
 * handles programs hold and the ids the wire carries (chosen by the client). */
#ifndef CRM_HANDLES_H
#define CRM_HANDLES_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#define CRM_PTDS_OFF 0   /* stream 0 means the legacy default stream */
#define CRM_PTDS_ON  1   /* stream 0 means the per-thread default stream (_ptds/_ptsz) */

#define CRM_WIRE_LEGACY_STREAM 0ull          /* wire id of the legacy default stream */
#define CRM_WIRE_BAD_HANDLE    UINT64_MAX    /* never a live id: the server rejects it */

/* Records err as the thread's last error when it is not cudaSuccess; returns err. */
cudaError_t crm_set_error(cudaError_t err);
/* Returns the thread's last error and resets it to cudaSuccess. */
cudaError_t crm_take_error(void);
/* Returns the thread's last error, leaving it set. */
cudaError_t crm_peek_error(void);
/* Sets the thread's last error to err, cudaSuccess included. */
void crm_put_error(cudaError_t err);

int crm_thread_device(void);
/* This thread's number, 1 and up, never reused: who issued a queued call. */
uint64_t crm_thread_serial(void);
void crm_set_thread_device(int device);

/* New handles with fresh wire ids (the server learns them at creation). */
cudaStream_t crm_stream_new(uint64_t *id);
cudaEvent_t crm_event_new(uint64_t *id);
/* A fresh wire id for a library handle (cuBLAS, cuDNN), also its handle value. */
uint64_t crm_handle_new_id(void);
/* A fresh wire id that every server of a pool may know under the same number (a
 * device code module's, a kernel's): calls naming it go to the calling thread's
 * device's server, not to one owner's. */
uint64_t crm_handle_new_shared_id(void);
/* Wire id of a handle; stream 0 follows ptds. The per-thread default stream is
 * created on the server at its first use by the thread. */
uint64_t crm_stream_wire(cudaStream_t stream, int ptds);
uint64_t crm_event_wire(cudaEvent_t event);
/* The device a stream, event or library handle was made on when several servers
 * are pooled (the thread's device at its creation), else -1. */
int crm_handles_device(uint64_t id);
/* Forgets that, when the object is destroyed. */
void crm_handles_forget(uint64_t id);
/* A stream or event the server was asked to create (its creation queued). */
void crm_object_live(uint64_t id);
/* The same for a stream created with `flags` (cudaStreamNonBlocking or not). */
void crm_stream_live(uint64_t id, unsigned flags);
/* 1 when stream `id` is a live stream created non-blocking; 0 for any other (the
 * per-thread default stream, a stream the client does not know: blocking ones). */
int crm_stream_nonblocking(uint64_t id);
/* 1 when id is a stream or event created and not destroyed since (nor reset away):
 * it is forgotten, and its destruction may be queued; 0 when unknown. */
int crm_object_take_live(uint64_t id);
/* Forgets the per-thread streams of every thread, and which streams and events are
 * live (after cudaDeviceReset). */
void crm_handles_reset(void);

#endif
