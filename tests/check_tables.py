#!/usr/bin/env python3
"""Check every spelling of the I/O drivers and the exchange algorithms
against the one table of them, passion/names.c (names keyed by the public
enumerations of include/passion.h): the enumerations themselves and their
comments, the options' summary in the header, the ops tables (one ops per
value, named by its .id alone), the planner's price table of the exchange
(the same ids in the same order), the Fortran constants, the man pages and
the README. A name missing or extra in any of them, or spelled otherwise,
fails.

The options' parser and messages, passion_driver_name, passion_xchg_name
and the command's help read the table at run time and need no check. The
Python package spells neither list: options go to the library as text.

usage: check_tables.py SOURCE_ROOT"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..')
problems = []


def read(rel):
    with open(os.path.join(root, rel)) as f:
        return f.read()


def same(where, got, want):
    """got and want: lists of names (order kept where the source has one)."""
    if got != want:
        missing = [n for n in want if n not in got]
        extra = [n for n in got if n not in want]
        problems.append(f"{where}: {got} is not {want} (missing {missing}, "
                        f"extra {extra})")


# --- the one table: passion/names.c ---
names_c = read('passion/names.c')


def table(var):
    m = re.search(r'const char \*const ' + var + r'\[\] = \{(.*?)\};',
                  names_c, re.S)
    if not m:
        problems.append(f"passion/names.c: no table {var}")
        return {}
    body = re.sub(r'/\*.*?\*/', '', m.group(1), flags=re.S)
    entries = [e.strip() for e in body.split(',') if e.strip()]
    if not entries or entries[-1] != 'NULL':
        problems.append(f"passion/names.c: {var} does not end in NULL")
    rows = {}
    for e in entries[:-1]:
        r = re.fullmatch(r'\[(PASSION_\w+)\]\s*=\s*"([^"]*)"', e)
        if not r:
            problems.append(f"passion/names.c {var}: {e!r} is not "
                            f"[PASSION_VALUE] = \"name\"")
        else:
            rows[r.group(1)] = r.group(2)
    return rows


# --- the public enumerations (include/passion.h) ---
header = read('include/passion.h')


def enum(tag):
    m = re.search(r'typedef enum ' + tag + r' \{(.*?)\} ' + tag + ';',
                  header, re.S)
    if not m:
        problems.append(f"include/passion.h: no enum {tag}")
        return {}, {}
    values, quoted = {}, {}
    for name, value, rest in re.findall(
            r'(PASSION_\w+)\s*=\s*(-?\d+),?\s*(/\*.*?\*/)?', m.group(1),
            re.S):
        values[name] = int(value)
        q = re.match(r'/\*\s*"([^"]+)"', rest or '')
        if q:
            quoted[name] = q.group(1)
    return values, quoted


lists = {}
for what, tag, var in [('driver', 'passion_driver', 'core_driver_names'),
                       ('exchange', 'passion_xchg', 'core_xchg_names')]:
    values, quoted = enum(tag)
    named = table(var)
    # every value from 0 up has a name (PASSION_XCHG_DEFAULT, -1, has none)
    members = sorted((v, k) for k, v in values.items() if v >= 0)
    same(f"passion/names.c {var}: the values named",
         sorted(named), sorted(k for _, k in members))
    if [v for v, _ in members] != list(range(len(members))):
        problems.append(f"include/passion.h {tag}: values not 0..n-1")
    order = [named.get(k, '?') for _, k in members]
    lists[what] = {'values': values, 'names': order,
                   'by_member': named}
    same(f"include/passion.h {tag}: the quoted names",
         [quoted.get(k, '?') for _, k in members], order)
    if len(set(order)) != len(order) or any(n != n.lower() for n in order):
        problems.append(f"passion/names.c {var}: names not distinct and "
                        f"lower case: {order}")

drivers = lists['driver']['names']
xchgs = lists['exchange']['names']


def option_list(text, where, key):
    """The 'a | b | c' list after an option's key, up to '('."""
    m = re.search(r'\b' + key + r'\s+((?:[\w-]+\s*\|\s*)+[\w-]+)\s*\(', text)
    if not m:
        problems.append(f"{where}: no list of the option {key}")
        return []
    return re.split(r'\s*\|\s*', m.group(1).strip())


# --- the header's summary of the options ---
summary = re.sub(r'\n \*\s*', ' ', header)
same("include/passion.h options: driver", option_list(summary,
     "include/passion.h", 'driver'), drivers)
same("include/passion.h options: exchange", option_list(summary,
     "include/passion.h", 'exchange'), xchgs)

# --- the ops tables: an algorithm's or a driver's ops names it by its .id
#     alone (no name of its own); the ops registered (collective/exchange/
#     xchg_table.c, passion/io.c's drivers[]) are one per value of the
#     table (the algorithms but auto) ---
def sources(folder):
    d = os.path.join(root, folder)
    return {f: read(os.path.join(folder, f)) for f in sorted(os.listdir(d))
            if f.endswith('.c')}


def ops_ids(folder, typ, prefix, registry, array):
    """{ops symbol: its .id member} for the ops of type typ defined in
    folder and registered in folder/registry's array; a problem for an
    ops with a name of its own, without an .id, or defined and not
    registered (or the other way round)."""
    defined = {}
    for f, text in sources(folder).items():
        for sym, body in re.findall(r'\b' + typ + r'\s+(\w+)\s*=\s*\{(.*?)'
                                    r'\n\};', text, re.S):
            ids = re.findall(r'\.id\s*=\s*(' + prefix + r'\w+)', body)
            if re.search(r'\.name\s*=', body):
                problems.append(f"{folder}/{f}: ops {sym} has a .name of its "
                                f"own (its name is names.c's, by its .id)")
            if len(ids) != 1:
                problems.append(f"{folder}/{f}: ops {sym} has .id {ids}")
            else:
                defined[sym] = ids[0]
    m = re.search(array + r'\[\]\s*=\s*\{(.*?)\};',
                  read(os.path.join(folder, registry)), re.S)
    listed = re.findall(r'&(\w+)', m.group(1)) if m else []
    same(f"{folder}/{registry}: the ops registered", sorted(listed),
         sorted(defined))
    return {sym: defined[sym] for sym in listed if sym in defined}


for what, folder, typ, prefix, registry, array, skip in [
        ('exchange', 'collective/exchange', 'coll_xchg_ops', 'PASSION_XCHG_',
         'xchg_table.c', 'xchg_table', 'PASSION_XCHG_AUTO'),
        ('driver', 'passion', 'core_driver_ops', 'PASSION_DRIVER_', 'io.c',
         'drivers', None)]:
    ids = list(ops_ids(folder, typ, prefix, registry, array).values())
    if len(set(ids)) != len(ids):
        problems.append(f"{folder}/{registry}: ids registered twice: {ids}")
    same(f"{folder} ops: the {what} values with ops", sorted(ids),
         sorted(k for k in lists[what]['by_member'] if k != skip))

# --- the planner's prices (collective/planner/plan_xchg_price*.c): one
#     entry per algorithm the exchange runs, in the ops table's order (ties
#     of the model break alike), and hdr_step set where the ops has
#     hdr_sends (the model's entry agreement and the run agree) ---
def bodies(folder, typ):
    out = {}
    for f, text in sources(folder).items():
        for sym, body in re.findall(r'\b' + typ + r'\s+(\w+)\s*=\s*\{(.*?)'
                                    r'\n\};', text, re.S):
            ids = re.findall(r'\.id\s*=\s*(PASSION_XCHG_\w+)', body)
            out[ids[0] if ids else sym] = body
    return out


def listed_ids(folder, registry, array, typ):
    m = re.search(array + r'\[\]\s*=\s*\{(.*?)\};',
                  read(os.path.join(folder, registry)), re.S)
    syms = re.findall(r'&(\w+)', m.group(1)) if m else []
    ids = {}
    for f, text in sources(folder).items():
        for sym, body in re.findall(r'\b' + typ + r'\s+(\w+)\s*=\s*\{(.*?)'
                                    r'\n\};', text, re.S):
            i = re.findall(r'\.id\s*=\s*(PASSION_XCHG_\w+)', body)
            ids[sym] = i[0] if i else sym
    return [ids.get(s, s) for s in syms]


exec_order = listed_ids('collective/exchange', 'xchg_table.c', 'xchg_table',
                        'coll_xchg_ops')
price_order = listed_ids('collective/planner', 'plan_xchg_price.c',
                         'price_table', 'plan_xchg_alg')
same("collective/planner/plan_xchg_price.c price_table (the ids of "
     "xchg_table.c, in its order)", price_order, exec_order)
ex_b = bodies('collective/exchange', 'coll_xchg_ops')
pr_b = bodies('collective/planner', 'plan_xchg_alg')
for i in exec_order:
    hs = bool(re.search(r'\.hdr_sends\s*=', ex_b.get(i, '')))
    hd = bool(re.search(r'\.hdr_step\s*=\s*1', pr_b.get(i, '')))
    if hs != hd:
        problems.append(f"{i}: ops .hdr_sends {'set' if hs else 'unset'} "
                        f"but the planner's .hdr_step "
                        f"{'set' if hd else 'unset'}")

# --- the Fortran constants: the same members and values ---
f90 = re.sub(r'&\s*\n\s*', ' ', read('bindings/fortran/passion.f90'))
for what, prefix in [('exchange', 'PASSION_XCHG_'),
                     ('driver', 'PASSION_DRIVER_')]:
    got = {k: int(v) for k, v in
           re.findall(r'\b(' + prefix + r'\w+)\s*=\s*(-?\d+)', f90)}
    want = lists[what]['values']
    if what == 'driver' and not got:
        continue  # the module has no driver constants (options are text)
    same(f"bindings/fortran/passion.f90 {prefix}*",
         sorted(got.items()), sorted(want.items()))

# --- the man pages ---
page = read('man/passion_context.3')
same("man/passion_context.3 driver", option_list(
    page, "man/passion_context.3", 'driver'), drivers)
same("man/passion_context.3 exchange", option_list(
    page, "man/passion_context.3", 'exchange'), xchgs)
page = read('man/passion_exchange.3')
named = sorted(set(re.findall(r'\\fB(PASSION_XCHG_\w+)\\fP', page)))
same("man/passion_exchange.3 PASSION_XCHG_*", named,
     sorted(lists['exchange']['values']))

# --- the README: the algorithms' table, the drivers in the layout ---
readme = read('README.md')
m = re.search(r'^\| algorithm \|.*?\n\|[- |]+\n((?:\|.*\n)+)', readme, re.M)
rows = re.findall(r'^\| `([\w-]+)`', m.group(1), re.M) if m else []
same("README.md algorithms' table", sorted(rows), sorted(xchgs))
m = re.search(r'I/O drivers \(([^)]*)\)', readme)
same("README.md layout: I/O drivers",
     re.split(r',\s*', m.group(1)) if m else [], drivers)

for p in problems:
    print(p)
print(f"{len(problems)} problems: drivers {drivers}, algorithms {xchgs}")
sys.exit(1 if problems else 0)
