/*
 * types.c - element types as the command line spells them (numpy codes:
 * "f8", "<i4", ">c16", "u1", "b1"; or names: "float64", "uint8"), on the
 * spec's element type.
 */
#include "files.h"

#include <stdlib.h>
#include <string.h>

char cli_type_kind(const passion_array_spec *s)
{
    static const char kc[] = "Viufcb";
    int k = (int)s->kind;
    return k >= 0 && k <= 5 ? kc[k] : 'V';
}

int cli_type_big(const passion_array_spec *s)
{
    if (s->endian == PASSION_ENDIAN_BIG)
        return 1;
    if (s->endian == PASSION_ENDIAN_LITTLE)
        return 0;
    return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

void cli_type_code(const passion_array_spec *s, char *buf, size_t n)
{
    char k = cli_type_kind(s);
    snprintf(buf, n, "%c%c%lld",
             s->elem_size == 1 || k == 'V' ? '|'
             : cli_type_big(s)            ? '>'
                                          : '<',
             k, (long long)s->elem_size);
}

void cli_type_name(const passion_array_spec *s, char *buf, size_t n)
{
    static const struct {
        char k;
        const char *name;
    } names[] = {{'b', "bool"}, {'i', "int"}, {'u', "uint"},
                 {'f', "float"}, {'c', "complex"}, {'V', "bytes"}};
    char k = cli_type_kind(s);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].k == k) {
            if (k == 'b')
                snprintf(buf, n, "bool");
            else if (k == 'V')
                snprintf(buf, n, "bytes%lld", (long long)s->elem_size);
            else
                snprintf(buf, n, "%s%lld", names[i].name,
                         (long long)s->elem_size * 8);
            return;
        }
}

static void set(passion_array_spec *s, char k, int64_t size, int big)
{
    s->elem_size = size;
    s->kind = k == 'i'   ? PASSION_KIND_INT
              : k == 'u' ? PASSION_KIND_UINT
              : k == 'f' ? PASSION_KIND_FLOAT
              : k == 'c' ? PASSION_KIND_COMPLEX
              : k == 'b' ? PASSION_KIND_BOOL
                         : PASSION_KIND_BYTES;
    s->endian = size == 1 || k == 'V' ? PASSION_ENDIAN_NATIVE
                : big                 ? PASSION_ENDIAN_BIG
                                      : PASSION_ENDIAN_LITTLE;
}

int cli_type_parse(const char *t, passion_array_spec *s, char *why,
                   size_t wl)
{
    static const struct {
        const char *name;
        char k;
        int size;
    } names[] = {{"bool", 'b', 1},     {"int8", 'i', 1},
                 {"int16", 'i', 2},    {"int32", 'i', 4},
                 {"int64", 'i', 8},    {"uint8", 'u', 1},
                 {"uint16", 'u', 2},   {"uint32", 'u', 4},
                 {"uint64", 'u', 8},   {"float32", 'f', 4},
                 {"float64", 'f', 8},  {"complex64", 'c', 8},
                 {"complex128", 'c', 16}};
    int big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
    const char *p = t;
    if (*p == '<' || *p == '>' || *p == '=' || *p == '|') {
        big = *p == '>' ? 1 : *p == '<' ? 0 : big;
        p++;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(p, names[i].name)) {
            set(s, names[i].k, names[i].size, big);
            return 0;
        }
    char k = *p;
    char *end;
    long size = strchr("biufcV", k) && k ? strtol(p + 1, &end, 10) : 0;
    int ok = size > 0 && !*end;
    if (ok)
        switch (k) {
        case 'b': ok = size == 1; break;
        case 'i':
        case 'u': ok = size == 1 || size == 2 || size == 4 || size == 8;
            break;
        case 'f': ok = size == 2 || size == 4 || size == 8 || size == 16;
            break;
        case 'c': ok = size == 8 || size == 16 || size == 32; break;
        default: ok = size <= 64;
        }
    if (!ok) {
        snprintf(why, wl, "type '%s': want a numpy code (f8, <i4, >c16, u1, "
                 "b1, V12) or a name (float64, uint8...)", t);
        return -1;
    }
    set(s, k, size, big);
    return 0;
}

void cli_type_copy(passion_array_spec *dst, const passion_array_spec *src)
{
    dst->elem_size = src->elem_size;
    dst->kind = src->kind;
    dst->endian = src->endian;
}

void cli_type_native(passion_array_spec *dst)
{
    set(dst, cli_type_kind(dst), dst->elem_size,
        __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}
