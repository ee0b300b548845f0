/* crm_image.h -- device code images as the driver's cuModuleLoadData takes them: a
 * fatbinary, nvcc's wrapper around one, a CUDA ELF cubin, or PTX text. Finds which
 * one a buffer holds and how long it is, and reads its kernels from it. Pure: used
 * by the shim, the server and the emulated device. */
#ifndef CRM_IMAGE_H
#define CRM_IMAGE_H

#include <stddef.h>
#include "common/crm_fatbin.h"

enum crm_image_kind {
    CRM_IMAGE_NONE = 0,      /* none of these */
    CRM_IMAGE_FATBIN = 1,    /* starts with the fatbinary header */
    CRM_IMAGE_WRAPPER = 2,   /* nvcc's __fatDeviceText wrapper pointing at a fatbinary */
    CRM_IMAGE_ELF = 3,       /* a 64-bit ELF cubin */
    CRM_IMAGE_PTX = 4        /* NUL-terminated PTX text */
};

#define CRM_IMAGE_BYTES_MAX (1ull << 30) /* largest image accepted */

/* Kind of the image at data, of which at most maxlen bytes may be read. */
enum crm_image_kind crm_image_kind(const void *data, size_t maxlen);

/* Bytes of the image at data (for a wrapper: *inner is set to the fatbinary it
 * points to, whose size is returned; otherwise *inner = data). 0 when the buffer
 * holds no complete image within maxlen. */
size_t crm_image_size(const void *data, size_t maxlen, const void **inner);

/* 0 when data[0..len) is exactly one fatbinary, cubin or PTX image (never a
 * wrapper, whose pointer means nothing outside the process that made it), else -1.
 * What a server checks an image from the wire with. */
int crm_image_check(const void *data, size_t len);

/* Kernels, layouts and globals of a fatbinary, cubin or PTX image of len bytes.
 * 0, or -1 with a reason in err. */
int crm_module_info_from_image(const void *data, size_t len, crm_module_info *out, char *err, size_t errlen);

#endif
