/* crm_options.h -- command line of cudarem-server. */
#ifndef CRM_OPTIONS_H
#define CRM_OPTIONS_H

#include "common/crm_addr.h"
#include "server/crm_auth_srv.h"

#define CRM_MAX_LISTEN 16

enum crm_device_choice { CRM_DEVICE_AUTO, CRM_DEVICE_CUDA, CRM_DEVICE_EMU };

typedef struct crm_options {
    crm_addr listen[CRM_MAX_LISTEN]; /* --listen, in order given */
    int nlisten;
    enum crm_device_choice device;   /* --device */
    int gpu;                         /* --gpu, -1 when not given */
    int max_sessions;                /* --max-sessions: admitted sessions at once */
    int login_grace;                 /* --login-grace: seconds to finish the handshake (0: none) */
    int max_startups;                /* --max-startups: connections not yet admitted, at once */
    int max_startups_per_peer;       /* --max-startups-per-peer: of them, from one source */
    int log_level;                   /* --log-level */
    crm_auth_policy auth;            /* --auth-file, --allow-uid, --insecure */
    const char *add_user;            /* --add-user: make a token, then exit */
    int add_admin;                   /* --admin: that user is an administrator */
    crm_addr metrics;                /* --metrics ADDR */
    int metrics_on;
    crm_addr http;                   /* --http ADDR: the dashboard */
    int http_on;
    const char *tls_cert, *tls_key;  /* --tls-cert, --tls-key (PEM), NULL: no TLS */
    int scrub;                       /* --scrub */
    int graph_capture;               /* --graph-capture */
} crm_options;

/* Parses argv; returns 0 to run, 1 when --help/--version was answered, -1 on a
 * usage error (already reported on stderr). */
int crm_options_parse(int argc, char **argv, crm_options *o);
/* 1 when every listening address is a Unix socket or a loopback address. */
int crm_options_local_only(const crm_options *o);

#endif
