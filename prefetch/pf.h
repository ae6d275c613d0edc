/*
 * pf.h - internals of the prefetch/ folder (prefix pf_): asynchronous
 * section requests, the slab iterator and the partition iterator, on the
 * core's asynchronous engine (passion/engine.c: core_aio_*).
 *
 * Invariants: everything that touches the context (staging accounting,
 * sieving copies) happens on the calling thread when a completion is
 * reaped; an op is owned by the engine from submit to its completion
 * function, by its request otherwise.
 */
#ifndef PASSION_PF_H
#define PASSION_PF_H

#include "../ocad/ocad.h"

#define PF_QDEPTH CORE_QDEPTH /* windows in flight per request */

#endif
