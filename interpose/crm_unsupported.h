/* crm_unsupported.h -- weak stand-ins for every export of the libraries cudarem
 * replaces (libcudart.so.13, libcublas.so.13, libcudnn.so.9, libnvidia-ml.so.1) that it does not
 * implement: each returns its library's "not supported" status and logs its name
 * once. A strong definition elsewhere in the library replaces the stand-in at link
 * time. Functions whose result is not a status must be implemented for real. */
#ifndef CRM_UNSUPPORTED_H
#define CRM_UNSUPPORTED_H

/* Logs `name` once (per *logged flag) and returns `status`, the library's "not
 * supported" code; with last_error set (the runtime's own calls) it also becomes
 * the thread's last error. */
int crm_unsupported(const char *name, int *logged, int status, int last_error);

#define CRM_UNSUPPORTED(NAME, STATUS, LAST_ERROR)                          \
    __attribute__((weak, visibility("default"))) int NAME(void);           \
    __attribute__((weak, visibility("default"))) int NAME(void)            \
    {                                                                      \
        static int logged;                                                 \
        return crm_unsupported(#NAME, &logged, STATUS, LAST_ERROR);        \
    }

#endif
