/* crm_blas_log.c -- cuBLAS's logger in the shim: cublasLoggerConfigure,
 * cublasSetLoggerCallback, cublasGetLoggerCallback, and the environment variables
 * cuBLAS reads for it (CUBLAS_LOGINFO_DBG=1 turns logging on; CUBLAS_LOGDEST_DBG is
 * stdout, stderr or a file name). Once on, each cuBLAS call the shim sends to the
 * server (compute calls, queries, handle settings; not cuBLASLt's) is logged by
 * name, a line per call, to every destination configured and to the callback, which
 * receives each line. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"
#include "protocol/crm_wire.h"

static struct {
    pthread_mutex_t lock;
    int on, to_stdout, to_stderr;
    FILE *file;                  /* NULL: no file */
    cublasLogCallback callback;  /* NULL: none */
} crm__log = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t crm__log_once = PTHREAD_ONCE_INIT;

/* Lock held. Replaces the destinations; a file that cannot be opened is none. */
static void crm__log_set(int on, int to_stdout, int to_stderr, const char *file)
{
    if (crm__log.file != NULL)
        fclose(crm__log.file);
    crm__log.file = on && file != NULL && file[0] ? fopen(file, "a") : NULL;
    crm__log.on = on;
    crm__log.to_stdout = to_stdout;
    crm__log.to_stderr = to_stderr;
}

static void crm__log_from_env(void)
{
    const char *on = getenv("CUBLAS_LOGINFO_DBG"), *dest = getenv("CUBLAS_LOGDEST_DBG");
    if (on == NULL || strcmp(on, "1") != 0)
        return;
    pthread_mutex_lock(&crm__log.lock);
    if (dest == NULL || strcmp(dest, "stdout") == 0)
        crm__log_set(1, 1, 0, NULL);
    else if (strcmp(dest, "stderr") == 0)
        crm__log_set(1, 0, 1, NULL);
    else
        crm__log_set(1, 0, 0, dest);
    pthread_mutex_unlock(&crm__log.lock);
}

void crm_blas_log_call(int api)
{
    char line[160];
    pthread_once(&crm__log_once, crm__log_from_env);
    if (!__atomic_load_n(&crm__log.on, __ATOMIC_RELAXED))
        return;
    const char *name = crm_api_name(api);
    if (strncmp(name, "cublasLt", 8) == 0) /* cuBLASLt's calls: its own logger's */
        return;
    snprintf(line, sizeof line, "I! cuBLAS (cudarem) function %s() called\n", name);
    pthread_mutex_lock(&crm__log.lock);
    if (crm__log.on) {
        if (crm__log.to_stdout)
            fputs(line, stdout);
        if (crm__log.to_stderr)
            fputs(line, stderr);
        if (crm__log.file != NULL) {
            fputs(line, crm__log.file);
            fflush(crm__log.file);
        }
        if (crm__log.callback != NULL)
            crm__log.callback(line);
    }
    pthread_mutex_unlock(&crm__log.lock);
}

CRM_EXPORT cublasStatus_t cublasLoggerConfigure(int logIsOn, int logToStdOut, int logToStdErr,
                                                const char *logFileName)
{
    pthread_once(&crm__log_once, crm__log_from_env);
    pthread_mutex_lock(&crm__log.lock);
    crm__log_set(logIsOn != 0, logToStdOut != 0, logToStdErr != 0, logFileName);
    int missing = logIsOn && logFileName != NULL && logFileName[0] && crm__log.file == NULL;
    pthread_mutex_unlock(&crm__log.lock);
    return missing ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}

CRM_EXPORT cublasStatus_t cublasSetLoggerCallback(cublasLogCallback userCallback)
{
    pthread_mutex_lock(&crm__log.lock);
    crm__log.callback = userCallback;
    pthread_mutex_unlock(&crm__log.lock);
    return CUBLAS_STATUS_SUCCESS;
}

CRM_EXPORT cublasStatus_t cublasGetLoggerCallback(cublasLogCallback *userCallback)
{
    if (userCallback == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    pthread_mutex_lock(&crm__log.lock);
    *userCallback = crm__log.callback;
    pthread_mutex_unlock(&crm__log.lock);
    return CUBLAS_STATUS_SUCCESS;
}
