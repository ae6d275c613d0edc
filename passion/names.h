/*
 * names.h - the names of the I/O drivers (enum passion_driver) and of the
 * exchange algorithms (enum passion_xchg): the one place in the code that
 * lists either. The options' parser and its messages, passion_driver_name
 * and passion_xchg_name (and through them the exchange's names, the I/O
 * messages and the command's help) read these tables; the ops of a driver
 * or an algorithm carry its enumeration value (.id), no name.
 * tests/check_tables.py checks the public header's comments, the ops
 * registered (one per value), the Fortran constants, the man pages and
 * the README against them.
 *
 * Invariants: names[v] names enum value v for every v from 0 to the
 * enumeration's last value, the entry after it is NULL; names are
 * distinct and lower case (the parser compares without case).
 */
#ifndef PASSION_NAMES_H
#define PASSION_NAMES_H

#include "core.h"

extern CORE_HIDDEN const char *const core_driver_names[];
extern CORE_HIDDEN const char *const core_xchg_names[];

/* The number of names before the NULL that ends the table. */
CORE_HIDDEN int core_names_count(const char *const *names);

#endif
