/* ptx_lex.h -- tokens of PTX text: words (opcodes with their dotted suffixes,
 * directives, register and symbol names, numbers) and single punctuation
 * characters; comments and blanks are skipped, lines counted. Internal to
 * server/emu/ptx/. */
#ifndef PTX_LEX_H
#define PTX_LEX_H

#include <stddef.h>

#define PTX_TOK_MAX 1024 /* CUB's mangled kernel and parameter names run past 400 */

typedef struct ptx_lex {
    const char *p, *end;
    unsigned line;
    char tok[PTX_TOK_MAX];  /* the current token ("" at the end) */
    int punct;              /* 1 when tok is one punctuation character */
    int too_long;           /* a word longer than PTX_TOK_MAX - 1 was cut */
} ptx_lex;

void ptx_lex_init(ptx_lex *l, const char *text, size_t len);
/* Reads the next token into l->tok; 0 at the end of the text. */
int ptx_lex_next(ptx_lex *l);
/* The next character that is not a blank (0 at the end), not consumed. */
int ptx_lex_peek(const ptx_lex *l);
/* 1 when the current token is exactly s. */
int ptx_lex_is(const ptx_lex *l, const char *s);
/* Skips a string literal's content if the current token opened one ("). */
void ptx_lex_skip_string(ptx_lex *l);

#endif
