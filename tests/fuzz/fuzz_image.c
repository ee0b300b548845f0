/* fuzz_image.c -- libFuzzer harness over the device-code image readers a server
 * applies to module bytes from the wire: the image check, the module info of a
 * fatbinary/cubin/PTX image, each fatbinary entry's payload (zstd and LZ4
 * decompression), and the one-architecture slimming of a fatbinary. Seeds: the
 * fatbinaries nvcc builds for the kernel suite (tests/fuzz/fuzz.mk). */
#include <stdint.h>
#include <stdlib.h>
#include "common/crm_fatbin.h"
#include "common/crm_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    crm_module_info info;
    const void *inner = NULL;
    if (crm_image_kind(data, size) != CRM_IMAGE_WRAPPER) /* a wrapper's pointer is trusted: in-process only */
        (void)crm_image_size(data, size, &inner);
    if (crm_image_check(data, size) == 0 && crm_module_info_from_image(data, size, &info, err, sizeof err) == 0)
        crm_module_info_free(&info);
    crm_fatbin_entry e[16];
    int n = crm_fatbin_entries(data, size, e, 16);
    for (int i = 0; i < n && i < 16; i++) {
        unsigned char *out = NULL;
        size_t len = 0;
        if (crm_fatbin_payload(&e[i], &out, &len, err, sizeof err) == 0)
            free(out);
    }
    unsigned char *slim = NULL;
    size_t slim_len = 0;
    if (crm_fatbin_slim(data, size, 90, &slim, &slim_len) == 0)
        free(slim);
    return 0;
}
