#!/usr/bin/env python3
"""Check the man pages: each renders with `man -l` without a warning;
every function the shared library exports (nm -D) is named in the NAME
section of some page of the C library (the pages given before
--fortran, if any); with --command PASSION, every command `PASSION help`
lists has an entry in passion(1); with --fortran MODULE PAGE, every
public procedure of the Fortran module's source is named in PAGE; with
--tree SRCDIR, every man page cited anywhere in the source tree
(NAME(1), NAME(3), NAME(5) or NAME(7) with NAME passion or passion_*,
also as troff writes it: \fBNAME\fP(3), .BR NAME (3)) is one of the
pages given. Exit 77 (skipped) when man is not installed.

usage: check_man.py LIB PAGE... [--command PASSION] [--fortran MODULE PAGE]
                    [--tree SRCDIR]"""
import os
import re
import shutil
import subprocess
import sys


def option(flag, n):
    """Take flag and its n values out of sys.argv; None if absent."""
    if flag not in sys.argv:
        return None
    i = sys.argv.index(flag)
    vals = sys.argv[i + 1:i + 1 + n]
    del sys.argv[i:i + 1 + n]
    return vals


command = option('--command', 1)
fortran = option('--fortran', 2)
tree = option('--tree', 1)
lib, pages = sys.argv[1], sys.argv[2:]
if fortran:
    pages.append(fortran[1])
if not shutil.which("man"):
    print("man is not installed: skipped")
    sys.exit(77)
env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MANPAGER="cat",
           PAGER="cat")
failed = False
named = set()
for p in pages:
    r = subprocess.run(["man", "--warnings", "-l", p], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip() or not r.stdout.strip():
        print(f"{p}: man -l failed (rc {r.returncode}): {r.stderr.strip()}")
        failed = True
    src = open(p).read()
    m = re.search(r"^\.SH NAME\n(.*?)^\.SH", src, re.S | re.M)
    if not m:
        print(f"{p}: no NAME section")
        failed = True
        continue
    if fortran and p == fortran[1]:
        continue  # the module's page: checked against its source below
    named |= set(re.findall(r"\bpassion_[a-z0-9_]+", m.group(1)))
out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                     text=True, check=True).stdout
exported = {l.split()[-1] for l in out.splitlines()
            if len(l.split()) >= 3 and l.split()[1] == "T"
            and l.split()[-1].startswith("passion_")}
missing = sorted(exported - named)
if missing:
    print("exported but named in no page's NAME section: " + ", ".join(missing))
    failed = True
stale = sorted(named - exported)
if stale:
    print("named in a page but not exported: " + ", ".join(stale))
    failed = True
if not exported:
    print("no exported passion_* function found in " + lib)
    failed = True


def page_name(p):
    """man/passion_file.3 -> passion_file(3)"""
    base = os.path.basename(p)
    stem, _, sec = base.rpartition('.')
    return f"{stem}({sec})"


if command:
    # passion(1) has an entry (.TP then .B/.BI "cmd ...") for every
    # command help lists
    r = subprocess.run(command + ['help'], capture_output=True, text=True,
                       env=dict(os.environ, HYDRA_LAUNCHER='fork'))
    block = r.stdout.split('commands:\n', 1)[-1].split('\n\n', 1)[0]
    cmds = re.findall(r'^  ([a-z]+) ', block, re.M)
    one = [p for p in pages if os.path.basename(p) == 'passion.1']
    if r.returncode != 0 or len(cmds) < 2 or not one:
        print(f"passion help (rc {r.returncode}) lists {cmds}; "
              f"passion.1 given: {bool(one)}")
        failed = True
    else:
        src = open(one[0]).read()
        for c in cmds:
            if not re.search(r'^\.TP\n\.BI? "?' + c + r'\b', src, re.M):
                print(f"passion(1) has no entry for the command {c} "
                      f"(`passion help` lists it)")
                failed = True
if fortran:
    # the module's public procedures (the `public ::` lists after the
    # "public procedures" mark), every one named in its page
    mod = open(fortran[0]).read()
    pub = mod.split('public procedures', 1)[-1]
    procs = set()
    for m in re.finditer(r'^\s*public\s*::(.*?)(?<!&)\n', pub, re.M | re.S):
        procs |= set(re.findall(r'passion_[a-z0-9_]+',
                                m.group(1).replace('&\n', ' ')))
    text = open(fortran[1]).read().replace('\\_', '_')
    gone = sorted(p for p in procs if not re.search(r'\b' + p + r'\b',
                                                    text))
    if not procs:
        print(f"no public procedure found in {fortran[0]}")
        failed = True
    if gone:
        print(f"{fortran[1]} does not name the module's " + ", ".join(gone))
        failed = True
if tree:
    # every page cited in the source tree is one of ours (build
    # directories, VCS data and caches skipped)
    have = {page_name(p) for p in pages}
    cite = re.compile(r'(?<![a-z0-9_])(passion[a-z0-9_]*)(?:\\f[BIRP])*\s?\(([1357])\)')
    cited = {}
    for d, dirs, files in os.walk(tree[0]):
        dirs[:] = [x for x in dirs if not x.startswith(('.', 'build')) and
                   x != '__pycache__' and not os.path.exists(
                       os.path.join(d, x, 'meson-private'))]
        for f in files:
            fp = os.path.join(d, f)
            try:
                text = open(fp, encoding='utf-8').read()
            except (UnicodeDecodeError, OSError):
                continue
            for m in cite.finditer(text):
                cited.setdefault(f"{m.group(1)}({m.group(2)})", fp)
    for c in sorted(set(cited) - have):
        print(f"{os.path.relpath(cited[c], tree[0])} cites {c}: no such page")
        failed = True
print(f"{len(pages)} pages, {len(exported)} exported functions, all named"
      if not failed else "man page check failed")
sys.exit(1 if failed else 0)
