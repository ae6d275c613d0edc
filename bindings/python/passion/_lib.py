"""
_lib.py - the ctypes layer of the passion Python package: finds and loads
libpassion.so.1, declares the public structs and calls of include/passion.h
(API 1.0) and the few MPI calls the package needs, taken from the MPI
library libpassion is linked with.

Invariants:
 - the library is loaded once, RTLD_GLOBAL (Open MPI's components resolve
   MPI symbols from the global scope), and every MPI call the package makes
   goes to the same libmpi as libpassion's own calls: check_one_mpi()
   refuses a process in which two MPI libraries answer;
 - the ctypes structs mirror passion.h field for field (C alignment rules
   give the same layout; tests/test_layout.py compares sizes and offsets
   with the compiler's);
 - MPI_Comm is an int (MPICH ABI: MPICH, Intel MPI, MVAPICH) or a pointer
   (Open MPI); mpi_abi() decides once, from the symbols the library has.

Where the library comes from (first that exists):
 1. the environment variable PASSION_LIB (a path to libpassion.so.1);
 2. the path written into passion/_libpath.py at install time (meson
    install writes PREFIX/LIBDIR/libpassion.so.1 there);
 3. ctypes.util.find_library("passion"), then the dynamic linker's own
    search for "libpassion.so.1" (LD_LIBRARY_PATH, ld.so.cache).
"""
import ctypes
import ctypes.util
import os

MAX_DIMS = 7

c_int64 = ctypes.c_int64
c_int = ctypes.c_int
c_double = ctypes.c_double
c_uint64 = ctypes.c_uint64
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
I64x = c_int64 * MAX_DIMS
INTx = c_int * MAX_DIMS


class Counters(ctypes.Structure):
    _fields_ = [("io_calls", c_uint64), ("bytes_read", c_uint64),
                ("bytes_written", c_uint64), ("bytes_useful", c_uint64),
                ("messages_sent", c_uint64), ("bytes_sent", c_uint64),
                ("rounds", c_uint64), ("peak_staging", c_uint64),
                ("reuse_bytes", c_uint64), ("prefetch_hits", c_uint64),
                ("t_io", c_double), ("t_comm", c_double),
                ("messages_intra_node", c_uint64),
                ("bytes_intra_node", c_uint64),
                ("messages_inter_node", c_uint64),
                ("bytes_inter_node", c_uint64),
                ("reserved", c_uint64 * 8)]


class ArraySpec(ctypes.Structure):
    _fields_ = [("ndims", c_int), ("shape", I64x), ("elem_size", c_int64),
                ("kind", c_int), ("endian", c_int),
                ("storage", c_int), ("order", INTx), ("grid", INTx),
                ("dist", INTx), ("block", I64x), ("ghost", I64x),
                ("placement", c_int), ("header_bytes", c_int64),
                ("reserved", c_int64 * 8)]


class Section(ctypes.Structure):
    _fields_ = [("start", I64x), ("count", I64x), ("stride", I64x)]


class MemSpec(ctypes.Structure):
    _fields_ = [("shape", I64x), ("offset", I64x)]


class PlanInfo(ctypes.Structure):
    _fields_ = [("method", c_int), ("requests", c_int64),
                ("bytes_file", c_int64), ("runs", c_int64),
                ("seconds", c_double), ("reserved", c_int64 * 4)]


class SlabOpts(ctypes.Structure):
    _fields_ = [("dim", c_int), ("width", c_int64), ("budget", c_int64),
                ("halo", c_int64), ("prefetch", c_int), ("reuse", c_int),
                ("writeback", c_int), ("out", c_void_p), ("method", c_int),
                ("ramp", c_int64), ("reserved", c_int64 * 7)]


class Slab(ctypes.Structure):
    _fields_ = [("index", c_int64), ("nslabs", c_int64), ("start", c_int64),
                ("count", c_int64), ("dim", c_int), ("halo", c_int64),
                ("in_", c_void_p), ("out", c_void_p), ("mem", MemSpec),
                ("reserved", c_int64 * 4)]


class PartOpts(ctypes.Structure):
    _fields_ = [("dim", c_int), ("width", c_int64), ("budget", c_int64),
                ("halo", c_int64), ("prefetch", c_int), ("out", c_void_p),
                ("method", c_int), ("reserved", c_int64 * 8)]


class Part(ctypes.Structure):
    _fields_ = [("index", c_int64), ("nparts", c_int64), ("lo", I64x),
                ("count", I64x), ("in_", c_void_p), ("out", c_void_p),
                ("mem", MemSpec), ("reserved", c_int64 * 4)]


STRUCTS = {"passion_counters": Counters, "passion_array_spec": ArraySpec,
           "passion_section": Section, "passion_memspec": MemSpec,
           "passion_plan_info": PlanInfo, "passion_slab_opts": SlabOpts,
           "passion_slab": Slab, "passion_part_opts": PartOpts,
           "passion_part": Part}


def _candidates():
    env = os.environ.get("PASSION_LIB")
    if env:
        return [("PASSION_LIB", env)]
    out = []
    try:
        from ._libpath import LIBPASSION  # written by meson install
        out.append(("install path", LIBPASSION))
    except ImportError:
        pass
    found = ctypes.util.find_library("passion")
    if found:
        out.append(("ctypes.util.find_library", found))
    out.append(("dynamic linker search", "libpassion.so.1"))
    return out


_lib = None
_lib_path = None


def lib():
    """The loaded library (loaded and declared at the first call)."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for how, path in _candidates():
        if how != "dynamic linker search" and os.sep in path and \
                not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (how, path))
            continue
        try:
            handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s: %s (%s)" % (how, path, e))
            continue
        _declare(handle)
        _lib, _lib_path = handle, path
        return _lib
    raise ImportError("passion: cannot load libpassion.so.1; tried:\n  " +
                      "\n  ".join(tried) +
                      "\nset PASSION_LIB to the library's path")


def lib_path():
    lib()
    return _lib_path


# ------------------------------------------------------------------ MPI ABI

class MpiAbi:
    """How this process's MPI represents a communicator."""

    def __init__(self, handle):
        self.openmpi = _has(handle, "ompi_mpi_comm_world")
        if self.openmpi:
            self.comm_t = c_void_p
            self.world = ctypes.addressof(
                ctypes.c_char.in_dll(handle, "ompi_mpi_comm_world"))
            self.null = ctypes.addressof(
                ctypes.c_char.in_dll(handle, "ompi_mpi_comm_null"))
        else:
            # MPICH ABI: handles are ints, MPI_Comm_f2c is the identity
            self.comm_t = c_int
            self.world = 0x44000000
            self.null = 0x04000000
        self.f2c = None
        if _has(handle, "MPI_Comm_f2c"):
            self.f2c = handle.MPI_Comm_f2c
            self.f2c.restype = self.comm_t
            self.f2c.argtypes = [c_int]

    def comm_from_fortran(self, fhandle):
        if self.f2c is None:
            return int(fhandle)
        return self.f2c(int(fhandle))


def _has(handle, name):
    try:
        getattr(handle, name)
        return True
    except AttributeError:
        return False


abi = None


def _fn(h, name, restype, argtypes):
    f = getattr(h, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


def _declare(h):
    global abi
    abi = MpiAbi(h)
    Comm = abi.comm_t
    P = c_void_p
    PP = ctypes.POINTER(c_void_p)
    pi64 = ctypes.POINTER(c_int64)
    pint = ctypes.POINTER(c_int)
    S = ctypes.POINTER(Section)
    M = ctypes.POINTER(MemSpec)
    decl = [
        ("passion_version", c_char_p, [pint, pint, pint]),
        ("passion_strerror", c_char_p, [c_int]),
        ("passion_options_create", c_int, [PP]),
        ("passion_options_free", c_int, [P]),
        ("passion_options_set", c_int, [P, c_char_p, c_char_p]),
        ("passion_options_parse", c_int, [P, c_char_p]),
        ("passion_options_get", c_int, [P, c_char_p, c_char_p,
                                        ctypes.c_size_t]),
        ("passion_options_errdetail", c_char_p, [P]),
        ("passion_init", c_int, [Comm, P, PP]),
        ("passion_finalize", c_int, [P]),
        ("passion_ctx_option_get", c_int, [P, c_char_p, c_char_p,
                                           ctypes.c_size_t]),
        ("passion_ctx_comm", Comm, [P]),
        ("passion_ctx_errdetail", c_char_p, [P]),
        ("passion_ctx_node", c_int, [P, ctypes.POINTER(c_int),
                                     ctypes.POINTER(c_int),
                                     ctypes.POINTER(c_int),
                                     ctypes.POINTER(c_int)]),
        ("passion_ctx_last_method", c_int, [P, pint,
                                            ctypes.POINTER(c_double)]),
        ("passion_counters_get", c_int, [P, ctypes.POINTER(Counters)]),
        ("passion_counters_reset", c_int, [P]),
        ("passion_array_spec_init", c_int, [ctypes.POINTER(ArraySpec), c_int,
                                            pi64, c_int64]),
        ("passion_array_create", c_int, [P, ctypes.POINTER(ArraySpec), PP]),
        ("passion_array_free", c_int, [P]),
        ("passion_array_get_spec", ctypes.POINTER(ArraySpec), [P]),
        ("passion_array_local_shape", c_int, [P, c_int, pi64]),
        ("passion_array_local_bounds", c_int, [P, c_int, c_int, pi64, pi64]),
        ("passion_open", c_int, [P, c_char_p, c_int,
                                 ctypes.POINTER(ArraySpec), PP, PP]),
        ("passion_file_open", c_int, [P, c_char_p, c_int, PP]),
        ("passion_file_close", c_int, [P]),
        ("passion_file_sync", c_int, [P]),
        ("passion_file_path", c_char_p, [P]),
        ("passion_file_read", c_int, [P, S, P, M, c_int]),
        ("passion_file_write", c_int, [P, S, P, M, c_int]),
        ("passion_file_read_all", c_int, [P, S, P, M, c_int]),
        ("passion_file_write_all", c_int, [P, S, P, M, c_int]),
        ("passion_file_read_local", c_int, [P, P]),
        ("passion_file_write_local", c_int, [P, P]),
        ("passion_file_read_begin", c_int, [P, S, P, M, c_int, PP]),
        ("passion_file_write_begin", c_int, [P, S, P, M, c_int, PP]),
        ("passion_request_wait", c_int, [P]),
        ("passion_request_test", c_int, [P, pint]),
        ("passion_file_shift_all", c_int, [P, c_int, c_int, c_int, c_int64]),
        ("passion_section_plan", c_int, [P, S, c_int, c_int,
                                         ctypes.POINTER(PlanInfo)]),
        ("passion_slab_opts_init", c_int, [ctypes.POINTER(SlabOpts)]),
        ("passion_slab_open", c_int, [P, ctypes.POINTER(SlabOpts), PP]),
        ("passion_slab_next", c_int, [P, ctypes.POINTER(Slab)]),
        ("passion_slab_dirty", c_int, [P]),
        ("passion_slab_close", c_int, [P]),
        ("passion_part_opts_init", c_int, [ctypes.POINTER(PartOpts)]),
        ("passion_part_open", c_int, [P, ctypes.POINTER(PartOpts), PP]),
        ("passion_part_next_all", c_int, [P, ctypes.POINTER(Part)]),
        ("passion_part_close_all", c_int, [P]),
        ("passion_engine_get", c_int, [P, pint]),
        ("passion_engine_name", c_char_p, [c_int]),
        # MPI, from the library libpassion is linked with
        ("MPI_Initialized", c_int, [pint]),
        ("MPI_Finalized", c_int, [pint]),
        ("MPI_Init_thread", c_int, [P, P, c_int, pint]),
        ("MPI_Finalize", c_int, []),
        ("MPI_Comm_rank", c_int, [Comm, pint]),
        ("MPI_Comm_size", c_int, [Comm, pint]),
        ("MPI_Get_library_version", c_int, [c_char_p, pint]),
    ]
    missing = [name for name, _, _ in decl if not _has(h, name)]
    if missing:
        raise ImportError("passion: the library lacks %s (an older "
                          "libpassion?)" % ", ".join(missing))
    for name, res, args in decl:
        if _has(h, name):
            _fn(h, name, res, args)



def mpi_library_version(h):
    """The MPI library's version string (MPI_Get_library_version)."""
    buf = ctypes.create_string_buffer(8192)
    n = c_int(0)
    h.MPI_Get_library_version(buf, ctypes.byref(n))
    return buf.value.decode(errors="replace").strip()


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p),
                ("dli_sname", c_char_p), ("dli_saddr", c_void_p)]


def _object_of(fn):
    """The path of the shared object that holds function fn (dladdr), or
    None when the C library cannot tell."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except AttributeError:
        return None
    dladdr.restype, dladdr.argtypes = c_int, [c_void_p,
                                              ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(ctypes.cast(fn, c_void_p), ctypes.byref(info)) or \
            not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode(errors="replace"))


def module_mpi(path):
    """(same, theirs, ours): whether the extension module at path (already
    loaded, e.g. mpi4py's MPI module) is linked with the MPI library
    libpassion uses, and the paths of both libraries. The symbol is looked
    up in the module's own dependency tree (dlsym on its handle), not in
    the process's global scope, where libpassion's MPI, loaded first and
    RTLD_GLOBAL, would shadow another MPI of the same symbol names."""
    h = lib()
    try:
        mod = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        theirs = mod.MPI_Get_library_version
    except (OSError, AttributeError):
        return None, None, _object_of(h.MPI_Get_library_version)
    a = ctypes.cast(theirs, c_void_p).value
    b = ctypes.cast(h.MPI_Get_library_version, c_void_p).value
    return a == b, _object_of(theirs), _object_of(h.MPI_Get_library_version)


def check_one_mpi(h):
    """None if libpassion's MPI calls and ours reach the same libmpi, else
    why not: the symbol libpassion's own calls bind to (the global scope,
    searched first) must be the one its dependency provides."""
    try:
        glob = ctypes.CDLL(None).MPI_Get_library_version
    except AttributeError:
        return None
    mine = h.MPI_Get_library_version
    a = ctypes.cast(glob, c_void_p).value
    b = ctypes.cast(mine, c_void_p).value
    if a != b:
        return ("two MPI libraries are loaded in this process (another "
                "module loaded a different MPI before passion): libpassion's "
                "MPI calls would go to the wrong one")
    return None
