#!/usr/bin/env python3
"""Check the man pages: each renders with `man -l` without a warning, and
every function the shared library exports (nm -D) is named in the NAME
section of some page. Exit 77 (skipped) when man is not installed."""
import os
import re
import shutil
import subprocess
import sys

lib, pages = sys.argv[1], sys.argv[2:]
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
print(f"{len(pages)} pages, {len(exported)} exported functions, all named"
      if not failed else "man page check failed")
sys.exit(1 if failed else 0)
