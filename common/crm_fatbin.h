/* crm_fatbin.h -- pure parsers of the device code nvcc embeds in programs: the
 * fatbinary container (entries, zstd/LZ4 compression), CUDA ELF cubins (kernels,
 * parameter layouts from .nv.info, __device__/__constant__ globals) and PTX
 * (.entry parameter lists). Used by the shim, the server and the emulated device.
 *
 * Every length read from the input is checked: malformed or truncated input gives
 * an error, never a read outside the buffer. Nothing here is locked or global.
 */
#ifndef CRM_FATBIN_H
#define CRM_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#define CRM_FATBIN_WRAPPER_MAGIC 0x466243b1u /* __fatDeviceText: {magic, version, data, ...} */
#define CRM_FATBIN_MAGIC 0xBA55ED50u         /* the fatbinary header data points to */
#define CRM_FATBIN_MAX (1ull << 30)          /* largest fatbinary accepted */

enum crm_fatbin_kind { CRM_FATBIN_PTX = 1, CRM_FATBIN_ELF = 2 };

/* One entry of a fatbinary, pointing into the parsed buffer. */
typedef struct crm_fatbin_entry {
    int kind;                       /* crm_fatbin_kind, or another value nvcc may add */
    unsigned arch;                  /* sm/compute number, e.g. 90 */
    uint64_t flags;                 /* entry flags (compression bits) */
    const unsigned char *payload;   /* stored bytes (compressed or not) */
    size_t payload_len;             /* stored byte count (without padding) */
    size_t raw_len;                 /* decompressed size; payload_len when plain */
} crm_fatbin_entry;

/* Total size (header + entries) of the fatbinary at data, which may be followed by
 * anything; 0 when data (at most maxlen readable bytes) is not a fatbinary. */
size_t crm_fatbin_size(const void *data, size_t maxlen);

/* Fills out[0..max) with the entries of the fatbinary data[0..len); returns the
 * number of entries (may exceed max: only max are stored), or -1 when malformed. */
int crm_fatbin_entries(const void *data, size_t len, crm_fatbin_entry *out, int max);

/* 1 when the entry is stored compressed (zstd or LZ4). */
int crm_fatbin_compressed(const crm_fatbin_entry *e);

/* The entry's bytes, decompressed when needed, in a malloc'd buffer *out of *outlen
 * bytes (a NUL follows them, not counted). 0, or -1 with a reason in err. */
int crm_fatbin_payload(const crm_fatbin_entry *e, unsigned char **out, size_t *outlen, char *err,
                       size_t errlen);

/* A fatbinary holding only the entry a device of architecture `arch` (e.g. 90) would
 * load from fatbin: its machine code (same major version, newest not newer than
 * the device), else its newest PTX not newer than the device; arch 0: the newest
 * cubin of any architecture, else the newest PTX. 0 and a malloc'd
 * *out of *outlen bytes; 1 when the whole image is what to use (a single entry,
 * or none that suits); -1 when fatbin is malformed. */
int crm_fatbin_slim(const void *fatbin, size_t len, unsigned arch, unsigned char **out, size_t *outlen);

/* ---- what a module contains ---------------------------------------------------- */

typedef struct crm_kparam_info {
    uint32_t offset;                /* byte offset in the parameter buffer */
    uint32_t size;                  /* bytes */
} crm_kparam_info;

typedef struct crm_kernel_info {
    char *name;                     /* mangled name */
    uint32_t nparams;               /* parameters, by ordinal */
    crm_kparam_info *params;        /* nparams entries */
    uint32_t param_bytes;           /* end of the last parameter */
} crm_kernel_info;

typedef struct crm_global_info {
    char *name;                     /* name the ELF gives (__cudaRegisterVar's deviceName) */
    uint64_t size;                  /* bytes */
    unsigned char *init;            /* initial contents (size bytes), NULL: zeros */
    int constant;                   /* 1 for __constant__ */
} crm_global_info;

typedef struct crm_module_info {
    crm_kernel_info *kernels;       /* from the chosen image */
    size_t nkernels;
    crm_global_info *globals;       /* ELF symbols, or PTX module-scope variables */
    size_t nglobals;
    int has_elf;                    /* the fatbinary holds a cubin */
    int has_ptx;                    /* the fatbinary holds PTX */
    int from_ptx;                   /* the layouts were read from PTX (no cubin) */
    unsigned arch;                  /* arch of the chosen image */
} crm_module_info;

/* Reads kernels, layouts and globals from a fatbinary (the cubin of the highest
 * arch, else the PTX of the highest arch). 0, or -1 with a reason in err. */
int crm_module_info_parse(const void *fatbin, size_t len, crm_module_info *out, char *err, size_t errlen);
/* Same from one cubin (ELF) or one PTX text. */
int crm_module_info_from_elf(const void *elf, size_t len, crm_module_info *out, char *err, size_t errlen);
int crm_module_info_from_ptx(const char *ptx, size_t len, crm_module_info *out, char *err, size_t errlen);
void crm_module_info_free(crm_module_info *m);
/* The kernel or global called name, or NULL. */
const crm_kernel_info *crm_module_info_kernel(const crm_module_info *m, const char *name);
const crm_global_info *crm_module_info_global(const crm_module_info *m, const char *name);

#endif
