/*
 * layout.c - prints, as JSON, the size and field offsets of every public
 * struct of passion.h that the Python package mirrors with ctypes
 * (passion/_lib.py); tests/test_layout.py compares the two, so a change
 * of the header that the package misses fails a test.
 */
#include <passion.h>
#include <stddef.h>
#include <stdio.h>

static int first;

static void begin(const char *name, size_t size)
{
    printf("%s\"%s\": {\"__size__\": %zu", first ? "" : ",\n", name, size);
    first = 0;
}

#define F(T, f) printf(", \"%s\": %zu", #f, offsetof(T, f))
#define END() printf("}")

int main(void)
{
    first = 1;
    printf("{\n");
    begin("passion_counters", sizeof(passion_counters));
    F(passion_counters, io_calls); F(passion_counters, bytes_read);
    F(passion_counters, bytes_written); F(passion_counters, bytes_useful);
    F(passion_counters, messages_sent); F(passion_counters, bytes_sent);
    F(passion_counters, rounds); F(passion_counters, peak_staging);
    F(passion_counters, reuse_bytes); F(passion_counters, prefetch_hits);
    F(passion_counters, t_io); F(passion_counters, t_comm);
    F(passion_counters, messages_intra_node);
    F(passion_counters, bytes_intra_node);
    F(passion_counters, messages_inter_node);
    F(passion_counters, bytes_inter_node);
    F(passion_counters, reserved);
    END();
    begin("passion_array_spec", sizeof(passion_array_spec));
    F(passion_array_spec, ndims); F(passion_array_spec, shape);
    F(passion_array_spec, elem_size); F(passion_array_spec, storage);
    F(passion_array_spec, order); F(passion_array_spec, grid);
    F(passion_array_spec, dist); F(passion_array_spec, block);
    F(passion_array_spec, ghost); F(passion_array_spec, placement);
    F(passion_array_spec, header_bytes); F(passion_array_spec, kind);
    F(passion_array_spec, endian); F(passion_array_spec, reserved);
    END();
    begin("passion_section", sizeof(passion_section));
    F(passion_section, start); F(passion_section, count);
    F(passion_section, stride);
    END();
    begin("passion_memspec", sizeof(passion_memspec));
    F(passion_memspec, shape); F(passion_memspec, offset);
    END();
    begin("passion_plan_info", sizeof(passion_plan_info));
    F(passion_plan_info, method); F(passion_plan_info, requests);
    F(passion_plan_info, bytes_file); F(passion_plan_info, runs);
    F(passion_plan_info, seconds); F(passion_plan_info, reserved);
    END();
    begin("passion_slab_opts", sizeof(passion_slab_opts));
    F(passion_slab_opts, dim); F(passion_slab_opts, width);
    F(passion_slab_opts, budget); F(passion_slab_opts, halo);
    F(passion_slab_opts, prefetch); F(passion_slab_opts, reuse);
    F(passion_slab_opts, writeback); F(passion_slab_opts, out);
    F(passion_slab_opts, method); F(passion_slab_opts, ramp);
    F(passion_slab_opts, reserved);
    END();
    begin("passion_slab", sizeof(passion_slab));
    F(passion_slab, index); F(passion_slab, nslabs); F(passion_slab, start);
    F(passion_slab, count); F(passion_slab, dim); F(passion_slab, halo);
    printf(", \"in_\": %zu", offsetof(passion_slab, in));
    F(passion_slab, out); F(passion_slab, mem); F(passion_slab, reserved);
    END();
    begin("passion_part_opts", sizeof(passion_part_opts));
    F(passion_part_opts, dim); F(passion_part_opts, width);
    F(passion_part_opts, budget); F(passion_part_opts, halo);
    F(passion_part_opts, prefetch); F(passion_part_opts, out);
    F(passion_part_opts, method); F(passion_part_opts, reserved);
    END();
    begin("passion_part", sizeof(passion_part));
    F(passion_part, index); F(passion_part, nparts); F(passion_part, lo);
    F(passion_part, count);
    printf(", \"in_\": %zu", offsetof(passion_part, in));
    F(passion_part, out); F(passion_part, mem); F(passion_part, reserved);
    END();
    printf("\n}\n");
    return 0;
}
