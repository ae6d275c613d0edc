/*
 * convert.c - element types (kind and size) and byte order: which pairs
 * are valid, the natural kind of a size, a type's name for messages, and
 * the ONE byte-swap routine every access path calls on the data it moves
 * (files whose byte order is not the machine's: netCDF classic is always
 * big-endian, .npy may be either).
 *
 * Invariants: a swap unit is 0 (no conversion) or 2, 4, 8 or 16 bytes; a
 * complex element swaps its two halves separately (unit = size / 2);
 * BYTES and BOOL data, and 1-byte kinds, are never swapped. Swapping
 * twice gives back the input, so the same routine serves reads (after the
 * bytes land in memory) and writes (in a staging copy before they go out).
 */
#include "ocad.h"

#include <stdio.h>
#include <string.h>

int ocad_type_valid(passion_kind k, int64_t size)
{
    switch (k) {
    case PASSION_KIND_BYTES: return size >= 1 && size <= 64;
    case PASSION_KIND_INT:
    case PASSION_KIND_UINT:
        return size == 1 || size == 2 || size == 4 || size == 8;
    case PASSION_KIND_FLOAT:
        return size == 2 || size == 4 || size == 8 || size == 16;
    case PASSION_KIND_COMPLEX:
        return size == 8 || size == 16 || size == 32;
    case PASSION_KIND_BOOL: return size == 1;
    default: return 0;
    }
}

passion_kind ocad_kind_default(int64_t size)
{
    switch (size) {
    case 1: return PASSION_KIND_UINT;
    case 2: return PASSION_KIND_INT;
    case 4:
    case 8: return PASSION_KIND_FLOAT;
    case 16: return PASSION_KIND_COMPLEX;
    default: return PASSION_KIND_BYTES;
    }
}

passion_endian ocad_native(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b ? PASSION_ENDIAN_LITTLE : PASSION_ENDIAN_BIG;
}

passion_endian ocad_endian_resolve(passion_endian e)
{
    return e == PASSION_ENDIAN_NATIVE ? ocad_native() : e;
}

int ocad_swap_unit(passion_kind k, int64_t size, passion_endian e)
{
    if (ocad_endian_resolve(e) == ocad_native())
        return 0;
    switch (k) {
    case PASSION_KIND_INT:
    case PASSION_KIND_UINT:
    case PASSION_KIND_FLOAT: return size > 1 ? (int)size : 0;
    case PASSION_KIND_COMPLEX: return (int)(size / 2);
    default: return 0;
    }
}

void ocad_swap(void *p, int64_t bytes, int unit)
{
    unsigned char *b = p;
    int64_t n = unit > 1 ? bytes / unit : 0;
    switch (unit) {
    case 2:
        for (int64_t i = 0; i < n; i++, b += 2) {
            uint16_t v;
            memcpy(&v, b, 2);
            v = __builtin_bswap16(v);
            memcpy(b, &v, 2);
        }
        break;
    case 4:
        for (int64_t i = 0; i < n; i++, b += 4) {
            uint32_t v;
            memcpy(&v, b, 4);
            v = __builtin_bswap32(v);
            memcpy(b, &v, 4);
        }
        break;
    case 8:
        for (int64_t i = 0; i < n; i++, b += 8) {
            uint64_t v;
            memcpy(&v, b, 8);
            v = __builtin_bswap64(v);
            memcpy(b, &v, 8);
        }
        break;
    case 16:
        for (int64_t i = 0; i < n; i++, b += 16) {
            uint64_t lo, hi;
            memcpy(&lo, b, 8);
            memcpy(&hi, b + 8, 8);
            lo = __builtin_bswap64(lo);
            hi = __builtin_bswap64(hi);
            memcpy(b, &hi, 8);
            memcpy(b + 8, &lo, 8);
        }
        break;
    default:
        break;
    }
}

void ocad_swap_blocks(char *p, int64_t step, int64_t n, int64_t len, int unit)
{
    if (unit < 2 || n <= 0)
        return;
    if (step == len || n == 1) {
        ocad_swap(p, n * len, unit);
        return;
    }
    for (int64_t i = 0; i < n; i++, p += step)
        ocad_swap(p, len, unit);
}

void ocad_type_str(passion_kind k, int64_t size, passion_endian e, char *buf,
                   size_t n)
{
    char c = k == PASSION_KIND_INT       ? 'i'
             : k == PASSION_KIND_UINT    ? 'u'
             : k == PASSION_KIND_FLOAT   ? 'f'
             : k == PASSION_KIND_COMPLEX ? 'c'
             : k == PASSION_KIND_BOOL    ? 'b'
             : k == PASSION_KIND_BYTES   ? 'V'
                                         : '?';
    char o = e == PASSION_ENDIAN_LITTLE ? '<'
             : e == PASSION_ENDIAN_BIG  ? '>'
                                        : '=';
    if (size == 1 || k == PASSION_KIND_BYTES || k == PASSION_KIND_BOOL)
        o = '|';
    snprintf(buf, n, "%c%c%lld", o, c, (long long)size);
}

const char *ocad_kind_name(passion_kind k)
{
    switch (k) {
    case PASSION_KIND_BYTES: return "bytes";
    case PASSION_KIND_INT: return "int";
    case PASSION_KIND_UINT: return "uint";
    case PASSION_KIND_FLOAT: return "float";
    case PASSION_KIND_COMPLEX: return "complex";
    case PASSION_KIND_BOOL: return "bool";
    default: return "unknown";
    }
}
