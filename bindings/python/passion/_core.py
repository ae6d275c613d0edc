"""
_core.py - the Python API of passion over the C library (_lib.py): the
context, files, sections in numpy's slice syntax, slab and partition
iterators, counters and errors.

Invariants:
 - every C call's return code goes through _check(): a negative code
   raises passion.Error carrying the code, its name and the context's
   detail; collective calls return the same code on every rank, so every
   rank raises the same exception (the agreement is the library's);
 - a collective call is never skipped on one rank because of a Python
   check that could differ between ranks: an index out of range in a key
   of read_all/write_all is handed to the library as a section outside
   the array, so every rank fails together (PASSION_ERANGE);
 - objects are freed children first (iterators, files, arrays, the
   context), as the C API requires; Context.finalize() closes what the
   program left open, in the order it was opened (the same on every rank
   of an SPMD program); nothing collective ever runs from a destructor;
 - memory handed to C is a numpy array that stays referenced until the
   call returns (slab and partition views live in the iterator's buffers:
   valid until the next step; copy them to keep them).
"""
import atexit
import ctypes
import operator
import sys

import numpy as np

from . import _lib as L

# --------------------------------------------------------------- constants

ERRORS = {0: "PASSION_OK", -1: "PASSION_EINVAL", -2: "PASSION_ERANGE",
          -3: "PASSION_EOVERFLOW", -4: "PASSION_ENOMEM", -5: "PASSION_EIO",
          -6: "PASSION_ESHORT", -7: "PASSION_ENOSPC", -8: "PASSION_EMISMATCH",
          -9: "PASSION_EMPI", -10: "PASSION_EFORMAT", -11: "PASSION_ENOTSUP",
          -12: "PASSION_ESTATE", -13: "PASSION_ENOENT", -14: "PASSION_EACCES",
          -15: "PASSION_EREMOTE", -16: "PASSION_EEXIST"}
(PASSION_OK, PASSION_EINVAL, PASSION_ERANGE, PASSION_EOVERFLOW,
 PASSION_ENOMEM, PASSION_EIO, PASSION_ESHORT, PASSION_ENOSPC,
 PASSION_EMISMATCH, PASSION_EMPI, PASSION_EFORMAT, PASSION_ENOTSUP,
 PASSION_ESTATE, PASSION_ENOENT, PASSION_EACCES, PASSION_EREMOTE,
 PASSION_EEXIST) = range(0, -17, -1)
assert all(ERRORS[globals()[n]] == n for n in ERRORS.values())

METHODS = {"auto": 0, "direct": 1, "sieve": 2, "etp-static": 3,
           "etp-dynamic": 4}
MODES = {"r": 0, "r+": 1, "w": 2, "x": 3}
PLACEMENTS = {"local": 0, "global": 1, "partitioned": 2}
DISTS = {"block": 0, "cyclic": 1, "*": 2, "collapsed": 2}
STORAGE_ROW, STORAGE_COL, STORAGE_CUSTOM = 0, 1, 2

# passion_kind / passion_endian (include/passion.h)
KIND_BYTES, KIND_INT, KIND_UINT, KIND_FLOAT, KIND_COMPLEX, KIND_BOOL = range(6)
ENDIAN_NATIVE, ENDIAN_LITTLE, ENDIAN_BIG = range(3)
_KIND_CHAR = {KIND_INT: "i", KIND_UINT: "u", KIND_FLOAT: "f",
              KIND_COMPLEX: "c", KIND_BOOL: "b"}
_CHAR_KIND = {"i": KIND_INT, "u": KIND_UINT, "f": KIND_FLOAT,
              "c": KIND_COMPLEX, "b": KIND_BOOL, "V": KIND_BYTES}

MPI_THREAD_MULTIPLE = 3  # the same value in MPICH and Open MPI


class Error(Exception):
    """A passion call failed: .code (negative PASSION_E* value), .name
    ("PASSION_ERANGE"), .message (passion_strerror) and .detail (what
    failed, where, on which rank: passion_ctx_errdetail)."""

    def __init__(self, code, detail=""):
        self.code = int(code)
        self.name = ERRORS.get(self.code, "PASSION_E%d" % -self.code)
        self.message = L.lib().passion_strerror(self.code).decode()
        self.detail = detail
        text = "%s (%s)" % (self.name, self.message)
        if detail:
            text += ": " + detail
        super().__init__(text)


def _check(rc, ctx=None, extra=""):
    if rc < 0:
        detail = ""
        if ctx is not None and ctx._h:
            detail = L.lib().passion_ctx_errdetail(ctx._h).decode(
                errors="replace")
        if extra:
            detail = (detail + " " if detail else "") + extra
        raise Error(rc, detail)
    return rc


def version():
    """The library's version string ("1.0.0")."""
    return L.lib().passion_version(None, None, None).decode()


def strerror(code):
    return L.lib().passion_strerror(int(code)).decode()


def library_path():
    """Where libpassion.so.1 was loaded from."""
    return L.lib_path()


def mpi_library_version():
    """The version string of the MPI library libpassion is linked with."""
    return L.mpi_library_version(L.lib())


# ------------------------------------------------------------------- MPI

_mpi_inited_here = False
_contexts = []


def _ensure_mpi():
    global _mpi_inited_here
    h = L.lib()
    why = L.check_one_mpi(h)
    if why:
        raise Error(PASSION_ENOTSUP, why + " (passion's MPI: %s)" %
                    mpi_library_version().splitlines()[0])
    flag = ctypes.c_int(0)
    h.MPI_Finalized(ctypes.byref(flag))
    if flag.value:
        raise Error(PASSION_ESTATE, "MPI is already finalized")
    h.MPI_Initialized(ctypes.byref(flag))
    if not flag.value:
        provided = ctypes.c_int(0)
        rc = h.MPI_Init_thread(None, None, MPI_THREAD_MULTIPLE,
                               ctypes.byref(provided))
        if rc != 0:
            raise Error(PASSION_EMPI, "MPI_Init_thread returned %d" % rc)
        _mpi_inited_here = True


@atexit.register
def _at_exit():
    # contexts the program left, newest first, then MPI if we started it
    for ctx in reversed(list(_contexts)):
        try:
            ctx.finalize()
        except Error:
            pass
    if _mpi_inited_here:
        h = L.lib()
        flag = ctypes.c_int(0)
        h.MPI_Finalized(ctypes.byref(flag))
        if not flag.value:
            h.MPI_Finalize()


def _check_mpi4py(comm):
    """True if comm is an mpi4py communicator; PASSION_ENOTSUP unless
    mpi4py's MPI module is linked with the MPI library libpassion uses (a
    handle of another MPI means nothing to ours: Open MPI's are pointers,
    MPICH's integers). Makes no MPI call: safe before MPI_Init."""
    if not type(comm).__module__.startswith("mpi4py") or \
            not hasattr(comm, "py2f"):
        return False
    mpi = sys.modules.get("mpi4py.MPI")
    same, theirs, ours = L.module_mpi(mpi.__file__) if mpi else (None,) * 3
    if same:
        return True
    raise Error(PASSION_ENOTSUP,
                "mpi4py is built against another MPI library than passion "
                "(mpi4py: %s; passion: %s, %s): pass comm=None (the world "
                "communicator) or use an mpi4py built against passion's MPI"
                % (theirs or "unknown", ours or "unknown",
                   " ".join(mpi_library_version().split("\n")[0].split())))


def _comm_kind(comm):
    """How comm is given: "world" (None), "mpi4py" (an mpi4py
    communicator of passion's MPI) or "fortran" (an int Fortran handle);
    TypeError or PASSION_ENOTSUP otherwise. Checked before MPI starts."""
    if comm is None:
        return "world"
    if _check_mpi4py(comm):
        return "mpi4py"
    if isinstance(comm, int) and not isinstance(comm, bool):
        return "fortran"
    raise TypeError("comm must be None, an mpi4py communicator or an int "
                    "Fortran handle, not %s" % type(comm).__name__)


def _comm_handle(comm, kind):
    """The C MPI_Comm for comm of _comm_kind kind (MPI initialised)."""
    if kind == "world":
        return L.abi.world
    return L.abi.comm_from_fortran(comm.py2f() if kind == "mpi4py"
                                   else comm)


# ---------------------------------------------------------------- options

def _set_options(h, o, options):
    if options is None:
        return
    if isinstance(options, str):
        rc = h.passion_options_parse(o, options.encode())
        if rc < 0:
            raise Error(rc, h.passion_options_errdetail(o).decode())
        return
    if not hasattr(options, "items"):
        raise TypeError("options must be a dict or a 'k=v,k=v' string")
    for k, v in options.items():
        if isinstance(v, bool):
            v = "1" if v else "0"
        elif isinstance(v, float):
            v = repr(v)
        rc = h.passion_options_set(o, str(k).encode(), str(v).encode())
        if rc < 0:
            raise Error(rc, h.passion_options_errdetail(o).decode())


def init(options=None, comm=None):
    """Create a context (collective over comm). options: None, a dict
    {key: value} or a "key=value,key=value" string (passion_options_*);
    comm: None = MPI_COMM_WORLD, an mpi4py communicator (mpi4py built
    against the same MPI as libpassion), or an int Fortran handle.
    Initialises MPI (MPI_THREAD_MULTIPLE) if nobody has, and then
    finalises it at exit. Use as a context manager to finalize on exit."""
    return Context(options, comm)


class Context:
    """A passion context (passion_ctx)."""

    def __init__(self, options=None, comm=None):
        self._h = None
        h = L.lib()
        # an mpi4py communicator of another MPI is refused before MPI
        # starts (_ensure_mpi would only see two MPI libraries loaded)
        kind = _comm_kind(comm)
        _ensure_mpi()
        c = _comm_handle(comm, kind)
        o = ctypes.c_void_p()
        _check(h.passion_options_create(ctypes.byref(o)))
        try:
            _set_options(h, o, options)
            ctxp = ctypes.c_void_p()
            rc = h.passion_init(c, o, ctypes.byref(ctxp))
            # no context after a failure: the detail is init's own
            # (passion_ctx_errdetail(NULL))
            _check(rc, extra=h.passion_ctx_errdetail(None).decode(
                errors="replace") if rc < 0 else "")
        finally:
            h.passion_options_free(o)
        self._h = ctxp
        self._files = []
        cm = h.passion_ctx_comm(self._h)
        r, s = ctypes.c_int(), ctypes.c_int()
        h.MPI_Comm_rank(cm, ctypes.byref(r))
        h.MPI_Comm_size(cm, ctypes.byref(s))
        self.rank, self.size = r.value, s.value
        _contexts.append(self)

    # -- lifetime
    def finalize(self):
        """Close the files left open (children first) and free the
        context. Collective. A second call is a no-op."""
        if not self._h:
            return
        for f in list(self._files):
            f.close()
        _check(L.lib().passion_finalize(self._h), self)
        self._h = None
        if self in _contexts:
            _contexts.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()
        return False

    def _live(self):
        if not self._h:
            raise Error(PASSION_ESTATE, "the context is finalized")
        return self._h

    # -- queries
    def option(self, key):
        """The context's option key, as text (passion_ctx_option_get)."""
        buf = ctypes.create_string_buffer(256)
        _check(L.lib().passion_ctx_option_get(self._live(), key.encode(),
                                              buf, 256), self)
        return buf.value.decode()

    def counters(self):
        """This rank's counters as a dict (passion_counters_get)."""
        c = L.Counters()
        _check(L.lib().passion_counters_get(self._live(), ctypes.byref(c)),
               self)
        return {name: getattr(c, name) for name, _ in L.Counters._fields_
                if name != "reserved"}

    def node(self):
        """This rank's node as a dict: node_id, nnodes, node_rank,
        node_size (passion_ctx_node)."""
        v = [ctypes.c_int() for _ in range(4)]
        _check(L.lib().passion_ctx_node(self._live(),
                                        *[ctypes.byref(x) for x in v]), self)
        return dict(zip(("node_id", "nnodes", "node_rank", "node_size"),
                        (x.value for x in v)))

    def last_method(self):
        """What the last section access on this context did on this rank
        (passion_ctx_last_method): (method, predicted), method "direct",
        "sieve", "etp-static" or "etp-dynamic" ("auto" before the first
        access, after a failed one, or when this rank moved no data
        independently), predicted the seconds the collective cost model
        predicted for its choice when the call was a collective one with
        method "auto" (the same on every rank), else 0.0."""
        m, p = ctypes.c_int(), ctypes.c_double()
        _check(L.lib().passion_ctx_last_method(self._live(), ctypes.byref(m),
                                               ctypes.byref(p)), self)
        inv = {v: n for n, v in METHODS.items()}
        return inv.get(m.value, str(m.value)), p.value

    def reset_counters(self):
        _check(L.lib().passion_counters_reset(self._live()), self)

    def engine(self):
        """The asynchronous I/O engine in use: "uring" or "thread"."""
        e = ctypes.c_int()
        h = L.lib()
        _check(h.passion_engine_get(self._live(), ctypes.byref(e)), self)
        return h.passion_engine_name(e.value).decode()

    def errdetail(self):
        return L.lib().passion_ctx_errdetail(self._live()).decode(
            errors="replace")

    # -- arrays and files
    def open(self, name, mode="r", *, shape=None, dtype=None, order=None,
             grid=None, dist=None, block=None, ghost=None, placement=None,
             header_bytes=0):
        """Open an array by its file (collective): "x.npy", "run.h5:/u",
        "run.nc:v" or a local set "data.%d.laf" take shape and type from
        the file (passion_open); the layout keywords (grid, dist, block,
        ghost, placement) choose how it is distributed, and shape/dtype,
        when given, must match the file. A raw file or local set has no
        header: give shape and dtype (and the layout, header_bytes) and it
        is opened as that array (passion_array_create + passion_file_open).
        mode: "r" (read-only), "r+" (read-write)."""
        if mode not in ("r", "r+"):
            raise ValueError("open: mode must be 'r' or 'r+' (ctx.create "
                             "makes new files)")
        if shape is not None and dtype is not None and not _self_describing(
                name):
            spec = _make_spec(self, shape, dtype, order, grid, dist, block,
                              ghost, placement, header_bytes, name)
            return File._create(self, spec, name, MODES[mode])
        lay = None
        if any(v is not None for v in (shape, dtype, order, grid, dist,
                                       block, ghost, placement)):
            # the layout's defaults depend on the file's dimensions and
            # storage order: read them first (one more header read)
            with self._open(name, mode, None) as probe:
                nd, storage = probe.ndim, probe.order
            lay = _layout_spec(self, nd, storage, shape, dtype, order, grid,
                               dist, block, ghost, placement, name)
        return self._open(name, mode, lay)

    def _open(self, name, mode, lay):
        a, f = ctypes.c_void_p(), ctypes.c_void_p()
        _check(L.lib().passion_open(
            self._live(), name.encode(), MODES[mode],
            ctypes.byref(lay) if lay is not None else None, ctypes.byref(a),
            ctypes.byref(f)), self)
        return File(self, a, f)

    def create(self, path, shape, dtype, *, order="C", grid=None, dist=None,
               block=None, ghost=None, placement=None, header_bytes=0,
               exclusive=False):
        """Create an array and its file(s) (collective): sized, zero-filled,
        atomically replacing an old file (exclusive=True: PASSION_EEXIST
        if one exists). The file format follows the name: ".npy", ".h5"/
        ".hdf5" (path "f.h5:/dataset"), ".nc" ("f.nc:var"), else raw.
        placement: "global" (one file; the default unless the path holds
        "%d"), "local" (one file per rank; "%d" in the path is the rank) or
        "partitioned". grid: ranks per dimension (default: every rank along
        the slowest-varying dimension for local and partitioned placement,
        1 for global). dist: per dimension "block", "cyclic", "*" (or one
        of them for every dimension); block: m of BLOCK(m)/CYCLIC(m);
        ghost: ghost width per dimension (int for all); order "C" or "F"
        (or a permutation, slowest first)."""
        spec = _make_spec(self, shape, dtype, order, grid, dist, block,
                          ghost, placement, header_bytes, path)
        return File._create(self, spec, path, MODES["x" if exclusive
                                                    else "w"])


def _self_describing(name):
    """A name whose file format carries a header (shape and type)."""
    base = name.split(":", 1)[0] if ":" in name else name
    return base.endswith((".npy", ".h5", ".hdf5", ".nc"))


# ------------------------------------------------------------------ dtypes

def _dtype_of(kind, size, endian):
    """(memory dtype: native order; file dtype: the file's byte order)."""
    ch = _KIND_CHAR.get(kind)
    dt = None
    if ch == "b" and size == 1:
        dt = np.dtype(np.bool_)
    elif ch in ("i", "u") and size in (1, 2, 4, 8):
        dt = np.dtype("%s%d" % (ch, size))
    elif ch == "f" and size in (2, 4, 8):
        dt = np.dtype("f%d" % size)
    elif ch == "c" and size in (8, 16):
        dt = np.dtype("c%d" % size)
    elif ch == "f" and np.dtype(np.longdouble).itemsize == size:
        dt = np.dtype(np.longdouble)  # x86-64: 80-bit extended in 16 bytes
    elif ch == "c" and np.dtype(np.clongdouble).itemsize == size:
        dt = np.dtype(np.clongdouble)
    if dt is None:
        dt = np.dtype("V%d" % size)
    mem = dt.newbyteorder("=")
    if endian == ENDIAN_LITTLE:
        fdt = dt.newbyteorder("<")
    elif endian == ENDIAN_BIG:
        fdt = dt.newbyteorder(">")
    else:
        fdt = mem
    return mem, fdt


def _kind_of(dtype):
    dt = np.dtype(dtype)
    if dt.kind not in _CHAR_KIND or dt.fields is not None or \
            dt.subdtype is not None:
        raise TypeError("passion has no element type for numpy dtype %s "
                        "(bool, int, uint, float, complex or void only)" % dt)
    if dt.byteorder == "<":
        endian = ENDIAN_LITTLE
    elif dt.byteorder == ">":
        endian = ENDIAN_BIG
    else:
        endian = ENDIAN_NATIVE
    return _CHAR_KIND[dt.kind], dt.itemsize, endian


def _per_dim(v, nd, what, conv=lambda x: x):
    if v is None:
        return None
    if isinstance(v, (str, int, np.integer)) or (
            isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)):
        v = [v] * nd
    v = list(v)
    if len(v) != nd:
        raise ValueError("%s: %d values for %d dimensions" % (what, len(v),
                                                                nd))
    return [conv(x) for x in v]


def _dist_code(x):
    if isinstance(x, tuple):
        name, m = x
    else:
        name, m = x, 0
    try:
        return DISTS[str(name).lower()], int(m)
    except KeyError:
        raise ValueError("dist: %r is not one of block, cyclic, *" % (x,))


def _fill_layout(s, nd, order, grid, dist, block, ghost, placement, path,
                 size):
    if placement is None:
        placement = "local" if "%" in path and not _self_describing(
            path) else "global"
    if placement not in PLACEMENTS:
        raise ValueError("placement: one of %s" % ", ".join(PLACEMENTS))
    s.placement = PLACEMENTS[placement]
    if isinstance(order, str) or order is None:
        pass
    elif [int(x) for x in order] == list(range(nd)):
        order = "C"
    elif [int(x) for x in order] == list(range(nd))[::-1]:
        order = "F"
    if order is not None:
        if order in ("C", "c"):
            s.storage = STORAGE_ROW
        elif order in ("F", "f"):
            s.storage = STORAGE_COL
        else:
            perm = [int(x) for x in order]
            if sorted(perm) != list(range(nd)):
                raise ValueError("order: 'C', 'F' or a permutation of "
                                 "0..%d" % (nd - 1))
            s.storage = STORAGE_CUSTOM
            for d in range(nd):
                s.order[d] = perm[d]
    dl = _per_dim(dist, nd, "dist", _dist_code)
    if dl:
        for d, (code, m) in enumerate(dl):
            s.dist[d] = code
            if m:
                s.block[d] = m
    bl = _per_dim(block, nd, "block", int)
    if bl:
        for d in range(nd):
            s.block[d] = bl[d]
    gl = _per_dim(ghost, nd, "ghost", int)
    if gl:
        for d in range(nd):
            s.ghost[d] = gl[d]
    gr = _per_dim(grid, nd, "grid", int)
    if gr is None and placement != "global" and size > 1:
        # every rank along the slowest-varying dimension in storage
        if s.storage == STORAGE_COL:
            slow = nd - 1
        elif s.storage == STORAGE_CUSTOM:
            slow = s.order[0]
        else:
            slow = 0
        gr = [1] * nd
        gr[slow] = size
    if gr:
        for d in range(nd):
            s.grid[d] = gr[d]


def _make_spec(ctx, shape, dtype, order, grid, dist, block, ghost,
               placement, header_bytes, path):
    shape = [int(n) for n in (shape if np.iterable(shape) else (shape,))]
    nd = len(shape)
    if not 1 <= nd <= L.MAX_DIMS:
        raise ValueError("an array has 1 to %d dimensions" % L.MAX_DIMS)
    kind, size, endian = _kind_of(dtype)
    s = L.ArraySpec()
    sh = (ctypes.c_int64 * nd)(*shape)
    _check(L.lib().passion_array_spec_init(ctypes.byref(s), nd, sh, size))
    s.kind, s.endian = kind, endian
    s.header_bytes = int(header_bytes)
    _fill_layout(s, nd, order, grid, dist, block, ghost, placement, path,
                 ctx.size)
    return s


def _layout_spec(ctx, nd, storage, shape, dtype, order, grid, dist, block,
                 ghost, placement, path):
    """A layout for passion_open on a file of nd dimensions stored in
    `storage` (order[] slowest first): ndims and elem_size 0 = the file's
    shape and type, else they must match it."""
    s = L.ArraySpec()
    if shape is not None:
        shape = [int(n) for n in (shape if np.iterable(shape) else (shape,))]
        if len(shape) != nd:
            raise ValueError("open: shape %s, the file has %d dimensions" %
                             (shape, nd))
        for d, n in enumerate(shape):
            s.shape[d] = n
        s.ndims = nd
    if dtype is not None:
        s.kind, s.elem_size, s.endian = _kind_of(dtype)
    if order is None:
        order = storage
    _fill_layout(s, nd, order, grid, dist, block, ghost, placement, path,
                 ctx.size)
    if placement is None:
        s.placement = 0  # LOCAL: the file's own (GLOBAL for one array)
    return s


# ---------------------------------------------------------------- sections

class _Key:
    """A numpy index turned into a passion section: counts per dimension,
    axes to flip (negative steps), axes to drop (integer indices)."""
    __slots__ = ("sec", "counts", "flip", "drop", "bad", "empty")


def _parse_key(key, shape, ghost, ghosts):
    nd = len(shape)
    k = _Key()
    k.sec = L.Section()
    k.counts, k.flip, k.drop, k.bad = [], [], [], None
    if key is None:  # take part in a collective with nothing
        for d in range(nd):
            k.sec.stride[d] = 1
        k.counts = [0] * nd
        k.empty = True
        return k
    if not isinstance(key, tuple):
        key = (key,)
    nell = sum(1 for x in key if x is Ellipsis)
    if nell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if nell:
        i = next(i for i, x in enumerate(key) if x is Ellipsis)
        key = key[:i] + (slice(None),) * (nd - len(key) + 1) + key[i + 1:]
    if len(key) > nd:
        raise IndexError("too many indices: array is %d-dimensional, %d "
                         "were indexed" % (nd, len(key)))
    key = key + (slice(None),) * (nd - len(key))
    for d, x in enumerate(key):
        g = ghost[d] if ghosts else 0
        n = shape[d] + 2 * g
        if isinstance(x, slice):
            start, stop, step = x.indices(n)
            cnt = len(range(start, stop, step))
            if step < 0:
                first = start + (cnt - 1) * step if cnt else 0
                k.flip.append(d)
            else:
                first = start if cnt else 0
            k.sec.start[d] = first - g
            k.sec.count[d] = cnt
            k.sec.stride[d] = abs(step)
            k.counts.append(cnt)
            continue
        if x is None or isinstance(x, (bool, np.bool_)):
            raise IndexError("passion sections take integers, slices and "
                             "Ellipsis (no newaxis, no booleans)")
        try:
            i = operator.index(x)
        except TypeError:
            raise IndexError("passion sections take integers, slices and "
                             "Ellipsis, not %s" % type(x).__name__)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            k.bad = "index %d is out of bounds for axis %d with size %d" % (
                i, d, n)
            j = n  # outside the array (and its ghosts): ERANGE
        k.sec.start[d] = j - g
        k.sec.count[d] = 1
        k.sec.stride[d] = 1
        k.counts.append(1)
        k.drop.append(d)
    if k.bad:
        # keep the section nonempty so that the library checks it
        for d in range(nd):
            if k.sec.count[d] == 0:
                k.sec.count[d] = 1
                k.sec.start[d] = -ghost[d] if ghosts else 0
        k.counts = [int(k.sec.count[d]) for d in range(nd)]
    k.empty = any(c == 0 for c in k.counts)
    return k


def _perm_view(buf, order):
    """buf laid out in storage order (axis k = dimension order[k]) seen
    with its axes in index order."""
    return buf.transpose(np.argsort(order))


def _result_view(view, k):
    idx = []
    for d in range(view.ndim):
        if d in k.drop:
            idx.append(0)
        elif d in k.flip:
            idx.append(slice(None, None, -1))
        else:
            idx.append(slice(None))
    return view[tuple(idx) + (Ellipsis,)]  # a view, even with no axis left


_DUMMY = np.zeros(64, np.uint8)


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data if a.size else _DUMMY.ctypes.data)


def _view_from(ptr, dtype, shape, order):
    """A numpy view of C memory at ptr: an array of shape (index order)
    stored in storage order `order`."""
    sshape = [shape[o] for o in order]
    n = int(np.prod(sshape)) * dtype.itemsize
    raw = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(
        ctypes.c_uint8)), shape=(max(n, 1),))[:n]
    return _perm_view(raw.view(dtype).reshape(sshape), order)


class File:
    """An open array file (passion_file with its passion_array)."""

    def __init__(self, ctx, a, f):
        self.ctx = ctx
        self._a, self._f = a, f
        self._iters = []
        h = L.lib()
        sp = h.passion_array_get_spec(a).contents
        nd = sp.ndims
        self.ndim = nd
        self.shape = tuple(int(sp.shape[d]) for d in range(nd))
        self.ghost = tuple(int(sp.ghost[d]) for d in range(nd))
        self.grid = tuple(int(sp.grid[d]) for d in range(nd))
        self.order = [int(sp.order[d]) for d in range(nd)]
        self.storage = {0: "C", 1: "F", 2: "custom"}[sp.storage]
        self.placement = {v: k for k, v in PLACEMENTS.items()}[sp.placement]
        self.kind, self.endian = int(sp.kind), int(sp.endian)
        self.itemsize = int(sp.elem_size)
        self.dtype, self.file_dtype = _dtype_of(self.kind, self.itemsize,
                                                self.endian)
        self.path = h.passion_file_path(f).decode()
        ls = (ctypes.c_int64 * L.MAX_DIMS)()
        _check(h.passion_array_local_shape(a, ctx.rank, ls), ctx)
        # the index space of sections: the local array for local
        # placement, the global array otherwise
        self.local_shape = tuple(int(ls[d]) for d in range(nd))
        ctx._files.append(self)

    @classmethod
    def _create(cls, ctx, spec, path, mode):
        h = L.lib()
        a = ctypes.c_void_p()
        _check(h.passion_array_create(ctx._live(), ctypes.byref(spec),
                                      ctypes.byref(a)), ctx)
        f = ctypes.c_void_p()
        rc = h.passion_file_open(a, path.encode(), mode, ctypes.byref(f))
        if rc < 0:
            detail = ctx.errdetail()
            h.passion_array_free(a)
            raise Error(rc, detail)
        return cls(ctx, a, f)

    def __repr__(self):
        return "<passion.File %r shape=%s dtype=%s %s>" % (
            self.path, self.shape, self.file_dtype, self.placement)

    # -- lifetime
    def close(self):
        """Close the file and free its array (collective; iterators still
        open on it are closed first)."""
        if not self._f:
            return
        for it in list(self._iters):
            it.close()
        h = L.lib()
        _check(h.passion_file_close(self._f), self.ctx)
        self._f = None
        _check(h.passion_array_free(self._a), self.ctx)
        self._a = None
        if self in self.ctx._files:
            self.ctx._files.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _live(self):
        if not self._f:
            raise Error(PASSION_ESTATE, "the file is closed")
        return self._f

    @property
    def _index_shape(self):
        return self.local_shape if self.placement == "local" else self.shape

    def local_bounds(self, rank=None, ghosts=False):
        """(lo, hi): the global indices of the first and last element of
        rank's local array (default: this rank), with ghosts or not."""
        lo = (ctypes.c_int64 * L.MAX_DIMS)()
        hi = (ctypes.c_int64 * L.MAX_DIMS)()
        _check(L.lib().passion_array_local_bounds(
            self._a, self.ctx.rank if rank is None else int(rank),
            int(ghosts), lo, hi), self.ctx)
        return (tuple(int(lo[d]) for d in range(self.ndim)),
                tuple(int(hi[d]) for d in range(self.ndim)))

    def sync(self):
        """Flush this rank's writes to the device (independent)."""
        _check(L.lib().passion_file_sync(self._live()), self.ctx)

    # -- sections
    def _key(self, key, ghosts):
        if ghosts and self.placement != "local":
            raise ValueError("ghosts=True addresses a local array file's "
                             "ghost cells: local placement only")
        return _parse_key(key, self._index_shape, self.ghost, ghosts)

    def _call(self, fn, sec, buf, method, collective, prep_error, bad):
        """Run fn on this rank's section. A collective call whose
        arguments failed here in Python still runs, with a section the
        library rejects (stride 0: PASSION_EINVAL), so that every rank
        fails together instead of the others waiting; this rank then
        raises its own exception."""
        if prep_error is not None:
            if not collective:
                raise prep_error
            sec = L.Section()
            sec.count[0], sec.stride[0] = 1, 0
            fn(self._live(), ctypes.byref(sec), _ptr(_DUMMY), None, 0)
            raise prep_error
        rc = fn(self._live(), ctypes.byref(sec), _ptr(buf), None, method)
        _check(rc, self.ctx, ("(%s)" % bad) if bad else "")

    def _read(self, fn, key, method, ghosts, collective):
        k = buf = err = m = None
        try:
            m = METHODS[method]
            k = self._key(key, ghosts)
            if k.bad and not collective:
                raise Error(PASSION_ERANGE, k.bad)
            buf = np.empty([k.counts[o] for o in self.order], self.dtype)
        except (Error, LookupError, TypeError, ValueError) as e:
            err = e
        self._call(fn, k and k.sec, buf, m, collective, err, k and k.bad)
        out = _result_view(_perm_view(buf, self.order), k)
        return out[()] if out.ndim == 0 else out

    def _write(self, fn, key, array, method, ghosts, collective):
        k = buf = err = m = None
        try:
            m = METHODS[method]
            k = self._key(key, ghosts)
            if k.bad and not collective:
                raise Error(PASSION_ERANGE, k.bad)
            if key is None:
                buf = np.empty(0, self.dtype)
            else:
                a = np.asarray(array)
                # fast path: the caller's array is the packed buffer
                if a.dtype == self.dtype and not k.flip and not k.drop and \
                        a.shape == tuple(k.counts) and not k.bad:
                    t = a.transpose(self.order)
                    if t.flags.c_contiguous:
                        buf = t
                if buf is None:
                    buf = np.zeros([k.counts[o] for o in self.order],
                                   self.dtype)
                    if not k.bad:
                        _result_view(_perm_view(buf, self.order), k)[...] = a
        except (Error, LookupError, TypeError, ValueError) as e:
            err = e
        self._call(fn, k and k.sec, buf, m, collective, err, k and k.bad)

    def read(self, key=Ellipsis, *, method="auto", ghosts=False):
        """Read a section (independent): key in numpy's index syntax
        (integers, slices with any step, Ellipsis); a new numpy array of
        the memory dtype. ghosts=True (local placement): indices count
        from the first ghost cell (0 = local index -ghost)."""
        return self._read(L.lib().passion_file_read, key, method, ghosts,
                          False)

    def write(self, key, array, *, method="auto", ghosts=False):
        """Write array (broadcast and cast as numpy assignment does) into
        the section key (independent)."""
        self._write(L.lib().passion_file_write, key, array, method, ghosts,
                    False)

    def read_all(self, key=Ellipsis, *, method="auto"):
        """Collective read: every rank its own section (key None: this
        rank takes part with nothing; an empty array comes back)."""
        return self._read(L.lib().passion_file_read_all, key, method, False,
                          True)

    def write_all(self, key, array=None, *, method="auto"):
        """Collective write: every rank its own section (key None: nothing;
        where sections overlap, the highest rank's value is written)."""
        self._write(L.lib().passion_file_write_all, key, array, method,
                    False, True)

    __getitem__ = read

    def __setitem__(self, key, array):
        self.write(key, array)

    def plan(self, key=Ellipsis, *, write=False, method="auto"):
        """What the cost model would do for this section (no I/O)."""
        k = self._key(key, False)
        info = L.PlanInfo()
        _check(L.lib().passion_section_plan(self._live(), ctypes.byref(k.sec),
                                            int(write), METHODS[method],
                                            ctypes.byref(info)), self.ctx)
        inv = {v: n for n, v in METHODS.items()}
        return {"method": inv.get(info.method, info.method),
                "requests": info.requests, "bytes_file": info.bytes_file,
                "runs": info.runs, "seconds": info.seconds}

    # -- local placement
    def _local_full_shape(self):
        return tuple(n + 2 * g for n, g in zip(self.local_shape, self.ghost))

    def read_local(self):
        """This rank's whole local array file, ghosts included."""
        buf = np.empty([self._local_full_shape()[o] for o in self.order],
                       self.dtype)
        _check(L.lib().passion_file_read_local(self._live(), _ptr(buf)),
               self.ctx)
        return _perm_view(buf, self.order)

    def write_local(self, array):
        buf = np.empty([self._local_full_shape()[o] for o in self.order],
                       self.dtype)
        _perm_view(buf, self.order)[...] = array
        _check(L.lib().passion_file_write_local(self._live(), _ptr(buf)),
               self.ctx)

    def shift_all(self, dim, dir=0, periodic=False, width=0):
        """Out-of-core ghost exchange with the neighbours along grid
        dimension dim (collective; passion_file_shift_all)."""
        _check(L.lib().passion_file_shift_all(self._live(), int(dim),
                                              int(dir), int(periodic),
                                              int(width)), self.ctx)

    # -- iterators
    def slabs(self, *, dim=-1, width=0, budget=0, halo=-1, prefetch=True,
              reuse=True, writeback=False, out=None, method="auto"):
        """Iterate over this rank's local array file slab by slab
        (independent; passion_slab_*): yields Slab objects whose numpy
        views live in the iterator's buffers until the next step."""
        return SlabIter(self, dim, width, budget, halo, prefetch, reuse,
                        writeback, out, method)

    def parts(self, *, dim=-1, width=0, budget=0, halo=0, prefetch=True,
              out=None, method="etp-dynamic"):
        """Iterate over partitions of a global array file (collective;
        passion_part_*): yields Part objects."""
        return PartIter(self, dim, width, budget, halo, prefetch, out, method)


class Slab:
    """One slab: .index, .nslabs, .start, .count, .dim, .halo; .data the
    whole in buffer (ghosts and halo, index order), .interior its slab
    interior (local indices [start, start+count) along dim, all of the
    local array elsewhere), .out_data/.out the out buffer likewise (None
    without an out file); .offset the buffer index of local index (start
    along dim, 0 elsewhere). dirty() marks .data for write-back."""

    def __init__(self, it, s, f):
        self._it = it
        self.index, self.nslabs = s.index, s.nslabs
        self.start, self.count, self.dim, self.halo = (s.start, s.count,
                                                       s.dim, s.halo)
        nd = f.ndim
        shape = [int(s.mem.shape[d]) for d in range(nd)]
        self.offset = tuple(int(s.mem.offset[d]) for d in range(nd))
        ext = list(f.local_shape)
        ext[s.dim] = s.count
        box = tuple(slice(o, o + e) for o, e in zip(self.offset, ext))
        self.data = _view_from(s.in_, f.dtype, shape, f.order)
        self.interior = self.data[box]
        self.out_data = self.out = None
        if s.out:
            self.out_data = _view_from(s.out, f.dtype, shape, f.order)
            self.out = self.out_data[box]

    def dirty(self):
        """Mark this slab's in buffer modified (writeback=True)."""
        self._it._dirty()


class _Iter:
    """What the slab and partition iterators share: open with an options
    struct, register with the files (closing them is then ESTATE), yield
    items until the C iterator returns 0, close once."""

    _open = _next = _close = None  # names of the C calls
    _item = None                   # the C struct of one item

    def _start(self, f, o, out):
        self.f = f
        self._out = out
        it = ctypes.c_void_p()
        _check(getattr(L.lib(), self._open)(f._live(), ctypes.byref(o),
                                            ctypes.byref(it)), f.ctx)
        self._h = it
        f._iters.append(self)
        if out is not None:
            out._iters.append(self)

    def __iter__(self):
        return self

    def __next__(self):
        if not self._h:
            raise StopIteration
        c = self._item()
        rc = getattr(L.lib(), self._next)(self._h, ctypes.byref(c))
        if rc < 0:
            detail = self.f.ctx.errdetail()
            self.close(check=False)
            raise Error(rc, detail)
        if rc == 0:
            self.close()
            raise StopIteration
        return self._wrap(c)

    def close(self, check=True):
        """Finish the pending writes and free the iterator; raises the
        iteration's first error."""
        if not self._h:
            return
        rc = getattr(L.lib(), self._close)(self._h)
        self._h = None
        for f in (self.f, self._out):
            if f is not None and self in f._iters:
                f._iters.remove(self)
        if check:
            _check(rc, self.f.ctx)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(check=exc[0] is None)
        return False


class SlabIter(_Iter):
    _open, _next, _close = ("passion_slab_open", "passion_slab_next",
                            "passion_slab_close")
    _item = L.Slab

    def __init__(self, f, dim, width, budget, halo, prefetch, reuse,
                 writeback, out, method):
        o = L.SlabOpts()
        _check(L.lib().passion_slab_opts_init(ctypes.byref(o)))
        o.dim, o.width, o.budget, o.halo = dim, width, budget, halo
        o.prefetch, o.reuse, o.writeback = int(prefetch), int(reuse), \
            int(writeback)
        o.out = out._live() if out is not None else None
        o.method = METHODS[method]
        self._start(f, o, out)

    def _wrap(self, s):
        return Slab(self, s, self.f)

    def _dirty(self):
        if not self._h:
            raise Error(PASSION_ESTATE, "the slab iterator is closed")
        _check(L.lib().passion_slab_dirty(self._h), self.f.ctx)


class Part:
    """One partition: .index, .nparts, .lo and .count (this rank's piece:
    global index of its first cell, extent), .data the in buffer (piece and
    halo), .interior the piece, .out_data/.out the out buffer likewise."""

    def __init__(self, p, f):
        nd = f.ndim
        self.index, self.nparts = p.index, p.nparts
        self.lo = tuple(int(p.lo[d]) for d in range(nd))
        self.count = tuple(int(p.count[d]) for d in range(nd))
        shape = [int(p.mem.shape[d]) for d in range(nd)]
        self.offset = tuple(int(p.mem.offset[d]) for d in range(nd))
        box = tuple(slice(o, o + c) for o, c in zip(self.offset, self.count))
        self.data = _view_from(p.in_, f.dtype, shape, f.order)
        self.interior = self.data[box]
        self.out_data = self.out = None
        if p.out:
            self.out_data = _view_from(p.out, f.dtype, shape, f.order)
            self.out = self.out_data[box]


class PartIter(_Iter):
    """Partitions (collective: every step is a collective call)."""
    _open, _next, _close = ("passion_part_open", "passion_part_next_all",
                            "passion_part_close_all")
    _item = L.Part

    def __init__(self, f, dim, width, budget, halo, prefetch, out, method):
        o = L.PartOpts()
        _check(L.lib().passion_part_opts_init(ctypes.byref(o)))
        o.dim, o.width, o.budget, o.halo = dim, width, budget, halo
        o.prefetch = int(prefetch)
        o.out = out._live() if out is not None else None
        o.method = METHODS[method]
        self._start(f, o, out)

    def _wrap(self, p):
        return Part(p, self.f)
