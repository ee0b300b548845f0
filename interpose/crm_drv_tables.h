/* crm_drv_tables.h -- the tables tools/gen_drv_tables.py generates from the CUDA
 * headers: CUresult names, and every (function, CUDA version) cuGetProcAddress can
 * be asked for with the symbol that implements it. */
#ifndef CRM_DRV_TABLES_H
#define CRM_DRV_TABLES_H

#include <stddef.h>

typedef struct crm_drv_errname {
    int value;              /* CUresult */
    const char *name;       /* "CUDA_ERROR_INVALID_VALUE" */
} crm_drv_errname;

typedef struct crm_drv_procent {
    const char *name;       /* "cuMemAlloc", as cuGetProcAddress is asked */
    int version;            /* CUDA version that introduced this ABI (3020) */
    void *fn;               /* its implementation (cuMemAlloc_v2) */
    void *fn_ptds;          /* per-thread default stream twin, or NULL */
} crm_drv_procent;

extern const crm_drv_errname crm_drv_errnames[];  /* sorted by value */
extern const size_t crm_drv_nerrnames;
extern const crm_drv_procent crm_drv_procs[];     /* sorted by name, then version */
extern const size_t crm_drv_nprocs;

#endif
