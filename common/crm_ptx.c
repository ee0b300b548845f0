/* crm_ptx.c -- reads the kernels of a PTX text and their parameter layouts from the
 * `.entry NAME ( .param ... )` declarations, laying the parameters out as the
 * driver does: each at the next multiple of its alignment (.align N, else its
 * element size), arrays and vectors multiplying the element size; and its
 * module-scope .global and .const variables with their sizes and initial bytes
 * (`= {...}` lists of integers and 0f/0d float bit patterns; an initializer naming
 * another variable's address leaves that element zero). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_fatbin.h"

#define CRM__TOK_MAX 4096

typedef struct crm__lex {
    const char *p, *end;
    char tok[CRM__TOK_MAX];
} crm__lex;

static int crm__is_word(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '$' || c == '%';
}

/* Skips blanks and comments. */
static void crm__skip(crm__lex *l)
{
    while (l->p < l->end) {
        if (isspace((unsigned char)*l->p)) {
            l->p++;
        } else if (l->end - l->p >= 2 && l->p[0] == '/' && l->p[1] == '/') {
            while (l->p < l->end && *l->p != '\n')
                l->p++;
        } else if (l->end - l->p >= 2 && l->p[0] == '/' && l->p[1] == '*') {
            const char *q = l->p + 2;
            while (q + 1 < l->end && !(q[0] == '*' && q[1] == '/'))
                q++;
            l->p = q + 1 < l->end ? q + 2 : l->end;
        } else if (*l->p == '"') { /* strings (.file) never hold tokens we want */
            l->p++;
            while (l->p < l->end && *l->p != '"')
                l->p++;
            l->p += l->p < l->end;
        } else {
            return;
        }
    }
}

/* Next token into l->tok: a word or one punctuation character; 0 at the end or on a
 * word too long. */
static int crm__next(crm__lex *l)
{
    crm__skip(l);
    if (l->p >= l->end || *l->p == '\0')
        return 0;
    size_t n = 0;
    if (!crm__is_word((unsigned char)*l->p)) {
        l->tok[0] = *l->p++;
        l->tok[1] = '\0';
        return 1;
    }
    while (l->p < l->end && crm__is_word((unsigned char)*l->p)) {
        if (n + 1 >= sizeof l->tok)
            return 0;
        l->tok[n++] = *l->p++;
    }
    l->tok[n] = '\0';
    return 1;
}

/* Size of a PTX scalar type (".u32" ...), 0 when not one. */
static unsigned crm__type_size(const char *t)
{
    static const struct { const char *name; unsigned size; } types[] = {
        {".b8", 1},   {".u8", 1},   {".s8", 1},    {".b16", 2},  {".u16", 2},   {".s16", 2},
        {".f16", 2},  {".bf16", 2}, {".b32", 4},   {".u32", 4},  {".s32", 4},   {".f32", 4},
        {".f16x2", 4}, {".bf16x2", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8},   {".f64", 8},
        {".b128", 16}, {".pred", 1},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(t, types[i].name) == 0)
            return types[i].size;
    return 0;
}

/* Parses one `.param ...` up to the ',' or ')' after it; fills *size and *align.
 * Returns the terminating character, or 0 when malformed. */
static int crm__param(crm__lex *l, uint32_t *size, uint32_t *align)
{
    unsigned elem = 0, vec = 1, al = 0;
    uint64_t count = 1;
    int pointer = 0; /* after `.ptr`, `.align N` is the alignment of what it points to */
    while (crm__next(l)) {
        const char *t = l->tok;
        if (strcmp(t, ",") == 0 || strcmp(t, ")") == 0) {
            if (elem == 0)
                return 0;
            uint64_t sz = (uint64_t)elem * vec * count;
            if (sz == 0 || sz > 65536)
                return 0;
            *size = (uint32_t)sz;
            *align = al ? al : elem * vec;
            return t[0];
        }
        if (strcmp(t, ".ptr") == 0) {
            pointer = 1;
        } else if (strcmp(t, ".align") == 0) {
            if (!crm__next(l))
                return 0;
            unsigned a = (unsigned)strtoul(l->tok, NULL, 10);
            if (a == 0 || a > 256 || (a & (a - 1)) != 0)
                return 0;
            if (!pointer)
                al = a;
        } else if (strcmp(t, ".v2") == 0 || strcmp(t, ".v4") == 0) {
            vec = (unsigned)(t[2] - '0');
        } else if (strcmp(t, "[") == 0) {
            if (!crm__next(l))
                return 0;
            count = strtoull(l->tok, NULL, 10);
            if (count == 0 || count > 65536 || !crm__next(l) || strcmp(l->tok, "]") != 0)
                return 0;
        } else if (crm__type_size(t) != 0) {
            elem = crm__type_size(t);
        }
        /* .param, .ptr, state spaces and the parameter's name need nothing */
    }
    return 0;
}

/* Parses the parameter list after `.entry NAME`, whose '(' is next. */
static int crm__entry(crm__lex *l, crm_kernel_info *k)
{
    const char *save = l->p;
    if (!crm__next(l) || strcmp(l->tok, "(") != 0) {
        l->p = save; /* no parameter list */
        return 0;
    }
    save = l->p;
    if (crm__next(l) && strcmp(l->tok, ")") == 0)
        return 0;
    l->p = save;
    uint32_t off = 0;
    for (;;) {
        uint32_t size, align;
        int end = crm__param(l, &size, &align);
        if (end == 0 || k->nparams >= 4096)
            return -1;
        off = (off + align - 1) & ~(align - 1);
        if (off > 65536)
            return -1;
        crm_kparam_info *p = realloc(k->params, (k->nparams + 1) * sizeof *p);
        if (p == NULL)
            return -1;
        k->params = p;
        p[k->nparams++] = (crm_kparam_info){off, size};
        off += size;
        k->param_bytes = off;
        if (end == ')')
            return 0;
    }
}

/* One element of an initializer (the token in l->tok, a leading '-' already read)
 * into n bytes at p. */
static void crm__init_value(const char *t, int negative, unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    if ((t[0] == '0') && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D')) {
        v = strtoull(t + 2, NULL, 16); /* 0f or 0d, then the value's bits in hex */
    } else if (isdigit((unsigned char)t[0]) && strpbrk(t, ".eE") != NULL && strncmp(t, "0x", 2) != 0) {
        double d = strtod(t, NULL) * (negative ? -1 : 1);
        float f = (float)d;
        if (n == 8)
            memcpy(&v, &d, 8);
        else
            memcpy(&v, &f, 4);
        negative = 0;
    } else if (isdigit((unsigned char)t[0])) {
        v = strtoull(t, NULL, 0);
    }
    if (negative)
        v = (uint64_t)-(int64_t)v;
    memcpy(p, &v, n < 8 ? n : 8);
}

/* `= { a, b, {c, d} }` or `= a`: the elements in order into init (elem bytes each,
 * at most count); ends after the ';'. 0, or -1 when malformed. */
static int crm__initializer(crm__lex *l, unsigned char *init, unsigned elem, uint64_t count)
{
    uint64_t i = 0;
    int depth = 0, negative = 0;
    while (crm__next(l)) {
        const char *t = l->tok;
        if (t[0] == ';' && depth == 0)
            return 0;
        if (t[0] == '{')
            depth++;
        else if (t[0] == '}')
            depth--;
        else if (t[0] == '-')
            negative = 1;
        else if (t[0] != ',' && t[0] != '(' && t[0] != ')') {
            if (i < count && crm__is_word((unsigned char)t[0]) && strcmp(t, "generic") != 0)
                crm__init_value(t, negative, init + i * elem, elem);
            i += strcmp(t, "generic") != 0;
            negative = 0;
        }
        if (depth < 0)
            return -1;
    }
    return -1;
}

/* A module-scope `.global`/`.const` declaration, after its state space: [.align N]
 * [.vN] .TYPE NAME[dims] [= init] ; -- appended to out (an .extern one has no
 * storage here and is skipped). 0, or -1 when malformed. */
static int crm__variable(crm__lex *l, crm_module_info *out, int constant, int is_extern)
{
    unsigned elem = 0, vec = 1;
    uint64_t count = 1;
    char name[256] = "";
    while (crm__next(l) && name[0] == '\0') {
        const char *t = l->tok;
        if (strcmp(t, ".align") == 0)
            crm__next(l);
        else if (strcmp(t, ".v2") == 0 || strcmp(t, ".v4") == 0)
            vec = (unsigned)(t[2] - '0');
        else if (crm__type_size(t) != 0)
            elem = crm__type_size(t);
        else if (t[0] != '.' && crm__is_word((unsigned char)t[0]))
            snprintf(name, sizeof name, "%.255s", t);
    }
    elem *= vec;
    while (name[0] != '\0' && l->tok[0] == '[') { /* dimensions; [] takes its size from the initializer */
        if (!crm__next(l))
            return -1;
        if (l->tok[0] != ']') {
            count *= strtoull(l->tok, NULL, 0);
            if (!crm__next(l) || l->tok[0] != ']')
                return -1;
        }
        if (!crm__next(l))
            return -1;
    }
    if (elem == 0 || name[0] == '\0' || count == 0 || count * elem > CRM_FATBIN_MAX)
        return -1;
    unsigned char *init = l->tok[0] == '=' ? calloc(count, elem) : NULL;
    if (l->tok[0] == '=' && (init == NULL || crm__initializer(l, init, elem, count) != 0)) {
        free(init);
        return -1;
    }
    if (is_extern || crm_module_info_global(out, name) != NULL) {
        free(init);
        return 0;
    }
    crm_global_info *g = realloc(out->globals, (out->nglobals + 1) * sizeof *g);
    char *copy = strdup(name);
    if (g != NULL)
        out->globals = g;
    if (g == NULL || copy == NULL) {
        free(copy);
        free(init);
        return -1;
    }
    g[out->nglobals++] = (crm_global_info){copy, count * elem, init, constant};
    return 0;
}

int crm_module_info_from_ptx(const char *ptx, size_t len, crm_module_info *out, char *err, size_t errlen)
{
    crm__lex *l = malloc(sizeof *l);
    memset(out, 0, sizeof *out);
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->p = ptx;
    l->end = ptx + len;
    int rc = 0, depth = 0, is_extern = 0;
    while (rc == 0 && crm__next(l)) {
        depth += l->tok[0] == '{' ? 1 : l->tok[0] == '}' ? -1 : 0;
        if (depth == 0 && (strcmp(l->tok, ".global") == 0 || strcmp(l->tok, ".const") == 0)) {
            rc = crm__variable(l, out, l->tok[1] == 'c', is_extern);
            is_extern = 0;
            continue;
        }
        is_extern = depth == 0 && strcmp(l->tok, ".extern") == 0;
        if (strcmp(l->tok, ".entry") != 0)
            continue;
        if (!crm__next(l) || !crm__is_word((unsigned char)l->tok[0])) {
            rc = -1;
            break;
        }
        crm_kernel_info *k = realloc(out->kernels, (out->nkernels + 1) * sizeof *k);
        if (k == NULL) {
            rc = -1;
            break;
        }
        out->kernels = k;
        k = &k[out->nkernels];
        memset(k, 0, sizeof *k);
        if ((k->name = strdup(l->tok)) == NULL) {
            rc = -1;
            break;
        }
        out->nkernels++;
        rc = crm__entry(l, k);
    }
    free(l);
    if (rc != 0) {
        snprintf(err, errlen, "malformed PTX .entry or variable declaration");
        crm_module_info_free(out);
        return -1;
    }
    out->has_ptx = 1;
    out->from_ptx = 1;
    return 0;
}
