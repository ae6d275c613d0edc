"""The README's "From Python" program, run as it is printed: the first
```python block after "### From Python" is executed (in a fresh namespace,
in this test's shared directory) on an x.npy that rank 0 made with numpy,
and what it read and wrote is checked against numpy: a = x[::2, 1:1000:7]
of the original, column 0 of every row set to 1.0 (each rank wrote its
rows), b = the final x[3, ::-1], every element of u's interior 1.0 after
the slab loop, and a counters dict printed.

PASSION_README: the README to read (meson sets the source tree's)."""
import ast
import contextlib
import io
import os
import re

import numpy as np

from conftest import barrier

README = os.environ.get("PASSION_README", os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "README.md"))


def readme_block():
    text = open(README).read()
    at = text.find("### From Python")
    assert at >= 0, "README has no '### From Python' section"
    m = re.search(r"```python\n(.*?)```", text[at:], re.S)
    assert m, "no ```python block after '### From Python'"
    return m.group(1)


def test_readme_python(ctx, shared):
    code = readme_block()
    n, m = 37, 1203                       # the key 1:1000:7 stops inside
    x = np.arange(n * m, dtype=np.float64).reshape(n, m) * 0.5 - 7.0
    path = os.path.join(shared, "x.npy")
    if ctx.rank == 0:
        np.save(path, x)
    barrier()
    g = {"__name__": "__readme__"}
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(shared)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md:From Python", "exec"), g)
    finally:
        os.chdir(here)
    barrier()
    assert np.array_equal(g["a"], x[::2, 1:1000:7])
    want = x.copy()
    want[:, 0] = 1.0
    assert np.array_equal(np.load(path), want)
    assert np.array_equal(g["b"], want[3, ::-1])
    # the README's context is finalized: look at u with the test's own
    with ctx.open(os.path.join(shared, "u.%d.laf")) as u:
        shape = u.shape
        got = u.read()
    assert shape == (1024, 1024)
    assert got.size > 0 and np.all(got == 1.0)
    printed = ast.literal_eval(out.getvalue().strip().splitlines()[-1])
    assert isinstance(printed, dict) and "bytes_written" in printed
    assert printed["bytes_written"] > 0
