#!/usr/bin/env python3
"""A README program is an example file byte for byte (so the example in
the README is the one that is built and run).

usage: check_readme.py README FILE [HEADING LANG]
The first ```LANG block after the line HEADING (default: "## Using it",
c) must equal FILE."""
import re
import sys

readme, example = sys.argv[1], sys.argv[2]
heading = sys.argv[3] if len(sys.argv) > 3 else "## Using it"
lang = sys.argv[4] if len(sys.argv) > 4 else "c"
text = open(readme).read()
sec = re.split(r"^" + re.escape(heading) + r"$", text, maxsplit=1,
               flags=re.M)
if len(sec) != 2:
    sys.exit("README has no '%s' section" % heading)
m = re.search(r"```" + re.escape(lang) + r"\n(.*?)```", sec[1], re.S)
if not m:
    sys.exit("no ```%s block in '%s'" % (lang, heading))
if m.group(1) != open(example).read():
    sys.exit("README '%s' block differs from %s" % (heading, example))
print("README example == " + example)
