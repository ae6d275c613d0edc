#!/usr/bin/env python3
"""The README's "Using it" program is examples/using_it.c, byte for byte
(so the example in the README is the one that is built and run)."""
import re
import sys

readme, example = sys.argv[1], sys.argv[2]
text = open(readme).read()
sec = text.split("## Using it", 1)
if len(sec) != 2:
    sys.exit("README has no 'Using it' section")
m = re.search(r"```c\n(.*?)```", sec[1], re.S)
if not m:
    sys.exit("no ```c block in 'Using it'")
if m.group(1) != open(example).read():
    sys.exit("README 'Using it' block differs from " + example)
print("README example == " + example)
