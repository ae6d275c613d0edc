#!/usr/bin/python3
"""test_cli_output.py - what the passion command prints.

usage: test_cli_output.py PASSION MPIEXEC SCRATCH NP dump|examples
                          [--seed S]

`dump` at NP ranks: float16/32/64 and complex values parsed back bit for
bit against numpy (random bit patterns, subnormals, extremes, -0, inf,
nan), each as short as numpy's shortest repr (at most one digit more, the
price of "%.Ne"), 0.1 printed as 0.1, positional from 1e-4 to 1e16; float16 from a file h5py wrote
against h5py; a netCDF char variable made by ncgen printed as ncdump
prints it (rows of the last dimension, quoted) against netCDF4-python or
ncdump; HDF5 fixed-length strings h5py wrote, each quoted, against h5py
(and opaque bytes still as bytes); the number of write system calls of a dump of 20000 values
(strace -c, where strace runs) far below the number of values, the output
the same at any rank count; --progress lines on stderr (with
PASSION_PROGRESS_INTERVAL=0 many, rising to 100%), none without it.
`examples`: every example `passion help` prints, run as printed (files
made with numpy, h5py and ncgen; the demo with --quick and a scratch
--dir), `passion demo --help`'s options at tiny sizes (one run).
Prints the seed; randomised cases use it.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import warnings

import numpy as np

PASSION, SCRATCH = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[3])
MPIEXEC = os.path.abspath(sys.argv[2]) if '/' in sys.argv[2] else sys.argv[2]
NP, PART = int(sys.argv[4]), sys.argv[5]
SEED = int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv \
    else 20261129 + NP
nrng = np.random.default_rng(SEED)
failures = 0
checks = 0


def check(cond, msg):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL (seed {SEED}, np {NP}): {msg}", flush=True)
    return cond


def strip_launcher(err):
    """Drop Open MPI's notices between lines of dashes."""
    keep, inside = [], False
    for line in err.splitlines(keepends=True):
        if re.fullmatch(r"-{20,}\n?", line):
            inside = not inside
            continue
        if not inside:
            keep.append(line)
    return "".join(keep)


def run(args, np_=None, env=None, wrap=None):
    """passion under mpiexec (wrap: a command before passion)."""
    n = NP if np_ is None else np_
    e = dict(os.environ, HYDRA_LAUNCHER='fork')
    e.pop('PASSION_PROGRESS_INTERVAL', None)
    e.update(env or {})
    cmd = [MPIEXEC, '-n', str(n)] + (wrap or []) + [PASSION] + args
    p = subprocess.run(cmd, cwd=SCRATCH, capture_output=True, text=True,
                       env=e, timeout=300)
    return p.returncode, p.stdout, strip_launcher(p.stderr)


def path(name):
    return os.path.join(SCRATCH, name)


def have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        print(f"test_cli_output: no {module}: its checks skipped", flush=True)
        return False


def tokens(out):
    """The values of a dump, in order (after each line's "[i,j]")."""
    vals = []
    for line in out.splitlines():
        if line.startswith('['):
            vals.extend(line[line.index(']') + 1:].split())
    return vals


# ------------------------------------------------------------- floats


def float_cases(dt):
    """Values of dtype dt: edge cases and random bit patterns."""
    fi = np.finfo(dt)
    edge = [0.1, 1 / 3, 2 / 3, 1.0, -2.5, 100000.0, 123456789.0, 1e-5,
            1e-4, 1.5e-4, 1e15, 1e16, 3e10, 10100.0, 65504.0,
            float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
            -float(fi.smallest_subnormal) * 3, float(fi.eps), 0.0, -0.0,
            np.inf, -np.inf, np.nan]
    ut = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dt).itemsize]
    bits = nrng.integers(0, np.iinfo(ut).max, 3000, dtype=ut,
                         endpoint=True)
    with warnings.catch_warnings():  # edge cases past float16's range
        warnings.simplefilter('ignore')
        e = np.array(edge, dtype=dt)
    return np.concatenate([e, bits.view(dt)]).astype(dt)


def parse(toks, dt, conv=float):
    """The tokens as an array of dt; None if one is no number."""
    try:
        return np.array([conv(t) for t in toks], dtype=dt)
    except ValueError:
        return None


def digits(text):
    """Significant digits of a number's text ("0.0125" -> 3, "10000" ->
    1)."""
    m = re.match(r'-?(\d*)\.?(\d*)', text.lower())
    d = (m.group(1) + m.group(2)).strip('0')
    return max(len(d), 1)


def same_bits(got, want):
    got, want = (x.astype(x.dtype.newbyteorder('=')) for x in (got, want))
    ui = {2: 'u2', 4: 'u4', 8: 'u8'}[want.dtype.itemsize]
    nan = np.isnan(want)
    return got.shape == want.shape and np.array_equal(np.isnan(got), nan) \
        and np.array_equal(got[~nan].view(ui), want[~nan].view(ui))


def dump_floats():
    for dt in ('<f2', '<f4', '<f8', '>f8'):
        a = float_cases(dt)
        name = f"fl{dt[1:]}{'b' if dt[0] == '>' else ''}.npy"
        np.save(path(name), a)
        rc, out, err = run(['dump', '--budget', '4K', name])
        toks = tokens(out)
        got = parse(toks, dt)
        check(rc == 0 and got is not None and same_bits(got, a),
              f"dump {name} ({dt}) parsed back bit for bit: rc {rc} {err}")
        check(toks[:1] == ['0.1'], f"{dt}: 0.1 prints as {toks[:1]}")

        longer = 0
        for t, v in zip(toks if got is not None else [], a):
            if not np.isfinite(v):
                check(t == repr(float(v)).replace('inf', 'inf'),
                      f"{dt}: {v} prints as {t!r}")
                continue
            want = digits(np.format_float_scientific(v, unique=True))
            longer += digits(t) > want
            check(want <= digits(t) <= want + 1,
                  f"{dt}: {t!r} for numpy's {v!r}")
            # as numpy's repr (positional from 1e-4 to 1e16), less ".0"
            ref = str(v)
            ref = ref[:-2] if ref.endswith('.0') else ref
            check(digits(t) > want or t == ref,
                  f"{dt}: {t!r} where numpy prints {str(v)!r}")
        print(f"  {dt}: {len(toks)} values, {longer} one digit longer "
              f"than numpy's repr", flush=True)
    # complex: (re+imj), each part parsed back bit for bit
    num = r'(?:nan|inf|[\d.]+(?:e[+-]\d+)?)'
    for dt, fdt in (('<c8', '<f4'), ('<c16', '<f8')):
        part = float_cases(fdt)
        a = np.empty(500, dt)
        a.real, a.imag = part[:500], part[500:1000]
        np.save(path(f"cx{dt[2:]}.npy"), a)
        rc, out, err = run(['dump', f"cx{dt[2:]}.npy"])
        re_, im_ = [], []
        for t in tokens(out):
            m = re.fullmatch(rf'\((-?{num})([+-]{num})j\)', t)
            if not check(m, f"{dt}: {t!r} is no (re+imj)"):
                break
            re_.append(float(m.group(1)))
            im_.append(float(m.group(2)))
        check(rc == 0 and same_bits(np.array(re_, fdt), a.real.copy()) and
              same_bits(np.array(im_, fdt), a.imag.copy()),
              f"dump {dt} parsed back bit for bit: rc {rc} {err}")


def dump_h5_float16():
    if not have('h5py'):
        return
    import h5py
    a = float_cases('<f2')[:400].reshape(20, 20)
    with h5py.File(path('h16.h5'), 'w') as f:
        f['g/h'] = a
    with h5py.File(path('h16.h5'), 'r') as f:
        ref = f['g/h'][...]
    rc, out, err = run(['dump', 'h16.h5:/g/h', '3:17:2,::3'])
    want = ref[3:17:2, ::3].ravel()
    got = parse(tokens(out), '<f2')
    check(rc == 0 and got is not None and same_bits(got, want),
          f"dump of an HDF5 float16 dataset against h5py: {rc} {err}")
    check(not any(t.startswith('0x') for t in tokens(out)),
          "float16 printed as hex")


# --------------------------------------------------------------- text


def quoted(out):
    """The quoted texts of a dump, in order, unescaped."""
    return [bytes(m, 'latin1').decode('unicode_escape').encode('latin1')
            for m in re.findall(r'"((?:[^"\\]|\\.)*)"', out)]


def dump_h5_strings():
    if not have('h5py'):
        return
    import h5py
    words = [b'ab', b'xyz"', b'', b'a\nb', b'tab\t', b'a\\b', b'\x01\xff',
             b'full']
    a = np.array([words[int(i)] for i in nrng.integers(0, len(words), 60)],
                 dtype='S4').reshape(6, 10)
    with h5py.File(path('str.h5'), 'w') as f:
        f['s'] = a
        f['o'] = np.arange(12, dtype='u1').view('V4')
    with h5py.File(path('str.h5'), 'r') as f:
        ref = f['s'][...]
    for sec in ['', '1:5:2,::3', '-1,2:']:
        rc, out, err = run(['dump', 'str.h5:/s'] + ([sec] if sec else []))
        want = [bytes(x) for x in ref[np_index(sec)].ravel()]
        check(rc == 0 and quoted(out) == want,
              f"dump str.h5:/s {sec!r} against h5py: {quoted(out)} want "
              f"{want} ({err.strip()})")
    # opaque bytes stay bytes
    rc, out, _ = run(['dump', 'str.h5:/o'])
    check(rc == 0 and tokens(out) == ['0x00010203', '0x04050607',
                                      '0x08090a0b'], f"opaque: {out!r}")


def np_index(sec):
    return tuple(slice(*[int(x) if x else None for x in p.split(':')])
                 if ':' in p else int(p) for p in sec.split(',')) \
        if sec else ()


CDL = r'''netcdf chars {
dimensions:
  n = 4 ; len = 7 ; one = 5 ;
variables:
  char name(n, len) ;
  char word(one) ;
  byte b(n) ;
data:
  name = "abc", "hello!!", "x\ty\"z", "" ;
  word = "q" ;
  b = -1, 0, 1, 127 ;
}
'''


def ncdump_rows(var):
    """ncdump's text of a char variable: its quoted rows."""
    p = subprocess.run(['ncdump', '-v', var, path('chars.nc')],
                       capture_output=True, text=True)
    body = p.stdout.split(f" {var} =", 1)[1].split(';', 1)[0]
    return [bytes(m, 'latin1').decode('unicode_escape')
            for m in re.findall(r'"((?:[^"\\]|\\.)*)"', body)]


def dump_text_rows(out):
    rows = []
    for line in out.splitlines():
        m = re.match(r'\[([\d,]+)\] "((?:[^"\\]|\\.)*)"$', line)
        if not check(m, f"a char row line: {line!r}"):
            continue
        rows.append(((tuple(int(x) for x in m.group(1).split(','))),
                     bytes(m.group(2), 'latin1').decode('unicode_escape')))
    return rows


def dump_nc_char():
    if not shutil.which('ncgen') or not shutil.which('ncdump'):
        print("test_cli_output: no ncgen/ncdump: char checks skipped")
        return
    open(path('chars.cdl'), 'w').write(CDL)
    subprocess.run(['ncgen', '-o', path('chars.nc'), path('chars.cdl')],
                   check=True)
    if have('netCDF4'):
        import netCDF4
        with netCDF4.Dataset(path('chars.nc')) as f:
            f.set_auto_chartostring(False)
            name = np.array(f['name'][...]).astype('S1')
            word = np.array(f['word'][...]).astype('S1')
    else:
        rows = ncdump_rows('name')
        name = np.array([list(r.encode().ljust(7, b'\0')) for r in rows],
                        dtype='u1').view('S1')
        word = np.array(list(ncdump_rows('word')[0].encode().ljust(
            5, b'\0')), dtype='u1').view('S1')
    check(ncdump_rows('name') == ['abc', 'hello!!', 'x\ty"z', ''],
          f"ncdump's rows: {ncdump_rows('name')}")
    for var, ref, sec in [('name', name, ''), ('name', name, '1:3,1:'),
                          ('name', name, '::2,::2'), ('word', word, ''),
                          ('word', word, '1:')]:
        rc, out, err = run(['dump', f"chars.nc:{var}"] + ([sec] if sec
                                                           else []))
        sl = tuple(slice(*[int(x) if x else None for x in p.split(':')])
                   for p in sec.split(',')) if sec else ()
        want = ref[sl]
        want2 = want.reshape(-1, want.shape[-1])
        rows = dump_text_rows(out) if rc == 0 else []
        texts = [b''.join(r).rstrip(b'\0').decode() for r in want2]
        check(rc == 0 and [t for _, t in rows] == texts,
              f"dump chars.nc:{var} {sec!r}: {[t for _, t in rows]} want "
              f"{texts} ({err.strip()})")
        starts = [s for s, _ in rows]
        check(len(set(starts)) == len(starts) and
              all(s[-1] == (int(sec.split(',')[-1].split(':')[0] or 0)
                            if sec else 0) for s in starts),
              f"dump chars.nc:{var} {sec!r}: row indices {starts}")
    # a byte variable stays numbers
    rc, out, _ = run(['dump', 'chars.nc:b'])
    check(tokens(out) == ['-1', '0', '1', '127'], f"byte: {out!r}")


# ------------------------------------------------- writes and progress


def dump_writes():
    a = nrng.standard_normal(20000)
    np.save(path('many.npy'), a)
    rc, one, _ = run(['dump', 'many.npy'], np_=1)
    rc2, out, err = run(['dump', '--budget', '8K', 'many.npy'])
    got = parse(tokens(out), '<f8')
    check(rc == 0 and rc2 == 0 and out == one and got is not None and
          np.array_equal(got, a),
          f"dump at {NP} ranks (8K chunks) = at 1 rank = numpy: {err}")
    strace = shutil.which('strace')
    if not strace:
        print("test_cli_output: no strace: write count skipped", flush=True)
        return
    np.save(path('one.npy'), a[:1])
    base = strace_writes(strace, 'one.npy')
    many = strace_writes(strace, 'many.npy')
    if base is None or many is None:
        return
    # rank 0 prints; the rest of the calls are the MPI's own, the same
    # for one value
    extra = many[0] - base[0]
    check(extra <= 50, f"dump of {a.size} values: {many[0]} write calls on "
          f"rank 0, {base[0]} for one value (want a few more, far fewer "
          f"than the values)")
    print(f"  dump of {a.size} values at {NP} ranks: {many} write calls "
          f"per rank, one value: {base}", flush=True)


def strace_writes(strace, name):
    """Write calls per rank of `passion dump name` under strace -c (each
    rank's threads too); None where strace cannot trace here."""
    for f in os.listdir(SCRATCH):
        if f.startswith('writes.'):
            os.unlink(path(f))
    wrap = ['sh', '-c', 'exec "$0" -f -qq -c -e trace=write -o '
            '"writes.${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}" "$@"',
            strace]
    rc, out, err = run(['dump', name], wrap=wrap)
    files = [f for f in os.listdir(SCRATCH) if f.startswith('writes.')]
    if rc != 0 or len(files) != NP:
        print(f"test_cli_output: strace did not run here ({rc}, {err[-300:]}"
              f"): write count skipped", flush=True)
        return None
    _, one, _ = run(['dump', name], np_=1)
    check(out == one, f"dump {name}: the output under strace")
    writes = {}
    for f in files:
        m = re.search(r'^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)(?:\s+\d+)?\s+write$',
                      open(path(f)).read(), re.M)
        writes[int(f.split('.')[1])] = int(m.group(1)) if m else 0
    return writes


def progress_lines(err):
    return [int(m.group(1)) for m in
            re.finditer(r'^passion dump: +(\d+)%', err, re.M)]


def dump_progress():
    # a line per 4096 values with the interval 0
    rc, out, err = run(['dump', '--progress', '--budget', '8K', 'many.npy'],
                       env={'PASSION_PROGRESS_INTERVAL': '0'})
    pct = progress_lines(err)
    check(rc == 0 and len(pct) >= 5 and pct == sorted(pct) and
          pct[-1] == 100 and pct[0] < 100,
          f"--progress with interval 0: {pct} {err!r}")
    check(len(tokens(out)) == 20000, "--progress changes the output")
    # the default interval: at least the first and the last line
    rc, _, err = run(['dump', '--progress', 'many.npy'])
    pct = progress_lines(err)
    check(rc == 0 and len(pct) >= 2 and pct[0] == 0 and pct[-1] == 100,
          f"--progress: {pct} {err!r}")
    for extra in ([], ['--no-progress']):
        rc, _, err = run(['dump'] + extra + ['many.npy'],
                         env={'PASSION_PROGRESS_INTERVAL': '0'})
        check(rc == 0 and err.strip() == '',
              f"dump {extra} prints on stderr: {err!r}")


# ----------------------------------------------------------- examples


def help_examples():
    rc, out, _ = run(['help'], np_=1)
    lines = [l for l in out.split('examples:\n', 1)[-1].splitlines()
             if 'passion' in l.split()]
    check(rc == 0 and len(lines) >= 5, f"help's examples: {lines}")
    h5 = have('h5py')
    if h5:
        import h5py
        u = nrng.standard_normal((40, 30))
        with h5py.File(path('run.h5'), 'w') as f:
            f['fields/u'] = u
    nc = shutil.which('ncgen')
    if nc:
        vals = ', '.join(str(i) for i in range(40 * 30))
        open(path('run.cdl'), 'w').write(
            'netcdf run {\ndimensions:\n  y = 40 ; x = 30 ;\nvariables:\n'
            f'  double u(y, x) ;\ndata:\n  u = {vals} ;\n}}\n')
        subprocess.run(['ncgen', '-o', path('run.nc'), path('run.cdl')],
                       check=True)
    for f in os.listdir(SCRATCH):
        if f.startswith('u.') or f == 'u.npy':
            os.unlink(path(f))
    ran = 0
    for line in lines:
        words = shlex.split(line)
        i = words.index('passion')
        env = dict(w.split('=', 1) for w in words[:i] if '=' in w)
        launch = [w for w in words[:i] if '=' not in w]
        n = int(launch[2]) if len(launch) > 2 and launch[1] == '-n' else 1
        args = words[i + 1:]
        if args[0] == 'demo':
            if '--quick' not in args:
                args.append('--quick')
            if '--dir' in args:
                args[args.index('--dir') + 1] = SCRATCH
            else:
                args += ['--dir', SCRATCH]
        needs = ' '.join(args)
        if ('run.h5' in needs and not h5) or ('run.nc' in needs and not nc):
            print(f"  skipped (no tool to make its file): {line.strip()}")
            continue
        rc, out, err = run(args, np_=n, env=env)
        check(rc == 0, f"help's example {line.strip()!r}: exit {rc} {err}")
        ran += 1
        if args[0] == 'get' and rc == 0:
            got = np.load(path(args[args.index('-o') + 1]))
            check(np.array_equal(got, np.arange(1200.0).reshape(40, 30)
                                 [0:10, ::4]), "get example's values")
        if args[0] == 'convert' and rc == 0:
            rc, out, _ = run(['ls', args[2]], np_=1)
            check(rc == 0 and re.search(r'dist +CYCLIC\(\d+\), \*', out),
                  f"convert example's set: {out!r}")
    check(ran >= 4, f"help's examples run: {ran}")


def demo_options():
    """Every option demo --help lists, at tiny sizes."""
    rc, out, _ = run(['demo', '--help'], np_=1)
    opts = list(dict.fromkeys(re.findall(r'(?<![\w-])(--[a-z]+)', out)))
    check(rc == 0 and len(opts) >= 8, f"demo --help's options: {opts}")
    args = {'--quick': [], '--jacobi': ['64'], '--iters': ['2'],
            '--image': ['64'], '--window': ['3'], '--ratio': ['8'],
            '--dir': [SCRATCH], '--keep': [], '--budget': ['64K']}
    for o in opts:
        check(o in args, f"demo --help lists {o}, which this test lacks")
    before = set(os.listdir(SCRATCH))
    cmd = []
    for o in opts:
        cmd += [o] + args.get(o, [])
    rc, out, err = run(['demo'] + cmd, np_=2)
    check(rc == 0, f"demo {' '.join(cmd)}: exit {rc} {err}")
    made = [d for d in set(os.listdir(SCRATCH)) - before
            if d.startswith('passion-demo-')]
    check(len(made) == 1 and os.listdir(path(made[0])) if made else False,
          f"demo --keep left {made}")
    for d in made:
        shutil.rmtree(path(d))


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    print(f"test_cli_output: np {NP}, seed {SEED}", flush=True)
    if PART == 'dump':
        dump_floats()
        dump_h5_float16()
        dump_nc_char()
        dump_h5_strings()
        dump_writes()
        dump_progress()
    else:
        help_examples()
        demo_options()
    print(f"test_cli_output: {checks} checks, {failures} failed", flush=True)
    sys.exit(1 if failures else 0)


main()
