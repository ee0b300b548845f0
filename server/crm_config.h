/* crm_config.h -- cudarem-server --config FILE: a file whose keys are the long
 * options, one per line, `key = value` or `key` alone for a flag (`insecure`,
 * `scrub`); `#` starts a comment. The file's options come first and the command
 * line's after them, so a setting given on both takes the command line's value
 * and a repeatable one (`listen`, `quota`, ...) gets both. */
#ifndef CRM_CONFIG_H
#define CRM_CONFIG_H

#include <stddef.h>

/* The arguments cudarem-server runs with: argv[0], the options of the --config
 * file when argv names one (and only one), then the rest of argv. *out_argv is
 * malloc'd (strings and array; free with crm_config_free). 0, or -1 with err set
 * (the file cannot be read, or has a line that is no option). */
int crm_config_expand(int argc, char **argv, int *out_argc, char ***out_argv, char *err, size_t errlen);
void crm_config_free(int argc, char **argv);

#endif
