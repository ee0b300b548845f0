/* crm_config.c -- reading the --config file into arguments (server/crm_config.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/crm_config.h"

#define CRM_CONFIG_LINE_MAX 1024
#define CRM_CONFIG_ARGS_MAX 512

typedef struct crm__args {
    char **v;
    int n;
} crm__args;

static int crm__push(crm__args *a, const char *text, size_t len)
{
    if (a->n + 1 >= CRM_CONFIG_ARGS_MAX)
        return -1;
    a->v[a->n] = strndup(text, len);
    if (a->v[a->n] == NULL)
        return -1;
    a->v[++a->n] = NULL;
    return 0;
}

static char *crm__trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* One line "key = value" or "key" into --key [value]. 0, or -1. */
static int crm__line(crm__args *a, char *line)
{
    char opt[CRM_CONFIG_LINE_MAX + 2];
    line[strcspn(line, "#")] = '\0';
    char *text = crm__trim(line), *eq = strchr(text, '=');
    if (*text == '\0')
        return 0;
    if (eq != NULL)
        *eq = '\0';
    char *key = crm__trim(text);
    if (*key == '\0' || strspn(key, "abcdefghijklmnopqrstuvwxyz-") != strlen(key) || strcmp(key, "config") == 0)
        return -1;
    snprintf(opt, sizeof opt, "--%s", key);
    if (crm__push(a, opt, strlen(opt)) != 0)
        return -1;
    if (eq == NULL)
        return 0;
    char *value = crm__trim(eq + 1);
    return *value == '\0' ? -1 : crm__push(a, value, strlen(value));
}

static int crm__read_file(crm__args *a, const char *path, char *err, size_t errlen)
{
    char line[CRM_CONFIG_LINE_MAX];
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
        return -1;
    }
    int number = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        number++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            snprintf(err, errlen, "--config %s:%d: line too long", path, number);
            rc = -1;
        } else if (crm__line(a, line) != 0) {
            snprintf(err, errlen, "--config %s:%d: expected 'option = value' or 'option' (a long option "
                                  "without its dashes, see --help)", path, number);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

/* The file --config names in argv, NULL when none; -1 in *twice when named twice. */
static const char *crm__config_path(int argc, char **argv, int *twice)
{
    const char *path = NULL;
    *twice = 0;
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            value = argv[++i];
        else if (strncmp(argv[i], "--config=", 9) == 0)
            value = argv[i] + 9;
        if (value != NULL && path != NULL)
            *twice = 1;
        if (value != NULL)
            path = value;
    }
    return path;
}

int crm_config_expand(int argc, char **argv, int *out_argc, char ***out_argv, char *err, size_t errlen)
{
    int twice;
    crm__args a = {calloc(CRM_CONFIG_ARGS_MAX, sizeof(char *)), 0};
    const char *path = crm__config_path(argc, argv, &twice);
    int rc = a.v != NULL && crm__push(&a, argv[0], strlen(argv[0])) == 0 ? 0 : -1;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    if (rc == 0 && twice) {
        snprintf(err, errlen, "--config given twice");
        rc = -1;
    }
    if (rc == 0 && path != NULL)
        rc = crm__read_file(&a, path, err, errlen);
    for (int i = 1; rc == 0 && i < argc; i++)
        if (crm__push(&a, argv[i], strlen(argv[i])) != 0) {
            snprintf(err, errlen, "too many arguments");
            rc = -1;
        }
    if (rc != 0) {
        crm_config_free(a.n, a.v);
        return -1;
    }
    *out_argc = a.n;
    *out_argv = a.v;
    return 0;
}

void crm_config_free(int argc, char **argv)
{
    if (argv == NULL)
        return;
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}
