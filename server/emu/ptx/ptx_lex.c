/* ptx_lex.c -- splits PTX text into words and punctuation (see ptx_lex.h). */
#include "ptx_lex.h"

#include <ctype.h>
#include <string.h>

void ptx_lex_init(ptx_lex *l, const char *text, size_t len)
{
    memset(l, 0, sizeof *l);
    l->p = text;
    l->end = text + len;
    l->line = 1;
}

static int ptx__word_char(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '$' || c == '%';
}

/* Skips blanks and comments, counting lines. */
static void ptx__skip(ptx_lex *l)
{
    while (l->p < l->end) {
        char c = *l->p;
        if (c == '\n') {
            l->line++;
            l->p++;
        } else if (isspace((unsigned char)c) || c == '\0') {
            l->p++;
        } else if (c == '/' && l->end - l->p >= 2 && l->p[1] == '/') {
            while (l->p < l->end && *l->p != '\n')
                l->p++;
        } else if (c == '/' && l->end - l->p >= 2 && l->p[1] == '*') {
            l->p += 2;
            while (l->end - l->p >= 2 && !(l->p[0] == '*' && l->p[1] == '/'))
                l->line += *l->p++ == '\n';
            l->p = l->end - l->p >= 2 ? l->p + 2 : l->end;
        } else {
            return;
        }
    }
}

int ptx_lex_next(ptx_lex *l)
{
    ptx__skip(l);
    l->tok[0] = '\0';
    l->punct = 0;
    if (l->p >= l->end)
        return 0;
    size_t n = 0;
    if (!ptx__word_char((unsigned char)*l->p)) {
        l->tok[0] = *l->p++;
        l->tok[1] = '\0';
        l->punct = 1;
        return 1;
    }
    /* a word; a sign inside an exponent (1.5e-3) belongs to it */
    while (l->p < l->end && (ptx__word_char((unsigned char)*l->p) ||
                             ((*l->p == '-' || *l->p == '+') && n > 0 && isdigit((unsigned char)l->tok[0]) &&
                              (l->tok[n - 1] == 'e' || l->tok[n - 1] == 'E') && l->tok[1] != 'x' && l->tok[1] != 'X' &&
                              l->tok[1] != 'f' && l->tok[1] != 'd'))) {
        if (n < PTX_TOK_MAX - 1)
            l->tok[n++] = *l->p;
        else
            l->too_long = 1;
        l->p++;
    }
    l->tok[n] = '\0';
    return 1;
}

int ptx_lex_peek(const ptx_lex *l)
{
    const char *q = l->p;
    while (q < l->end && isspace((unsigned char)*q))
        q++;
    return q < l->end ? (unsigned char)*q : 0;
}

int ptx_lex_is(const ptx_lex *l, const char *s)
{
    return strcmp(l->tok, s) == 0;
}

void ptx_lex_skip_string(ptx_lex *l)
{
    if (!(l->punct && l->tok[0] == '"'))
        return;
    while (l->p < l->end && *l->p != '"')
        l->line += *l->p++ == '\n';
    if (l->p < l->end)
        l->p++;
}
