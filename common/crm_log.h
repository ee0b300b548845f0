/* crm_log.h -- leveled logging to stderr for the shim and the server. */
#ifndef CRM_LOG_H
#define CRM_LOG_H

enum crm_log_level { CRM_LOG_ERROR, CRM_LOG_WARN, CRM_LOG_INFO, CRM_LOG_DEBUG };

/* Sets the program tag ("cudarem", "cudarem-server") and the most verbose level shown. */
void crm_log_init(const char *tag, enum crm_log_level level);
/* Parses "error|warn|info|debug"; returns -1 when the name is unknown. */
int crm_log_parse_level(const char *name);
void crm_log(enum crm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bounds the lines this process writes: `burst` at once, then `per_second` (a token
 * bucket; 0, 0: no bound, the default). A line over the bound is dropped and counted;
 * the next line written is preceded by how many were dropped. A server's session
 * process sets it, so that a client cannot make the server fill its log. */
void crm_log_limit(int per_second, int burst);
/* Writes the count of lines dropped since the last written one, if any (a session
 * process, before its last line). */
void crm_log_flush_dropped(void);
/* Writes one line as it is (no tag), within the bound; for text another library
 * would have printed (the emulated device's messages). */
void crm_log_raw(const char *text);

#define crm_error(...) crm_log(CRM_LOG_ERROR, __VA_ARGS__)
#define crm_warn(...)  crm_log(CRM_LOG_WARN, __VA_ARGS__)
#define crm_info(...)  crm_log(CRM_LOG_INFO, __VA_ARGS__)
#define crm_debug(...) crm_log(CRM_LOG_DEBUG, __VA_ARGS__)

#endif
