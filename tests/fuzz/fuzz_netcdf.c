/*
 * fuzz_netcdf.c - fuzz target for the netCDF classic header parser and
 * writer (ocad/fmt_netcdf_parse.c, ocad/fmt_netcdf_write.c).
 *
 * Input: the first bytes of a file (taken as the whole file). Properties:
 * the parser never reads outside the input (sanitizers); a rejected
 * variable has a reason and one of the documented codes (never ESHORT
 * when the whole file is given); an accepted one has 1..7 non-negative
 * dimensions, an element size that is its type's, a byte count equal to
 * the product, and data after the header and inside the file; looking it
 * up by its name finds a variable of that name; written again by the
 * writer (when its type and name exist in that version) the header parses
 * back to the same array at the writer's data offset, and cut one byte
 * short of its end it is refused (EFORMAT for a whole file, ESHORT when
 * the file is said to be longer).
 */
#include "fuzz.h"

#include "../../ocad/ocad.h"

static int rejected_ok(int rc)
{
    return rc == PASSION_EFORMAT || rc == PASSION_ENOTSUP ||
           rc == PASSION_EINVAL;
}

static void check_var(const uint8_t *data, size_t size, const ocad_nc_var *v)
{
    const core_fmt_meta *m = &v->m;
    FZ_CHECK(v->version == 1 || v->version == 2 || v->version == 5,
             "version %d", v->version);
    FZ_CHECK(m->ndims >= 1 && m->ndims <= PASSION_MAX_DIMS, "ndims %d",
             m->ndims);
    int64_t bytes = m->elem_size;
    for (int d = 0; d < m->ndims; d++) {
        FZ_CHECK(m->shape[d] >= 0, "shape[%d] = %lld", d,
                 (long long)m->shape[d]);
        FZ_CHECK(core_mul(bytes, m->shape[d], &bytes), "bytes overflow");
    }
    FZ_CHECK(bytes == m->data_bytes, "data_bytes %lld, product %lld",
             (long long)m->data_bytes, (long long)bytes);
    FZ_CHECK(m->elem_size >= 1 && m->elem_size <= 8, "elem_size %lld",
             (long long)m->elem_size);
    FZ_CHECK(m->endian == PASSION_ENDIAN_BIG, "endian %d", m->endian);
    FZ_CHECK(v->header_len <= (int64_t)size, "header %lld of %zu",
             (long long)v->header_len, size);
    FZ_CHECK(bytes == 0 || m->data_offset >= v->header_len,
             "data at %lld inside the header (%lld)",
             (long long)m->data_offset, (long long)v->header_len);
    FZ_CHECK(m->data_offset >= 0 && m->data_offset <= (int64_t)size - bytes,
             "data [%lld, +%lld) past %zu", (long long)m->data_offset,
             (long long)bytes, size);

    char why[512];
    ocad_nc_var byname;
    int rc = ocad_nc_parse(data, (int64_t)size, (int64_t)size, v->name, -1,
                           &byname, why, sizeof why);
    FZ_CHECK(rc == 0 && byname.index <= v->index &&
                 !strcmp(byname.name, v->name),
             "lookup of '%s' by name: %d %s", v->name, rc, why);

    /* the writer's header for the same array */
    int ok = bytes > 0 && ocad_nc_name_ok(v->name) &&
             ocad_nc_type_of(v->version, m->kind, m->elem_size) ==
                 v->nc_type;
    if (!ok)
        return;
    unsigned char *h = NULL;
    int64_t len = 0;
    rc = ocad_nc_format(v->version, v->name, m, 64, &h, &len, why,
                        sizeof why);
    if (rc) {
        /* only sizes a narrow version cannot hold may fail */
        FZ_CHECK(rc == PASSION_ENOTSUP && v->version != 5,
                 "the writer refuses an accepted variable: %d %s", rc, why);
        return;
    }
    FZ_CHECK(len % 64 == 0, "header of %lld bytes", (long long)len);
    ocad_nc_var again;
    rc = ocad_nc_parse(h, len, len + bytes, v->name, -1, &again, why,
                       sizeof why);
    FZ_CHECK(rc == 0, "re-parse of the written header: %d %s", rc, why);
    FZ_CHECK(again.version == v->version && again.nvars == 1 &&
                 again.nc_type == v->nc_type &&
                 again.m.ndims == m->ndims &&
                 again.m.kind == m->kind &&
                 again.m.elem_size == m->elem_size &&
                 again.m.data_bytes == bytes &&
                 again.m.data_offset == len && !again.record,
             "re-parsed variable differs");
    for (int d = 0; d < m->ndims; d++)
        FZ_CHECK(again.m.shape[d] == m->shape[d], "shape[%d] differs", d);
    int64_t cut = again.header_len - 1;
    rc = ocad_nc_parse(h, cut, cut, v->name, -1, &again, why, sizeof why);
    FZ_CHECK(rc == PASSION_EFORMAT, "a cut header gives %d", rc);
    rc = ocad_nc_parse(h, cut, len + bytes, v->name, -1, &again, why,
                       sizeof why);
    FZ_CHECK(rc == PASSION_ESHORT, "a cut header (file longer) gives %d",
             rc);
    free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[512];
    for (int64_t i = 0; i < 16; i++) {
        ocad_nc_var v;
        int rc = ocad_nc_parse(data, (int64_t)size, (int64_t)size, NULL, i,
                               &v, why, sizeof why);
        if (rc) {
            FZ_CHECK(rejected_ok(rc), "code %d (%s)", rc, why);
            FZ_CHECK(why[0], "a rejected header has no reason");
            if (rc != PASSION_ENOTSUP)
                break; /* EINVAL: no more variables; EFORMAT: bad file */
            continue;
        }
        FZ_CHECK(v.index == i, "index %lld for %lld", (long long)v.index,
                 (long long)i);
        check_var(data, size, &v);
    }
    /* the same bytes as the start of a longer file */
    ocad_nc_var v;
    int rc = ocad_nc_parse(data, (int64_t)size, (int64_t)size + 4096, NULL,
                           0, &v, why, sizeof why);
    FZ_CHECK(rc == 0 || rc == PASSION_ESHORT || rejected_ok(rc), "code %d",
             rc);
    return 0;
}
