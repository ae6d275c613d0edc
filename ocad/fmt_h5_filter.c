/*
 * fmt_h5_filter.c - HDF5's filter pipeline undone on one chunk
 * (ocad_h5f_decode): deflate (zlib's stream, as HDF5's H5Z deflate
 * writes it), szip (libaec's szlib, after HDF5's 4-byte size; in builds
 * that find it), shuffle (bytes of each element gathered by position: put
 * back) and fletcher32 (the checksum HDF5 appends, verified: a chunk whose
 * checksum differs is an error, never data). Filters are undone last
 * first; a filter whose bit is set in the chunk's filter mask was skipped
 * when the chunk was written and is skipped here. Other filters (nbit,
 * scale-offset, plugins, szip without libaec) are refused by name when the dataset is
 * opened (ocad_h5f_supported), so a read never meets one.
 *
 * Invariants: pure and thread-safe; the result is exactly the chunk's
 * bytes or an error, whatever the stored bytes are (a corrupt stream is
 * EFORMAT with the reason, never a partial chunk taken as data).
 */
#include "fmt_h5_filter.h"

#include <string.h>

#ifdef PASSION_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef PASSION_HAVE_SZIP
#include <szlib.h>
#endif

enum { F_DEFLATE = 1, F_SHUFFLE = 2, F_FLETCHER32 = 3, F_SZIP = 4,
       F_NBIT = 5, F_SCALEOFFSET = 6 };

int ocad_h5f_supported(int id, const char *name, char *why, size_t n)
{
    switch (id) {
    case F_SHUFFLE:
    case F_FLETCHER32:
        return PASSION_OK;
    case F_SZIP:
#ifdef PASSION_HAVE_SZIP
        return PASSION_OK;
#else
        snprintf(why, n, "filter szip (4): this passion was built without "
                 "libaec (Debian libaec-dev)");
        return PASSION_ENOTSUP;
#endif
    case F_DEFLATE:
#ifdef PASSION_HAVE_ZLIB
        return PASSION_OK;
#else
        snprintf(why, n, "filter deflate (1): this passion was built "
                 "without zlib");
        return PASSION_ENOTSUP;
#endif
    default:
        snprintf(why, n, "filter %s (%d): passion decodes deflate, szip, "
                 "shuffle and fletcher32 only; rewrite it without it, e.g. "
                 "`h5repack -f NONE` or `h5repack -f GZIP=6`",
                 id == F_NBIT          ? "nbit"
                 : id == F_SCALEOFFSET ? "scaleoffset"
                 : name && *name       ? name
                                       : "unknown",
                 id);
        return PASSION_ENOTSUP;
    }
}

/* HDF5's Fletcher-32 (16-bit words, big-endian pairs, as H5_checksum_
   fletcher32), with sums folded every 360 words. */
static uint32_t fletcher32(const unsigned char *d, size_t len)
{
    size_t words = len / 2;
    uint32_t s1 = 0, s2 = 0;
    while (words) {
        size_t t = words > 360 ? 360 : words;
        words -= t;
        do {
            s1 += (uint32_t)((d[0] << 8) | d[1]);
            d += 2;
            s2 += s1;
        } while (--t);
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if (len % 2) {
        s1 += (uint32_t)(d[0] << 8);
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return (s2 << 16) | s1;
}

/* The checksum in the last 4 bytes (little-endian; HDF5 also accepts its
   old writers' byte-swapped halves), checked and removed. */
static int unfletcher(unsigned char *cur, size_t *curn, char *why, size_t n)
{
    if (*curn < 4) {
        snprintf(why, n, "fletcher32: %zu stored bytes, no checksum", *curn);
        return PASSION_EFORMAT;
    }
    size_t len = *curn - 4;
    const unsigned char *c = cur + len;
    uint32_t stored = (uint32_t)c[0] | (uint32_t)c[1] << 8 |
                      (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    uint32_t f = fletcher32(cur, len);
    uint32_t rev = ((f & 0x00ff00ffu) << 8) | ((f >> 8) & 0x00ff00ffu);
    if (stored != f && stored != rev) {
        snprintf(why, n, "fletcher32 checksum mismatch (stored %08x, "
                 "computed %08x): the chunk is corrupt", stored, f);
        return PASSION_EFORMAT;
    }
    *curn = len;
    return PASSION_OK;
}

static int inflate_to(const unsigned char *src, size_t srcn,
                      unsigned char *dst, size_t cap, size_t *dstn,
                      char *why, size_t n)
{
#ifdef PASSION_HAVE_ZLIB
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) {
        snprintf(why, n, "deflate: zlib cannot start a stream");
        return PASSION_ENOMEM;
    }
    z.next_in = (Bytef *)src;
    z.next_out = dst;
    int zr = Z_OK;
    size_t in_left = srcn, out_left = cap;
    /* avail_in/out are 32-bit: feed in pieces */
    while (zr == Z_OK) {
        uInt ai = in_left > 0x40000000 ? 0x40000000 : (uInt)in_left;
        uInt ao = out_left > 0x40000000 ? 0x40000000 : (uInt)out_left;
        z.avail_in = ai;
        z.avail_out = ao;
        zr = inflate(&z, Z_NO_FLUSH);
        in_left -= ai - z.avail_in;
        out_left -= ao - z.avail_out;
        if (zr == Z_OK && (!ao || !ai))
            break; /* out of room, or of input, before the stream's end */
    }
    *dstn = cap - out_left;
    inflateEnd(&z);
    if (zr != Z_STREAM_END) {
        snprintf(why, n, "deflate: the stream does not decode (%s)",
                 zr == Z_DATA_ERROR  ? "corrupt data"
                 : zr == Z_OK        ? "longer than the chunk, or cut short"
                 : zr == Z_BUF_ERROR ? "cut short"
                                     : "zlib error");
        return PASSION_EFORMAT;
    }
    return PASSION_OK;
#else
    (void)src; (void)srcn; (void)dst; (void)cap; (void)dstn;
    snprintf(why, n, "deflate: this passion was built without zlib");
    return PASSION_ENOTSUP;
#endif
}

/* HDF5's szip: the decoded size (4 bytes, little-endian), then libaec's
   stream; the client values are mask, pixels per block, bits per pixel,
   pixels per scanline. */
static int unszip(const unsigned *cd, int ncd, const unsigned char *src,
                  size_t srcn, unsigned char *dst, size_t cap, size_t *dstn,
                  char *why, size_t n)
{
#ifdef PASSION_HAVE_SZIP
    if (ncd < 4 || srcn < 4) {
        snprintf(why, n, "szip: %d parameters, %zu stored bytes", ncd, srcn);
        return PASSION_EFORMAT;
    }
    size_t want = (size_t)src[0] | (size_t)src[1] << 8 |
                  (size_t)src[2] << 16 | (size_t)src[3] << 24;
    if (want > cap) {
        snprintf(why, n, "szip: decodes to %zu bytes, more than the chunk",
                 want);
        return PASSION_EFORMAT;
    }
    SZ_com_t p = {.options_mask = (int)cd[0], .bits_per_pixel = (int)cd[2],
                  .pixels_per_block = (int)cd[1],
                  .pixels_per_scanline = (int)cd[3]};
    size_t got = want;
    int rc = SZ_BufftoBuffDecompress(dst, &got, src + 4, srcn - 4, &p);
    if (rc != SZ_OK || got != want) {
        snprintf(why, n, "szip: the stream does not decode (libaec %d, %zu "
                 "of %zu bytes)", rc, got, want);
        return PASSION_EFORMAT;
    }
    *dstn = got;
    return PASSION_OK;
#else
    (void)cd, (void)ncd, (void)src, (void)srcn, (void)dst, (void)cap;
    (void)dstn;
    snprintf(why, n, "szip: this passion was built without libaec");
    return PASSION_ENOTSUP;
#endif
}

/* HDF5's shuffle undone: byte j of element i was at j * nelem + i. */
static void unshuffle(const unsigned char *src, unsigned char *dst,
                      size_t len, size_t es)
{
    size_t ne = es > 1 ? len / es : 0;
    if (ne <= 1) {
        memcpy(dst, src, len);
        return;
    }
    for (size_t j = 0; j < es; j++) {
        const unsigned char *s = src + j * ne;
        unsigned char *d = dst + j;
        for (size_t i = 0; i < ne; i++, d += es)
            *d = s[i];
    }
    memcpy(dst + ne * es, src + ne * es, len - ne * es);
}

int ocad_h5f_decode(const ocad_h5f_pipe *pipe, unsigned mask,
                    unsigned char *raw, size_t rawn, unsigned char *out,
                    size_t out_n, unsigned char *tmp, char *why, size_t n)
{
    /* two scratch buffers of cap bytes each in tmp (out_n + 32 each) */
    const size_t cap = out_n + 32;
    unsigned char *cur = raw, *s[2] = {tmp, tmp + cap};
    size_t curn = rawn;
    int rc = PASSION_OK;
    for (int i = pipe->n - 1; i >= 0 && !rc; i--) {
        if (mask & (1u << i))
            continue;
        unsigned char *dst = cur == s[0] ? s[1] : s[0];
        size_t dn = 0;
        switch (pipe->id[i]) {
        case F_FLETCHER32:
            rc = unfletcher(cur, &curn, why, n);
            break;
        case F_DEFLATE:
            if (!(rc = inflate_to(cur, curn, dst, cap, &dn, why, n))) {
                cur = dst;
                curn = dn;
            }
            break;
        case F_SZIP:
            if (!(rc = unszip(pipe->cd[i], pipe->ncd[i], cur, curn, dst, cap,
                              &dn, why, n))) {
                cur = dst;
                curn = dn;
            }
            break;
        case F_SHUFFLE:
            if (curn > cap) {
                snprintf(why, n, "shuffle: %zu bytes in a chunk of %zu",
                         curn, out_n);
                rc = PASSION_EFORMAT;
                break;
            }
            unshuffle(cur, dst, curn, pipe->ncd[i] > 0 ? pipe->cd[i][0] : 1);
            cur = dst;
            break;
        default:
            snprintf(why, n, "filter %d: not decoded by passion",
                     pipe->id[i]);
            rc = PASSION_ENOTSUP;
        }
    }
    if (!rc && curn != out_n) {
        snprintf(why, n, "the chunk decodes to %zu bytes, not %zu", curn,
                 out_n);
        rc = PASSION_EFORMAT;
    }
    if (!rc)
        memcpy(out, cur, out_n);
    return rc;
}
