#!/usr/bin/env python3
"""Print a line per meson test log given (its build and counts) and one
closing line for all of them: N passed, N failed, N skipped."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    p = f = s = 0
    bad = []
    try:
        with open(path) as fh:
            for line in fh:
                t = json.loads(line)
                r = t.get("result", "")
                if r in ("OK", "EXPECTEDFAIL"):
                    p += 1
                elif r == "SKIP":
                    s += 1
                else:
                    f += 1
                    bad.append(t.get("name", "?"))
    except OSError:
        print(f"missing test log {path}")
        failed += 1
        continue
    print(f"{path}: {p} passed, {f} failed, {s} skipped"
          + (f" ({', '.join(bad)})" if bad else ""))
    passed, failed, skipped = passed + p, failed + f, skipped + s
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
