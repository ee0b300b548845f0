/* crm_unsupported.h -- weak stand-ins for every libcudart.so.13 export cudarem does
 * not implement: each returns cudaErrorNotSupported and logs its name once. A
 * strong definition elsewhere in the library replaces the stand-in at link time. */
#ifndef CRM_UNSUPPORTED_H
#define CRM_UNSUPPORTED_H

/* Logs `name` once (per *logged flag) and returns cudaErrorNotSupported. */
int crm_unsupported(const char *name, int *logged);

#define CRM_UNSUPPORTED(NAME)                                              \
    __attribute__((weak, visibility("default"))) int NAME(void);           \
    __attribute__((weak, visibility("default"))) int NAME(void)            \
    {                                                                      \
        static int logged;                                                 \
        return crm_unsupported(#NAME, &logged);                            \
    }

#endif
