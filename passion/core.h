/*
 * core.h - internals of the passion/ folder (prefix core_), the one header
 * the folders above include: it includes the pieces, one concept each.
 *
 *   core_base.h     visibility macro, checked arithmetic, clock, medians
 *   core_options.h  the options of a context
 *   core_ctx.h      the context struct and its extension slots
 *   core_err.h      errors and the thread contract of public calls
 *   core_agree.h    the agreement of collective calls
 *   core_wait.h     the waits on MPI requests
 *   core_net.h      hosts, nodes and the simulated network
 *   core_alloc.h    every allocation, with fault injection
 *   core_stage.h    staging memory counted against the budget
 *   core_driver.h   the I/O driver ops table
 *   core_io.h       the I/O calls on an open handle
 *   core_fmt.h      file format metadata and the HDF5 glue
 *   core_engine.h   the asynchronous engine
 *   chaos.h         the schedule fuzzer
 *
 * Invariants: every function returns 0 or a negative PASSION_E* code and,
 * on failure, has written the context's detail string through core_err();
 * counters only ever grow between resets; staging bytes in use never go
 * negative and peak_staging is their maximum. Each piece includes what it
 * uses, so a file of passion/ may include only the pieces it needs.
 */
#ifndef PASSION_CORE_H
#define PASSION_CORE_H

#include "passion.h"
#include <stdarg.h>
#include <sys/uio.h>
#include <stdbool.h>
#include <stdio.h>

#include "chaos.h"

#include "core_base.h"
#include "core_options.h"
#include "core_ctx.h"
#include "core_err.h"
#include "core_agree.h"
#include "core_wait.h"
#include "core_net.h"
#include "core_alloc.h"
#include "core_stage.h"
#include "core_driver.h"
#include "core_io.h"
#include "core_fmt.h"
#include "core_engine.h"

#endif
