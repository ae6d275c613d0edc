/* bench_etp_large.c - suite `etp-large` (thesis table 6.8, 16384 x 16384
   4-byte elements, a 1 GiB file): the program of bench_etp.c on the large
   array's cases. */
#define BENCH_ETP_LARGE 1
#include "bench_etp.c"
