! passion.f90 - the Fortran module `passion` (Fortran 2008 with the
! assumed-type / assumed-rank buffers of TS 29113, as gfortran >= 9 has
! them), a thin layer over the C API of include/passion.h.
!
! Conventions (man passion_fortran(3) is this text; README "Fortran"):
!  - every procedure is an INTEGER function returning the C code: 0
!    (PASSION_OK) or a negative PASSION_E* code, except passion_slab_next
!    (1: a slab, 0: the end, < 0: error), and the string functions
!    passion_version, passion_mpi_build, passion_strerror,
!    passion_ctx_errdetail, passion_options_errdetail, passion_engine_name
!    and passion_file_path;
!  - handles (passion_options, passion_ctx, passion_array, passion_file,
!    passion_request, passion_slab_iter) are derived types around a
!    type(c_ptr); the _free/_close/_finalize/_wait calls reset them on
!    success;
!  - communicators: type(MPI_Comm) of mpi_f08 or the INTEGER handle of
!    `use mpi` (generic passion_init), converted with MPI_Comm_f2c in C;
!  - indices are Fortran's: 1-based global indices, dimension numbers 1..n;
!    a local file's interior is 1..n and its ghost cells 1-g..0 and
!    n+1..n+g; a section is lo:hi:stride per dimension (hi < lo: empty),
!    or lo and count (passion_section takes integer arrays of any kind,
!    kinds mixed in one call); an array made here is column-major
!    (PASSION_COL_MAJOR) with the dimensions in Fortran order, so a
!    section's data land in a Fortran array of its count box;
!  - an array stored row-major (a C-order .npy file, or a spec with
!    storage = PASSION_ROW_MAJOR) is seen with its dimensions reversed, as
!    HDF5's Fortran API does: the file holds the same bytes as a
!    column-major array of the reversed shape, and that is what Fortran
!    indices, shapes, grids, dimension numbers and buffers use;
!  - buffers are Fortran arrays of any type and rank, contiguous (else
!    PASSION_EINVAL), holding the file's elements (the binding cannot check
!    the element type: an array of the wrong type reads garbage);
!    requests and slabs keep pointers into them: give such buffers the
!    TARGET (and ASYNCHRONOUS) attribute and keep them alive.
!  - errors found by the binding itself (a section of the wrong rank, a
!    non-contiguous buffer, a bad dimension number) return PASSION_EINVAL
!    or PASSION_ERANGE without a detail in passion_ctx_errdetail.
module passion
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only : int8, int16, int32, int64, &
       real64
  use mpi_f08, only : MPI_Comm, MPI_Datatype, MPI_Comm_size
  implicit none
  private

  ! ------------------------------------------------------------ constants
  integer, parameter, public :: PASSION_MAX_DIMS = 7
  integer, parameter, public :: PASSION_VERSION_MAJOR = 1
  integer, parameter, public :: PASSION_VERSION_MINOR = 0
  integer, parameter, public :: PASSION_VERSION_PATCH = 0

  integer, parameter, public :: PASSION_OK = 0, PASSION_EINVAL = -1, &
       PASSION_ERANGE = -2, PASSION_EOVERFLOW = -3, PASSION_ENOMEM = -4, &
       PASSION_EIO = -5, PASSION_ESHORT = -6, PASSION_ENOSPC = -7, &
       PASSION_EMISMATCH = -8, PASSION_EMPI = -9, PASSION_EFORMAT = -10, &
       PASSION_ENOTSUP = -11, PASSION_ESTATE = -12, PASSION_ENOENT = -13, &
       PASSION_EACCES = -14, PASSION_EREMOTE = -15, PASSION_EEXIST = -16

  integer, parameter, public :: PASSION_METHOD_AUTO = 0, &
       PASSION_METHOD_DIRECT = 1, PASSION_METHOD_SIEVE = 2, &
       PASSION_METHOD_ETP_STATIC = 3, PASSION_METHOD_ETP_DYNAMIC = 4

  ! exchange algorithms (passion_alltoall); DEFAULT: the context's option
  integer, parameter, public :: PASSION_XCHG_DEFAULT = -1, &
       PASSION_XCHG_AUTO = 0, PASSION_XCHG_MPI = 1, &
       PASSION_XCHG_PAIRWISE = 2, PASSION_XCHG_A1 = 3, &
       PASSION_XCHG_INDEX = 4, PASSION_XCHG_FOURSTAGE = 5, &
       PASSION_XCHG_FOURSTAGE_NB = 6, PASSION_XCHG_TWOLEVEL = 7

  integer, parameter, public :: PASSION_DIST_BLOCK = 0, &
       PASSION_DIST_CYCLIC = 1, PASSION_DIST_COLLAPSED = 2
  integer, parameter, public :: PASSION_PLACE_LOCAL = 0, &
       PASSION_PLACE_GLOBAL = 1, PASSION_PLACE_PARTITIONED = 2
  integer, parameter, public :: PASSION_ROW_MAJOR = 0, &
       PASSION_COL_MAJOR = 1, PASSION_ORDER_CUSTOM = 2
  integer, parameter, public :: PASSION_KIND_BYTES = 0, &
       PASSION_KIND_INT = 1, PASSION_KIND_UINT = 2, PASSION_KIND_FLOAT = 3, &
       PASSION_KIND_COMPLEX = 4, PASSION_KIND_BOOL = 5
  integer, parameter, public :: PASSION_ENDIAN_NATIVE = 0, &
       PASSION_ENDIAN_LITTLE = 1, PASSION_ENDIAN_BIG = 2
  integer, parameter, public :: PASSION_ENGINE_AUTO = 0, &
       PASSION_ENGINE_URING = 1, PASSION_ENGINE_THREAD = 2
  integer, parameter, public :: PASSION_MODE_RDONLY = 0, &
       PASSION_MODE_RDWR = 1, PASSION_MODE_CREATE = 2, &
       PASSION_MODE_CREATE_EXCL = 3

  ! ---------------------------------------------------------------- types
  type, public :: passion_options
     type(c_ptr) :: p = c_null_ptr
  end type passion_options

  type, public :: passion_ctx
     type(c_ptr) :: p = c_null_ptr
  end type passion_ctx

  ! nd and rev: the array's rank and whether its dimensions are reversed
  ! (row-major storage) in the Fortran view
  type, public :: passion_array
     type(c_ptr) :: p = c_null_ptr
     integer :: nd = 0
     logical :: rev = .false.
  end type passion_array

  type, public :: passion_file
     type(c_ptr) :: p = c_null_ptr
     integer :: nd = 0
     logical :: rev = .false.
  end type passion_file

  type, public :: passion_request
     type(c_ptr) :: p = c_null_ptr
  end type passion_request

  type, public :: passion_slab_iter
     type(c_ptr) :: p = c_null_ptr
     integer :: nd = 0
     logical :: rev = .false.
  end type passion_slab_iter

  ! An array's description in Fortran order (passion_array_spec_init
  ! fills the defaults: column-major, grid 1, BLOCK, no ghosts, local
  ! placement). order(:) is used with PASSION_ORDER_CUSTOM only: order(1)
  ! is the slowest-varying dimension in the file (dimension numbers 1..n).
  ! kind (PASSION_KIND_*) with elem_size is the element type (the natural
  ! kind for the size from passion_array_spec_init: 4 and 8 bytes FLOAT,
  ! so an integer array sets kind = PASSION_KIND_INT); endian
  ! (PASSION_ENDIAN_*) the file's byte order, memory being native. As a
  ! layout for passion_open, ndims = 0 and elem_size = 0 (the defaults of
  ! passion_array_spec()) take the file's shape and type.
  type, public :: passion_array_spec
     integer :: ndims = 0
     integer(int64) :: shape(PASSION_MAX_DIMS) = 0
     integer(int64) :: elem_size = 0
     integer :: kind = PASSION_KIND_BYTES
     integer :: endian = PASSION_ENDIAN_NATIVE
     integer :: storage = PASSION_COL_MAJOR
     integer :: order(PASSION_MAX_DIMS) = 0
     integer :: grid(PASSION_MAX_DIMS) = 0
     integer :: dist(PASSION_MAX_DIMS) = PASSION_DIST_BLOCK
     integer(int64) :: block(PASSION_MAX_DIMS) = 0
     integer(int64) :: ghost(PASSION_MAX_DIMS) = 0
     integer :: placement = PASSION_PLACE_LOCAL
     integer(int64) :: header_bytes = 0
  end type passion_array_spec

  ! A section lo:hi:stride per dimension (made by the generic
  ! passion_section(lo, hi, stride, count, at)); at: where its first
  ! element goes in the memory array (1-based; default: the buffer is the
  ! packed count box). nd < 0 marks a constructor call that was invalid.
  type, public :: passion_section
     integer :: nd = 0
     integer(int64) :: lo(PASSION_MAX_DIMS) = 1
     integer(int64) :: hi(PASSION_MAX_DIMS) = 0
     integer(int64) :: stride(PASSION_MAX_DIMS) = 1
     integer(int64) :: at(PASSION_MAX_DIMS) = 1
     logical :: has_at = .false.
  end type passion_section

  ! the C counters (per rank, cumulative); uint64_t as integer(int64)
  type, public, bind(C) :: passion_counters
     integer(c_int64_t) :: io_calls = 0, bytes_read = 0, bytes_written = 0, &
          bytes_useful = 0, messages_sent = 0, bytes_sent = 0, rounds = 0, &
          peak_staging = 0, reuse_bytes = 0, prefetch_hits = 0
     real(c_double) :: t_io = 0, t_comm = 0
     integer(c_int64_t) :: messages_intra_node = 0, bytes_intra_node = 0, &
          messages_inter_node = 0, bytes_inter_node = 0
     integer(c_int64_t) :: reserved(8) = 0
  end type passion_counters

  ! What the cost model would do for a section (passion_section_plan).
  type, public :: passion_plan_info
     integer :: method = PASSION_METHOD_AUTO  ! DIRECT or SIEVE (or ETP)
     integer(int64) :: requests = 0, bytes_file = 0, runs = 0
     real(real64) :: seconds = 0
  end type passion_plan_info

  ! Slab iteration options (the C defaults): dim 0 = the slowest in
  ! storage, else a dimension number 1..n; width 0 = as the budget allows;
  ! budget 0 = the memory_budget option; halo -1 = the ghost width.
  type, public :: passion_slab_opts
     integer :: dim = 0
     integer(int64) :: width = 0
     integer(int64) :: budget = 0
     integer(int64) :: halo = -1
     logical :: prefetch = .true.
     logical :: reuse = .true.
     logical :: writeback = .false.
     type(passion_file) :: out
     integer :: method = PASSION_METHOD_AUTO
  end type passion_slab_opts

  ! One slab: its interior is local indices first .. first+count-1 along
  ! dimension dim; in (and out, or c_null_ptr) point at a column-major
  ! buffer of shape(1:nd) whose first element is the local index
  ! lbound(1:nd) (ghost and halo cells included), so
  !   call c_f_pointer(s%in, p, s%shape(1:2))
  !   u(s%lbound(1):, s%lbound(2):) => p
  ! gives u(i, j) addressed by local indices. Valid until the next call.
  type, public :: passion_slab
     integer(int64) :: index = 0, nslabs = 0
     integer :: dim = 0, nd = 0
     integer(int64) :: first = 0, count = 0, halo = 0
     integer(int64) :: shape(PASSION_MAX_DIMS) = 0
     integer(int64) :: lbound(PASSION_MAX_DIMS) = 0
     type(c_ptr) :: in = c_null_ptr, out = c_null_ptr
  end type passion_slab

  ! Partition iteration options (the C defaults): dim 0 = the slowest in
  ! storage, else a dimension number 1..n; width 0 = as the budget allows
  ! (global indices of dim per partition); budget 0 = the memory_budget
  ! option; halo: cells around each piece.
  type, public :: passion_part_opts
     integer :: dim = 0
     integer(int64) :: width = 0
     integer(int64) :: budget = 0
     integer(int64) :: halo = 0
     logical :: prefetch = .true.
     type(passion_file) :: out
     integer :: method = PASSION_METHOD_ETP_DYNAMIC
  end type passion_part_opts

  type, public :: passion_part_iter
     type(c_ptr) :: p = c_null_ptr
     integer :: nd = 0
     logical :: rev = .false.
  end type passion_part_iter

  ! One partition (index 1..nparts): this rank's piece is the global
  ! indices lo(d) .. lo(d)+count(d)-1 (count 0 in some dimension: nothing
  ! this time); in (and out, or c_null_ptr) point at a column-major buffer
  ! of shape(1:nd) whose first element is the global index lbound(1:nd)
  ! (the halo included), so
  !   call c_f_pointer(p%in, q, p%shape(1:2))
  !   u(p%lbound(1):, p%lbound(2):) => q
  ! gives u(i, j) addressed by global indices. Valid until the next call.
  type, public :: passion_part
     integer(int64) :: index = 0, nparts = 0
     integer :: nd = 0
     integer(int64) :: lo(PASSION_MAX_DIMS) = 0
     integer(int64) :: count(PASSION_MAX_DIMS) = 0
     integer(int64) :: shape(PASSION_MAX_DIMS) = 0
     integer(int64) :: lbound(PASSION_MAX_DIMS) = 0
     type(c_ptr) :: in = c_null_ptr, out = c_null_ptr
  end type passion_part

  ! ----------------------------------------------- C mirrors (private)
  type, bind(C) :: c_section
     integer(c_int64_t) :: start(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: count(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: stride(PASSION_MAX_DIMS) = 1
  end type c_section

  type, bind(C) :: c_memspec
     integer(c_int64_t) :: shape(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: offset(PASSION_MAX_DIMS) = 0
  end type c_memspec

  ! passion_f.c's passion_f_spec and passion_f_slab
  type, bind(C) :: c_fspec
     integer(c_int64_t) :: ndims = 0
     integer(c_int64_t) :: shape(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: elem_size = 0, kind = 0, endian = 0, storage = 0
     integer(c_int64_t) :: order(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: grid(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: dist(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: block(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: ghost(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: placement = 0, header_bytes = 0
  end type c_fspec

  type, bind(C) :: c_fslab
     integer(c_int64_t) :: index = 0, nslabs = 0, start = 0, count = 0, &
          dim = 0, halo = 0
     integer(c_int64_t) :: shape(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: offset(PASSION_MAX_DIMS) = 0
     type(c_ptr) :: in = c_null_ptr, out = c_null_ptr
  end type c_fslab

  type, bind(C) :: c_fpart
     integer(c_int64_t) :: index = 0, nparts = 0
     integer(c_int64_t) :: lo(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: count(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: shape(PASSION_MAX_DIMS) = 0
     integer(c_int64_t) :: offset(PASSION_MAX_DIMS) = 0
     type(c_ptr) :: in = c_null_ptr, out = c_null_ptr
  end type c_fpart

  ! ---------------------------------------------------- C interfaces
  interface
     function c_part_open(f, dim, width, budget, halo, prefetch, out, &
          method, it) bind(C, name='passion_f_part_open')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: f, out
       integer(c_int64_t), value :: dim, width, budget, halo, prefetch, &
            method
       type(c_ptr), intent(out) :: it
       integer(c_int) :: c_part_open
     end function c_part_open
     function c_part_next_all(it, p) bind(C, name='passion_f_part_next_all')
       import :: c_ptr, c_int, c_fpart
       type(c_ptr), value :: it
       type(c_fpart), intent(out) :: p
       integer(c_int) :: c_part_next_all
     end function c_part_next_all
     function c_part_close_all(it) bind(C, name='passion_part_close_all')
       import :: c_ptr, c_int
       type(c_ptr), value :: it
       integer(c_int) :: c_part_close_all
     end function c_part_close_all
     function c_alltoall(ctx, sbuf, rbuf, count, type, alg, radix) &
          bind(C, name='passion_f_alltoall')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, sbuf, rbuf
       integer(c_int64_t), value :: count, alg, radix
       integer(c_int), value :: type
       integer(c_int) :: c_alltoall
     end function c_alltoall
     function c_alltoallv(ctx, sbuf, scounts, sdispls, rbuf, rcounts, &
          rdispls, type, alg, radix) bind(C, name='passion_f_alltoallv')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, sbuf, rbuf
       integer(c_int64_t), intent(in) :: scounts(*), sdispls(*), &
            rcounts(*), rdispls(*)
       integer(c_int), value :: type
       integer(c_int64_t), value :: alg, radix
       integer(c_int) :: c_alltoallv
     end function c_alltoallv
     function c_section_filetype(f, s, type, disp) &
          bind(C, name='passion_f_section_filetype')
       import :: c_ptr, c_int, c_int64_t, c_section
       type(c_ptr), value :: f
       type(c_section), intent(in) :: s
       integer(c_int), intent(out) :: type
       integer(c_int64_t), intent(out) :: disp
       integer(c_int) :: c_section_filetype
     end function c_section_filetype
     function c_multicast_all(f, root, src, group, ngroup, dst, buf, mem) &
          bind(C, name='passion_file_multicast_all')
       import :: c_ptr, c_int
       type(c_ptr), value :: f, src, group, dst, buf, mem
       integer(c_int), value :: root, ngroup
       integer(c_int) :: c_multicast_all
     end function c_multicast_all
     function c_ctx_last_method(ctx, method, predicted) &
          bind(C, name='passion_f_ctx_last_method')
       import :: c_ptr, c_int, c_int64_t, c_double
       type(c_ptr), value :: ctx
       integer(c_int64_t), intent(out) :: method
       real(c_double), intent(out) :: predicted
       integer(c_int) :: c_ctx_last_method
     end function c_ctx_last_method
     function c_version(major, minor, patch) bind(C, name='passion_version')
       import :: c_ptr, c_int
       integer(c_int), intent(out) :: major, minor, patch
       type(c_ptr) :: c_version
     end function c_version
     function c_strerror(code) bind(C, name='passion_strerror')
       import :: c_ptr, c_int
       integer(c_int), value :: code
       type(c_ptr) :: c_strerror
     end function c_strerror
     function c_mpi_build() bind(C, name='passion_mpi_build')
       import :: c_ptr
       type(c_ptr) :: c_mpi_build
     end function c_mpi_build
     function c_strlen(s) bind(C, name='passion_f_strlen')
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: c_strlen
     end function c_strlen
     function c_options_create(o) bind(C, name='passion_options_create')
       import :: c_ptr, c_int
       type(c_ptr), intent(out) :: o
       integer(c_int) :: c_options_create
     end function c_options_create
     function c_options_free(o) bind(C, name='passion_options_free')
       import :: c_ptr, c_int
       type(c_ptr), value :: o
       integer(c_int) :: c_options_free
     end function c_options_free
     function c_options_set(o, key, val) bind(C, name='passion_options_set')
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: o
       character(kind=c_char), intent(in) :: key(*), val(*)
       integer(c_int) :: c_options_set
     end function c_options_set
     function c_options_set_int(o, key, val) &
          bind(C, name='passion_options_set_int')
       import :: c_ptr, c_int, c_char, c_int64_t
       type(c_ptr), value :: o
       character(kind=c_char), intent(in) :: key(*)
       integer(c_int64_t), value :: val
       integer(c_int) :: c_options_set_int
     end function c_options_set_int
     function c_options_set_double(o, key, val) &
          bind(C, name='passion_options_set_double')
       import :: c_ptr, c_int, c_char, c_double
       type(c_ptr), value :: o
       character(kind=c_char), intent(in) :: key(*)
       real(c_double), value :: val
       integer(c_int) :: c_options_set_double
     end function c_options_set_double
     function c_options_parse(o, list) bind(C, name='passion_options_parse')
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: o
       character(kind=c_char), intent(in) :: list(*)
       integer(c_int) :: c_options_parse
     end function c_options_parse
     function c_options_get(o, key, buf, len) &
          bind(C, name='passion_options_get')
       import :: c_ptr, c_int, c_char, c_size_t
       type(c_ptr), value :: o
       character(kind=c_char), intent(in) :: key(*)
       character(kind=c_char), intent(out) :: buf(*)
       integer(c_size_t), value :: len
       integer(c_int) :: c_options_get
     end function c_options_get
     function c_options_errdetail(o) &
          bind(C, name='passion_options_errdetail')
       import :: c_ptr
       type(c_ptr), value :: o
       type(c_ptr) :: c_options_errdetail
     end function c_options_errdetail
     function c_init(comm, opt, ctx) bind(C, name='passion_f_init')
       import :: c_ptr, c_int
       integer(c_int), value :: comm
       type(c_ptr), value :: opt
       type(c_ptr), intent(out) :: ctx
       integer(c_int) :: c_init
     end function c_init
     function c_ctx_comm(ctx) bind(C, name='passion_f_ctx_comm')
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx
       integer(c_int) :: c_ctx_comm
     end function c_ctx_comm
     function c_finalize(ctx) bind(C, name='passion_finalize')
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx
       integer(c_int) :: c_finalize
     end function c_finalize
     function c_ctx_option_get(ctx, key, buf, len) &
          bind(C, name='passion_ctx_option_get')
       import :: c_ptr, c_int, c_char, c_size_t
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: key(*)
       character(kind=c_char), intent(out) :: buf(*)
       integer(c_size_t), value :: len
       integer(c_int) :: c_ctx_option_get
     end function c_ctx_option_get
     function c_ctx_errdetail(ctx) bind(C, name='passion_ctx_errdetail')
       import :: c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr) :: c_ctx_errdetail
     end function c_ctx_errdetail
     function c_counters_get(ctx, c) bind(C, name='passion_counters_get')
       import :: c_ptr, c_int, passion_counters
       type(c_ptr), value :: ctx
       type(passion_counters), intent(out) :: c
       integer(c_int) :: c_counters_get
     end function c_counters_get
     function c_counters_reset(ctx) bind(C, name='passion_counters_reset')
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx
       integer(c_int) :: c_counters_reset
     end function c_counters_reset
     function c_counters_size() bind(C, name='passion_f_counters_size')
       import :: c_size_t
       integer(c_size_t) :: c_counters_size
     end function c_counters_size
     function c_spec_init(fs, nd, shape, esize) &
          bind(C, name='passion_f_spec_init')
       import :: c_int, c_int64_t, c_fspec
       type(c_fspec), intent(out) :: fs
       integer(c_int64_t), value :: nd, esize
       integer(c_int64_t), intent(in) :: shape(*)
       integer(c_int) :: c_spec_init
     end function c_spec_init
     function c_array_create(ctx, fs, a) &
          bind(C, name='passion_f_array_create')
       import :: c_ptr, c_int, c_fspec
       type(c_ptr), value :: ctx
       type(c_fspec), intent(in) :: fs
       type(c_ptr), intent(out) :: a
       integer(c_int) :: c_array_create
     end function c_array_create
     function c_array_get_spec(a, fs) &
          bind(C, name='passion_f_array_get_spec')
       import :: c_ptr, c_int, c_fspec
       type(c_ptr), value :: a
       type(c_fspec), intent(out) :: fs
       integer(c_int) :: c_array_get_spec
     end function c_array_get_spec
     function c_array_free(a) bind(C, name='passion_array_free')
       import :: c_ptr, c_int
       type(c_ptr), value :: a
       integer(c_int) :: c_array_free
     end function c_array_free
     function c_array_local_shape(a, r, shape) &
          bind(C, name='passion_array_local_shape')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: a
       integer(c_int), value :: r
       integer(c_int64_t), intent(out) :: shape(*)
       integer(c_int) :: c_array_local_shape
     end function c_array_local_shape
     function c_array_local_bounds(a, r, with_ghosts, lo, hi) &
          bind(C, name='passion_array_local_bounds')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: a
       integer(c_int), value :: r, with_ghosts
       integer(c_int64_t), intent(out) :: lo(*), hi(*)
       integer(c_int) :: c_array_local_bounds
     end function c_array_local_bounds
     function c_array_local_bytes(a, r, bytes) &
          bind(C, name='passion_array_local_bytes')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: a
       integer(c_int), value :: r
       integer(c_int64_t), intent(out) :: bytes
       integer(c_int) :: c_array_local_bytes
     end function c_array_local_bytes
     function c_file_open(a, path, mode, f) bind(C, name='passion_file_open')
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: a
       character(kind=c_char), intent(in) :: path(*)
       integer(c_int), value :: mode
       type(c_ptr), intent(out) :: f
       integer(c_int) :: c_file_open
     end function c_file_open
     function c_open(ctx, name, mode, layout, a, f) &
          bind(C, name='passion_f_open')
       import :: c_ptr, c_int, c_char, c_int64_t
       type(c_ptr), value :: ctx, layout
       character(kind=c_char), intent(in) :: name(*)
       integer(c_int64_t), value :: mode
       type(c_ptr), intent(out) :: a, f
       integer(c_int) :: c_open
     end function c_open
     function c_array_spec_read(ctx, name, fs, nfiles, pat, len) &
          bind(C, name='passion_f_array_spec_read')
       import :: c_ptr, c_int, c_char, c_int64_t, c_size_t, c_fspec
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: name(*)
       type(c_fspec), intent(out) :: fs
       integer(c_int64_t), intent(out) :: nfiles
       character(kind=c_char), intent(out) :: pat(*)
       integer(c_size_t), value :: len
       integer(c_int) :: c_array_spec_read
     end function c_array_spec_read
     function c_array_owner(a, gidx, r, lidx) &
          bind(C, name='passion_array_owner')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: a
       integer(c_int64_t), intent(in) :: gidx(*)
       integer(c_int), intent(out) :: r
       integer(c_int64_t), intent(out) :: lidx(*)
       integer(c_int) :: c_array_owner
     end function c_array_owner
     function c_array_global_index(a, r, lidx, gidx) &
          bind(C, name='passion_array_global_index')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: a
       integer(c_int), value :: r
       integer(c_int64_t), intent(in) :: lidx(*)
       integer(c_int64_t), intent(out) :: gidx(*)
       integer(c_int) :: c_array_global_index
     end function c_array_global_index
     function c_file_rename(f, path) bind(C, name='passion_file_rename')
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: f
       character(kind=c_char), intent(in) :: path(*)
       integer(c_int) :: c_file_rename
     end function c_file_rename
     function c_file_drop_cache(f) bind(C, name='passion_file_drop_cache')
       import :: c_ptr, c_int
       type(c_ptr), value :: f
       integer(c_int) :: c_file_drop_cache
     end function c_file_drop_cache
     function c_section_plan(f, s, op_write, method, out, seconds) &
          bind(C, name='passion_f_section_plan')
       import :: c_ptr, c_int, c_int64_t, c_double, c_section
       type(c_ptr), value :: f
       type(c_section), intent(in) :: s
       integer(c_int64_t), value :: op_write, method
       integer(c_int64_t), intent(out) :: out(4)
       real(c_double), intent(out) :: seconds
       integer(c_int) :: c_section_plan
     end function c_section_plan
     function c_engine_get(ctx, e) bind(C, name='passion_f_engine_get')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx
       integer(c_int64_t), intent(out) :: e
       integer(c_int) :: c_engine_get
     end function c_engine_get
     function c_engine_name(e) bind(C, name='passion_f_engine_name')
       import :: c_ptr, c_int64_t
       integer(c_int64_t), value :: e
       type(c_ptr) :: c_engine_name
     end function c_engine_name
     function c_file_close(f) bind(C, name='passion_file_close')
       import :: c_ptr, c_int
       type(c_ptr), value :: f
       integer(c_int) :: c_file_close
     end function c_file_close
     function c_file_sync(f) bind(C, name='passion_file_sync')
       import :: c_ptr, c_int
       type(c_ptr), value :: f
       integer(c_int) :: c_file_sync
     end function c_file_sync
     function c_file_path(f) bind(C, name='passion_file_path')
       import :: c_ptr
       type(c_ptr), value :: f
       type(c_ptr) :: c_file_path
     end function c_file_path
     function c_file_read_local(f, buf) bind(C, name='passion_file_read_local')
       import :: c_ptr, c_int
       type(c_ptr), value :: f, buf
       integer(c_int) :: c_file_read_local
     end function c_file_read_local
     function c_file_write_local(f, buf) &
          bind(C, name='passion_file_write_local')
       import :: c_ptr, c_int
       type(c_ptr), value :: f, buf
       integer(c_int) :: c_file_write_local
     end function c_file_write_local
     ! the four section calls share one shape: (f, s, buf, mem, method)
     function c_file_read(f, s, buf, mem, method) &
          bind(C, name='passion_file_read')
       import :: c_ptr, c_int, c_section
       type(c_ptr), value :: f, buf, mem
       type(c_section), intent(in) :: s
       integer(c_int), value :: method
       integer(c_int) :: c_file_read
     end function c_file_read
     function c_file_write(f, s, buf, mem, method) &
          bind(C, name='passion_file_write')
       import :: c_ptr, c_int, c_section
       type(c_ptr), value :: f, buf, mem
       type(c_section), intent(in) :: s
       integer(c_int), value :: method
       integer(c_int) :: c_file_write
     end function c_file_write
     function c_file_read_all(f, s, buf, mem, method) &
          bind(C, name='passion_file_read_all')
       import :: c_ptr, c_int, c_section
       type(c_ptr), value :: f, buf, mem
       type(c_section), intent(in) :: s
       integer(c_int), value :: method
       integer(c_int) :: c_file_read_all
     end function c_file_read_all
     function c_file_write_all(f, s, buf, mem, method) &
          bind(C, name='passion_file_write_all')
       import :: c_ptr, c_int, c_section
       type(c_ptr), value :: f, buf, mem
       type(c_section), intent(in) :: s
       integer(c_int), value :: method
       integer(c_int) :: c_file_write_all
     end function c_file_write_all
     function c_file_read_begin(f, s, buf, mem, method, req) &
          bind(C, name='passion_file_read_begin')
       import :: c_ptr, c_int, c_section
       type(c_ptr), value :: f, buf, mem
       type(c_section), intent(in) :: s
       integer(c_int), value :: method
       type(c_ptr), intent(out) :: req
       integer(c_int) :: c_file_read_begin
     end function c_file_read_begin
     function c_file_write_begin(f, s, buf, mem, method, req) &
          bind(C, name='passion_file_write_begin')
       import :: c_ptr, c_int, c_section
       type(c_ptr), value :: f, buf, mem
       type(c_section), intent(in) :: s
       integer(c_int), value :: method
       type(c_ptr), intent(out) :: req
       integer(c_int) :: c_file_write_begin
     end function c_file_write_begin
     function c_request_wait(req) bind(C, name='passion_request_wait')
       import :: c_ptr, c_int
       type(c_ptr), value :: req
       integer(c_int) :: c_request_wait
     end function c_request_wait
     function c_request_test(req, done) bind(C, name='passion_request_test')
       import :: c_ptr, c_int
       type(c_ptr), value :: req
       integer(c_int), intent(out) :: done
       integer(c_int) :: c_request_test
     end function c_request_test
     function c_file_shift_all(f, dim, dir, periodic, width) &
          bind(C, name='passion_file_shift_all')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: f
       integer(c_int), value :: dim, dir, periodic
       integer(c_int64_t), value :: width
       integer(c_int) :: c_file_shift_all
     end function c_file_shift_all
     function c_slab_open(f, dim, width, budget, halo, prefetch, reuse, &
          writeback, out, method, it) bind(C, name='passion_f_slab_open')
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: f, out
       integer(c_int64_t), value :: dim, width, budget, halo, prefetch, &
            reuse, writeback, method
       type(c_ptr), intent(out) :: it
       integer(c_int) :: c_slab_open
     end function c_slab_open
     function c_slab_next(it, s) bind(C, name='passion_f_slab_next')
       import :: c_ptr, c_int, c_fslab
       type(c_ptr), value :: it
       type(c_fslab), intent(out) :: s
       integer(c_int) :: c_slab_next
     end function c_slab_next
     function c_slab_dirty(it) bind(C, name='passion_slab_dirty')
       import :: c_ptr, c_int
       type(c_ptr), value :: it
       integer(c_int) :: c_slab_dirty
     end function c_slab_dirty
     function c_slab_close(it) bind(C, name='passion_slab_close')
       import :: c_ptr, c_int
       type(c_ptr), value :: it
       integer(c_int) :: c_slab_close
     end function c_slab_close
  end interface

  ! ------------------------------------------------ public procedures
  public :: passion_version, passion_mpi_build, passion_strerror
  public :: passion_options_create, passion_options_free, &
       passion_options_set, passion_options_parse, passion_options_get, &
       passion_options_errdetail
  public :: passion_init, passion_finalize, passion_ctx_comm, &
       passion_ctx_option_get, passion_ctx_errdetail, passion_counters_get, &
       passion_counters_reset, passion_engine_get, passion_engine_name
  public :: passion_array_spec_init, passion_array_create, &
       passion_array_free, passion_array_get_spec, &
       passion_array_local_shape, passion_array_local_bounds, &
       passion_array_local_bytes, passion_array_owner, &
       passion_array_global_index, passion_array_spec_read
  public :: passion_section_elems, passion_section_plan
  ! not in the generic: the old specifics' symbols, for binaries built
  ! against the module before passion_section took mixed kinds
  public :: section_i4, section_i8
  public :: passion_open, passion_file_open, passion_file_close, &
       passion_file_sync, passion_file_rename, passion_file_drop_cache, &
       passion_file_path, passion_file_read_local, passion_file_write_local, &
       passion_file_read, passion_file_write, passion_file_read_all, &
       passion_file_write_all, passion_file_read_begin, &
       passion_file_write_begin, passion_request_wait, passion_request_test, &
       passion_file_shift_all
  public :: passion_slab_open, passion_slab_next, passion_slab_dirty, &
       passion_slab_close
  public :: passion_part_open, passion_part_next_all, passion_part_close_all
  public :: passion_alltoall, passion_alltoallv, passion_section_filetype, &
       passion_file_multicast_all, passion_ctx_last_method

  interface passion_alltoall
     module procedure alltoall_f08, alltoall_int, alltoall_f08_8, &
          alltoall_int_8
  end interface passion_alltoall

  interface passion_alltoallv
     module procedure alltoallv_f08, alltoallv_int, alltoallv_f08_8, &
          alltoallv_int_8
  end interface passion_alltoallv

  interface passion_section_filetype
     module procedure filetype_f08, filetype_int
  end interface passion_section_filetype

  interface passion_options_set
     module procedure options_set_str, options_set_i4, options_set_i8, &
          options_set_r8
  end interface passion_options_set

  interface passion_init
     module procedure init_f08, init_int
  end interface passion_init

  interface passion_ctx_comm
     module procedure ctx_comm_f08, ctx_comm_int
  end interface passion_ctx_comm

  interface passion_array_spec_init
     module procedure spec_init_i4, spec_init_i8
  end interface passion_array_spec_init

  interface passion_section
     module procedure section_any
  end interface passion_section

  ! read / write: the access kinds of passion_file_{read,write}{,_all,
  ! _begin}
  integer, parameter :: K_READ = 1, K_WRITE = 2, K_READ_ALL = 3, &
       K_WRITE_ALL = 4, K_READ_BEGIN = 5, K_WRITE_BEGIN = 6

contains

  ! ------------------------------------------------------------ strings

  ! a NUL-terminated C string as a Fortran string ('' for NULL)
  function c2f(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: a(:)
    integer :: n, i
    n = int(c_strlen(p))
    allocate(character(len=n) :: s)
    if (n == 0) return
    call c_f_pointer(p, a, [n])
    do i = 1, n
       s(i:i) = a(i)
    end do
  end function c2f

  ! a Fortran string (trailing blanks removed) NUL-terminated for C
  pure function f2c(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function f2c

  ! copy a C buffer up to its NUL into a blank-padded Fortran string
  subroutine cbuf_to_f(buf, s)
    character(kind=c_char), intent(in) :: buf(:)
    character(len=*), intent(out) :: s
    integer :: i
    s = ''
    do i = 1, min(size(buf), len(s))
       if (buf(i) == c_null_char) exit
       s(i:i) = buf(i)
    end do
  end subroutine cbuf_to_f

  ! The library's version string; major, minor, patch if present.
  function passion_version(major, minor, patch) result(v)
    integer, intent(out), optional :: major, minor, patch
    character(len=:), allocatable :: v
    integer(c_int) :: ma, mi, pa
    v = c2f(c_version(ma, mi, pa))
    if (present(major)) major = ma
    if (present(minor)) minor = mi
    if (present(patch)) patch = pa
  end function passion_version

  ! The MPI passion was compiled against ("MPICH 4.0.2", "Open MPI 4.1.4");
  ! the program must use the same MPI.
  function passion_mpi_build() result(s)
    character(len=:), allocatable :: s
    s = c2f(c_mpi_build())
  end function passion_mpi_build

  ! The message for an error code.
  function passion_strerror(code) result(s)
    integer, intent(in) :: code
    character(len=:), allocatable :: s
    s = c2f(c_strerror(int(code, c_int)))
  end function passion_strerror

  ! ------------------------------------------------------------ options

  integer function passion_options_create(o) result(rc)
    type(passion_options), intent(out) :: o
    rc = c_options_create(o%p)
  end function passion_options_create

  integer function passion_options_free(o) result(rc)
    type(passion_options), intent(inout) :: o
    rc = c_options_free(o%p)
    if (rc == 0) o%p = c_null_ptr
  end function passion_options_free

  integer function options_set_str(o, key, value) result(rc)
    type(passion_options), intent(in) :: o
    character(len=*), intent(in) :: key, value
    rc = c_options_set(o%p, f2c(key), f2c(value))
  end function options_set_str

  integer function options_set_i4(o, key, value) result(rc)
    type(passion_options), intent(in) :: o
    character(len=*), intent(in) :: key
    integer(int32), intent(in) :: value
    rc = c_options_set_int(o%p, f2c(key), int(value, c_int64_t))
  end function options_set_i4

  integer function options_set_i8(o, key, value) result(rc)
    type(passion_options), intent(in) :: o
    character(len=*), intent(in) :: key
    integer(int64), intent(in) :: value
    rc = c_options_set_int(o%p, f2c(key), int(value, c_int64_t))
  end function options_set_i8

  integer function options_set_r8(o, key, value) result(rc)
    type(passion_options), intent(in) :: o
    character(len=*), intent(in) :: key
    real(real64), intent(in) :: value
    rc = c_options_set_double(o%p, f2c(key), real(value, c_double))
  end function options_set_r8

  ! A "key=value,key=value" list (PASSION_OPTIONS syntax), all or nothing.
  integer function passion_options_parse(o, list) result(rc)
    type(passion_options), intent(in) :: o
    character(len=*), intent(in) :: list
    rc = c_options_parse(o%p, f2c(list))
  end function passion_options_parse

  ! The value of key as text; PASSION_ERANGE if it does not fit in value.
  integer function passion_options_get(o, key, value) result(rc)
    type(passion_options), intent(in) :: o
    character(len=*), intent(in) :: key
    character(len=*), intent(out) :: value
    rc = get_str(c_options_get, o%p, key, value)
  end function passion_options_get

  ! the text of key from the C getter cf (c_options_get or
  ! c_ctx_option_get) of handle p, blank-padded in value
  integer function get_str(cf, p, key, value) result(rc)
    procedure(c_options_get) :: cf
    type(c_ptr), intent(in) :: p
    character(len=*), intent(in) :: key
    character(len=*), intent(out) :: value
    character(kind=c_char) :: buf(len(value) + 1)
    rc = cf(p, f2c(key), buf, int(size(buf), c_size_t))
    call cbuf_to_f(buf, value)
  end function get_str

  function passion_options_errdetail(o) result(s)
    type(passion_options), intent(in) :: o
    character(len=:), allocatable :: s
    s = c2f(c_options_errdetail(o%p))
  end function passion_options_errdetail

  ! ------------------------------------------------------------ context

  ! passion_init(comm, ctx [, opt]): collective over comm (duplicated).
  integer function init_f08(comm, ctx, opt) result(rc)
    type(MPI_Comm), intent(in) :: comm
    type(passion_ctx), intent(out) :: ctx
    type(passion_options), intent(in), optional :: opt
    rc = init_int(comm%MPI_VAL, ctx, opt)
  end function init_f08

  integer function init_int(comm, ctx, opt) result(rc)
    integer, intent(in) :: comm
    type(passion_ctx), intent(out) :: ctx
    type(passion_options), intent(in), optional :: opt
    type(c_ptr) :: o
    o = c_null_ptr
    if (present(opt)) o = opt%p
    rc = c_init(int(comm, c_int), o, ctx%p)
  end function init_int

  ! Collective; resets ctx on success.
  integer function passion_finalize(ctx) result(rc)
    type(passion_ctx), intent(inout) :: ctx
    rc = c_finalize(ctx%p)
    if (rc == 0) ctx%p = c_null_ptr
  end function passion_finalize

  ! The context's private communicator (a duplicate of the one given).
  integer function ctx_comm_f08(ctx, comm) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(MPI_Comm), intent(out) :: comm
    comm%MPI_VAL = c_ctx_comm(ctx%p)
    rc = 0
  end function ctx_comm_f08

  integer function ctx_comm_int(ctx, comm) result(rc)
    type(passion_ctx), intent(in) :: ctx
    integer, intent(out) :: comm
    comm = c_ctx_comm(ctx%p)
    rc = 0
  end function ctx_comm_int

  integer function passion_ctx_option_get(ctx, key, value) result(rc)
    type(passion_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: key
    character(len=*), intent(out) :: value
    rc = get_str(c_ctx_option_get, ctx%p, key, value)
  end function passion_ctx_option_get

  ! What failed last on this context, where and on which rank.
  function passion_ctx_errdetail(ctx) result(s)
    type(passion_ctx), intent(in) :: ctx
    character(len=:), allocatable :: s
    s = c2f(c_ctx_errdetail(ctx%p))
  end function passion_ctx_errdetail

  integer function passion_counters_get(ctx, c) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(passion_counters), intent(out) :: c
    ! the mirror must have the C struct's size (checked, not assumed)
    if (c_counters_size() /= c_sizeof(c)) then
       rc = PASSION_ENOTSUP
       return
    end if
    rc = c_counters_get(ctx%p, c)
  end function passion_counters_get

  integer function passion_counters_reset(ctx) result(rc)
    type(passion_ctx), intent(in) :: ctx
    rc = c_counters_reset(ctx%p)
  end function passion_counters_reset

  ! The asynchronous I/O engine of the context (PASSION_ENGINE_URING or
  ! PASSION_ENGINE_THREAD; starts it if needed). Independent.
  integer function passion_engine_get(ctx, engine) result(rc)
    type(passion_ctx), intent(in) :: ctx
    integer, intent(out) :: engine
    integer(c_int64_t) :: e
    e = 0
    rc = c_engine_get(ctx%p, e)
    engine = int(e)
  end function passion_engine_get

  ! "uring", "thread", "auto" ("unknown" for another value).
  function passion_engine_name(engine) result(s)
    integer, intent(in) :: engine
    character(len=:), allocatable :: s
    s = c2f(c_engine_name(int(engine, c_int64_t)))
  end function passion_engine_name

  ! ------------------------------------------------------------ helpers

  ! v (Fortran order) in C order, or back: reversed over 1..nd if rev
  pure function perm(v, nd, rev) result(c)
    integer(int64), intent(in) :: v(PASSION_MAX_DIMS)
    integer, intent(in) :: nd
    logical, intent(in) :: rev
    integer(int64) :: c(PASSION_MAX_DIMS)
    integer :: i
    c = v
    if (rev) then
       do i = 1, nd
          c(i) = v(nd + 1 - i)
       end do
    end if
  end function perm

  ! a Fortran dimension number 1..nd as C's 0..nd-1 (-1 if out of range)
  pure integer function cdim(d, nd, rev)
    integer, intent(in) :: d, nd
    logical, intent(in) :: rev
    if (d < 1 .or. d > nd) then
       cdim = -1
    else if (rev) then
       cdim = nd - d
    else
       cdim = d - 1
    end if
  end function cdim

  ! C's dimension 0..nd-1 as Fortran's 1..nd
  pure integer function fdim(cd, nd, rev)
    integer, intent(in) :: cd, nd
    logical, intent(in) :: rev
    if (rev) then
       fdim = nd - cd
    else
       fdim = cd + 1
    end if
  end function fdim

  pure function to_i8(v) result(w)
    integer(int64), intent(in) :: v(:)
    integer(int64) :: w(PASSION_MAX_DIMS)
    w = 0
    w(1:min(size(v), PASSION_MAX_DIMS)) = v(1:min(size(v), PASSION_MAX_DIMS))
  end function to_i8

  ! ------------------------------------------------------------ arrays

  ! Defaults for an array of shape (Fortran order) and elem_size bytes
  ! per element (storage_size(x) / 8): column-major.
  integer function spec_init_i8(spec, shape, elem_size) result(rc)
    type(passion_array_spec), intent(out) :: spec
    integer(int64), intent(in) :: shape(:)
    integer, intent(in) :: elem_size
    type(c_fspec) :: fs
    integer(c_int64_t) :: sh(PASSION_MAX_DIMS)
    integer :: nd, d
    nd = size(shape)
    if (nd < 1 .or. nd > PASSION_MAX_DIMS) then
       rc = PASSION_EINVAL
       return
    end if
    sh = to_i8(shape)
    rc = c_spec_init(fs, int(nd, c_int64_t), sh, int(elem_size, c_int64_t))
    if (rc /= 0) return
    spec%ndims = nd
    spec%shape = fs%shape
    spec%elem_size = fs%elem_size
    spec%kind = int(fs%kind)
    spec%endian = int(fs%endian)
    spec%storage = PASSION_COL_MAJOR
    spec%grid = int(fs%grid)
    spec%dist = int(fs%dist)
    spec%block = fs%block
    spec%ghost = fs%ghost
    spec%placement = int(fs%placement)
    spec%header_bytes = fs%header_bytes
    spec%order = 0
    do d = 1, nd
       spec%order(d) = d
    end do
  end function spec_init_i8

  integer function spec_init_i4(spec, shape, elem_size) result(rc)
    type(passion_array_spec), intent(out) :: spec
    integer(int32), intent(in) :: shape(:)
    integer, intent(in) :: elem_size
    rc = spec_init_i8(spec, int(shape, int64), elem_size)
  end function spec_init_i4

  ! the Fortran spec as C's (reversed for row-major)
  subroutine spec_to_c(spec, fs)
    type(passion_array_spec), intent(in) :: spec
    type(c_fspec), intent(out) :: fs
    logical :: rev
    integer :: nd, d
    nd = max(0, min(spec%ndims, PASSION_MAX_DIMS))
    rev = spec%storage == PASSION_ROW_MAJOR
    fs%ndims = spec%ndims
    fs%shape = perm(spec%shape, nd, rev)
    fs%elem_size = spec%elem_size
    fs%kind = spec%kind
    fs%endian = spec%endian
    fs%storage = spec%storage
    fs%grid = perm(int(spec%grid, int64), nd, rev)
    fs%dist = perm(int(spec%dist, int64), nd, rev)
    fs%block = perm(spec%block, nd, rev)
    fs%ghost = perm(spec%ghost, nd, rev)
    fs%placement = spec%placement
    fs%header_bytes = spec%header_bytes
    fs%order = 0
    do d = 1, nd
       fs%order(d) = spec%order(d) - 1
    end do
  end subroutine spec_to_c

  subroutine spec_from_c(fs, spec)
    type(c_fspec), intent(in) :: fs
    type(passion_array_spec), intent(out) :: spec
    logical :: rev
    integer :: nd, d
    nd = int(fs%ndims)
    rev = fs%storage == PASSION_ROW_MAJOR
    spec%ndims = nd
    spec%shape = perm(fs%shape, nd, rev)
    spec%elem_size = fs%elem_size
    spec%kind = int(fs%kind)
    spec%endian = int(fs%endian)
    spec%storage = int(fs%storage)
    spec%grid = int(perm(fs%grid, nd, rev))
    spec%dist = int(perm(fs%dist, nd, rev))
    spec%block = perm(fs%block, nd, rev)
    spec%ghost = perm(fs%ghost, nd, rev)
    spec%placement = int(fs%placement)
    spec%header_bytes = fs%header_bytes
    spec%order = 0
    do d = 1, nd
       spec%order(d) = int(fs%order(d)) + 1
    end do
  end subroutine spec_from_c

  ! Collective: validates spec, same on every rank (PASSION_EMISMATCH).
  integer function passion_array_create(ctx, spec, a) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(passion_array_spec), intent(in) :: spec
    type(passion_array), intent(out) :: a
    type(c_fspec) :: fs
    call spec_to_c(spec, fs)
    rc = c_array_create(ctx%p, fs, a%p)
    if (rc == 0) then
       a%nd = spec%ndims
       a%rev = spec%storage == PASSION_ROW_MAJOR
    end if
  end function passion_array_create

  ! Independent; PASSION_ESTATE while a file of a is open.
  integer function passion_array_free(a) result(rc)
    type(passion_array), intent(inout) :: a
    rc = c_array_free(a%p)
    if (rc == 0) a = passion_array()
  end function passion_array_free

  ! The array's spec (normalised), in the Fortran view.
  integer function passion_array_get_spec(a, spec) result(rc)
    type(passion_array), intent(in) :: a
    type(passion_array_spec), intent(out) :: spec
    type(c_fspec) :: fs
    rc = c_array_get_spec(a%p, fs)
    if (rc == 0) call spec_from_c(fs, spec)
  end function passion_array_get_spec

  ! Rank r's local shape (ghosts excluded), shape(1:nd).
  integer function passion_array_local_shape(a, r, shape) result(rc)
    type(passion_array), intent(in) :: a
    integer, intent(in) :: r
    integer(int64), intent(out) :: shape(:)
    integer(c_int64_t) :: c(PASSION_MAX_DIMS)
    integer(int64) :: w(PASSION_MAX_DIMS)
    shape = 0
    if (size(shape) < a%nd) then
       rc = PASSION_ERANGE
       return
    end if
    c = 0
    rc = c_array_local_shape(a%p, int(r, c_int), c)
    w = perm(c, a%nd, a%rev)
    if (rc == 0) shape(1:a%nd) = w(1:a%nd)
  end function passion_array_local_shape

  ! Rank r's first and last global index (1-based) per dimension, ghosts
  ! included if with_ghosts; a rank owning nothing gets lo = 1, hi = 0.
  integer function passion_array_local_bounds(a, r, lo, hi, with_ghosts) &
       result(rc)
    type(passion_array), intent(in) :: a
    integer, intent(in) :: r
    integer(int64), intent(out) :: lo(:), hi(:)
    logical, intent(in), optional :: with_ghosts
    integer(c_int64_t) :: cl(PASSION_MAX_DIMS), ch(PASSION_MAX_DIMS)
    integer(int64) :: wl(PASSION_MAX_DIMS), wh(PASSION_MAX_DIMS)
    integer(c_int) :: g
    lo = 0
    hi = 0
    if (size(lo) < a%nd .or. size(hi) < a%nd) then
       rc = PASSION_ERANGE
       return
    end if
    g = 0
    if (present(with_ghosts)) then
       if (with_ghosts) g = 1
    end if
    cl = 0
    ch = 0
    rc = c_array_local_bounds(a%p, int(r, c_int), g, cl, ch)
    wl = perm(cl, a%nd, a%rev) + 1
    wh = perm(ch, a%nd, a%rev) + 1
    if (rc == 0) then
       lo(1:a%nd) = wl(1:a%nd)
       hi(1:a%nd) = wh(1:a%nd)
    end if
  end function passion_array_local_bounds

  integer function passion_array_local_bytes(a, r, bytes) result(rc)
    type(passion_array), intent(in) :: a
    integer, intent(in) :: r
    integer(int64), intent(out) :: bytes
    integer(c_int64_t) :: b
    b = 0
    rc = c_array_local_bytes(a%p, int(r, c_int), b)
    bytes = b
  end function passion_array_local_bytes

  ! The rank owning global index gidx(1:nd) (1-based) and its local index
  ! there lidx(1:nd) (1-based: the interior is 1..n).
  integer function passion_array_owner(a, gidx, rank, lidx) result(rc)
    type(passion_array), intent(in) :: a
    integer(int64), intent(in) :: gidx(:)
    integer, intent(out) :: rank
    integer(int64), intent(out) :: lidx(:)
    integer(c_int64_t) :: g(PASSION_MAX_DIMS), l(PASSION_MAX_DIMS)
    integer(c_int) :: r
    integer(int64) :: w(PASSION_MAX_DIMS)
    rank = -1
    lidx = 0
    if (size(gidx) /= a%nd .or. size(lidx) < a%nd) then
       rc = PASSION_EINVAL
       return
    end if
    g = perm(to_i8(gidx) - 1, a%nd, a%rev)
    l = 0
    r = -1
    rc = c_array_owner(a%p, g, r, l)
    if (rc /= 0) return
    rank = r
    w = perm(l, a%nd, a%rev) + 1
    lidx(1:a%nd) = w(1:a%nd)
  end function passion_array_owner

  ! The global index (1-based) of rank r's local index lidx (1-based).
  integer function passion_array_global_index(a, r, lidx, gidx) result(rc)
    type(passion_array), intent(in) :: a
    integer, intent(in) :: r
    integer(int64), intent(in) :: lidx(:)
    integer(int64), intent(out) :: gidx(:)
    integer(c_int64_t) :: g(PASSION_MAX_DIMS), l(PASSION_MAX_DIMS)
    integer(int64) :: w(PASSION_MAX_DIMS)
    gidx = 0
    if (size(lidx) /= a%nd .or. size(gidx) < a%nd) then
       rc = PASSION_EINVAL
       return
    end if
    l = perm(to_i8(lidx) - 1, a%nd, a%rev)
    g = 0
    rc = c_array_global_index(a%p, int(r, c_int), l, g)
    if (rc /= 0) return
    w = perm(g, a%nd, a%rev) + 1
    gidx(1:a%nd) = w(1:a%nd)
  end function passion_array_global_index

  ! The description of a local array set without opening it: its spec
  ! (Fortran view), the number of files and their pattern (resolved
  ! against the description's directory; PASSION_ERANGE if it does not
  ! fit in pattern). Collective.
  integer function passion_array_spec_read(ctx, name, spec, nfiles, &
       pattern) result(rc)
    type(passion_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: name
    type(passion_array_spec), intent(out) :: spec
    integer, intent(out) :: nfiles
    character(len=*), intent(out) :: pattern
    type(c_fspec) :: fs
    integer(c_int64_t) :: n
    character(kind=c_char) :: buf(len(pattern) + 1)
    buf = c_null_char
    n = 0
    rc = c_array_spec_read(ctx%p, f2c(name), fs, n, buf, &
         int(size(buf), c_size_t))
    nfiles = int(n)
    call cbuf_to_f(buf, pattern)
    if (rc == 0) call spec_from_c(fs, spec)
  end function passion_array_spec_read

  ! ------------------------------------------------------------ sections

  ! passion_section(lo, hi [, stride] [, at]) or
  ! passion_section(lo, count=c [, stride] [, at]): size(lo) = rank, the
  ! others of the same size; each argument an integer array of any kind
  ! (default, int64, int32, int16, int8), kinds mixed freely. One specific
  ! with unlimited polymorphic dummies: a generic cannot have a specific
  ! per combination of kinds (specifics that differ only in optional
  ! arguments are ambiguous). A non-integer argument marks the section
  ! invalid (PASSION_EINVAL where it is used).
  function section_any(lo, hi, stride, count, at) result(s)
    class(*), intent(in) :: lo(:)
    class(*), intent(in), optional :: hi(:), stride(:), count(:), at(:)
    type(passion_section) :: s
    integer(int64) :: l(PASSION_MAX_DIMS), h(PASSION_MAX_DIMS), &
         st(PASSION_MAX_DIMS), c(PASSION_MAX_DIMS), a(PASSION_MAX_DIMS)
    integer :: nd
    logical :: ok
    s%nd = -1
    nd = size(lo)
    if (nd < 1 .or. nd > PASSION_MAX_DIMS .or. present(hi) .eqv. &
         present(count)) return
    st = 1
    ok = sec_ints(lo, nd, l)
    if (ok .and. present(stride)) ok = sec_ints(stride, nd, st)
    if (ok .and. present(hi)) ok = sec_ints(hi, nd, h)
    if (ok .and. present(count)) ok = sec_ints(count, nd, c)
    if (ok .and. present(at)) ok = sec_ints(at, nd, a)
    if (.not. ok) return
    s%nd = nd
    s%lo(1:nd) = l(1:nd)
    s%stride(1:nd) = st(1:nd)
    if (present(hi)) then
       s%hi(1:nd) = h(1:nd)
    else
       s%hi(1:nd) = l(1:nd) + (c(1:nd) - 1) * st(1:nd)
       where (c(1:nd) <= 0) s%hi(1:nd) = l(1:nd) - 1
    end if
    if (present(at)) then
       s%at(1:nd) = a(1:nd)
       s%has_at = .true.
    end if
  end function section_any

  ! The specifics of the generic before it took any kind (one kind per
  ! call), kept for programs compiled against that module: the same
  ! section as section_any.
  function section_i8(lo, hi, stride, count, at) result(s)
    integer(int64), intent(in) :: lo(:)
    integer(int64), intent(in), optional :: hi(:), stride(:), count(:), at(:)
    type(passion_section) :: s
    s = section_any(lo, hi, stride, count, at)
  end function section_i8

  function section_i4(lo, hi, stride, count, at) result(s)
    integer(int32), intent(in) :: lo(:)
    integer(int32), intent(in), optional :: hi(:), stride(:), count(:), at(:)
    type(passion_section) :: s
    s = section_any(lo, hi, stride, count, at)
  end function section_i4

  ! x as int64 into out(1:nd); .false. when x is no integer or not of nd
  ! elements
  logical function sec_ints(x, nd, out) result(ok)
    class(*), intent(in) :: x(:)
    integer, intent(in) :: nd
    integer(int64), intent(inout) :: out(:)
    ok = size(x) == nd
    if (.not. ok) return
    select type (x)
    type is (integer(int64))
       out(1:nd) = x
    type is (integer(int32))
       out(1:nd) = int(x, int64)
    type is (integer(int16))
       out(1:nd) = int(x, int64)
    type is (integer(int8))
       out(1:nd) = int(x, int64)
    class default
       ok = .false.
    end select
  end function sec_ints

  ! elements per dimension of a section (0 where hi < lo)
  pure function sec_counts(s) result(c)
    type(passion_section), intent(in) :: s
    integer(int64) :: c(PASSION_MAX_DIMS)
    integer :: d
    c = 0
    do d = 1, max(0, s%nd)
       if (s%hi(d) < s%lo(d)) then
          c(d) = 0
       else if (s%stride(d) < 1) then
          c(d) = 1   ! C rejects the stride
       else
          c(d) = (s%hi(d) - s%lo(d)) / s%stride(d) + 1
       end if
    end do
  end function sec_counts

  ! Number of elements of a section (0 if it is empty).
  integer(int64) function passion_section_elems(s) result(n)
    type(passion_section), intent(in) :: s
    integer(int64) :: c(PASSION_MAX_DIMS)
    c = sec_counts(s)
    n = 0
    if (s%nd >= 1) n = product(c(1:s%nd))
  end function passion_section_elems

  ! What method auto would use for section s of f (write: a write), and
  ! the predicted requests, file bytes and contiguous runs, from the cost
  ! model alone (no I/O). method: PASSION_METHOD_* (default auto).
  ! Independent.
  integer function passion_section_plan(f, s, write, info, method) &
       result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    logical, intent(in) :: write
    type(passion_plan_info), intent(out) :: info
    integer, intent(in), optional :: method
    type(passion_section) :: sp
    type(c_section) :: cs
    type(c_memspec) :: cm
    integer(c_int64_t) :: out(4), m
    integer(int64) :: none(1)
    real(c_double) :: sec
    none = 0
    sp = s
    sp%has_at = .false.   ! no memory side
    rc = prep(f%nd, f%rev, sp, 0, none, .true., cs, cm)
    if (rc /= 0) return
    m = PASSION_METHOD_AUTO
    if (present(method)) m = method
    out = 0
    sec = 0
    rc = c_section_plan(f%p, cs, merge(1_c_int64_t, 0_c_int64_t, write), &
         m, out, sec)
    info%method = int(out(1))
    info%requests = out(2)
    info%bytes_file = out(3)
    info%runs = out(4)
    info%seconds = sec
  end function passion_section_plan

  ! The C section and memory spec of a transfer of s on a file of rank nd
  ! (reversed if rev) with a buffer of rank brank and shape bshape;
  ! usemem: whether the memory spec applies (s%has_at).
  integer function prep(nd, rev, s, brank, bshape, contig, cs, cm) &
       result(rc)
    integer, intent(in) :: nd
    logical, intent(in) :: rev
    type(passion_section), intent(in) :: s
    integer, intent(in) :: brank
    integer(int64), intent(in) :: bshape(:)
    logical, intent(in) :: contig
    type(c_section), intent(out) :: cs
    type(c_memspec), intent(out) :: cm
    integer(int64) :: st(PASSION_MAX_DIMS), cnt(PASSION_MAX_DIMS)
    integer(int64) :: sh(PASSION_MAX_DIMS), off(PASSION_MAX_DIMS)
    integer :: d
    rc = 0
    if (.not. contig .or. s%nd /= nd .or. nd < 1) then
       rc = PASSION_EINVAL
       return
    end if
    st = 0
    st(1:nd) = s%lo(1:nd) - 1
    cnt = sec_counts(s)
    cs%start = perm(st, nd, rev)
    cs%count = perm(cnt, nd, rev)
    cs%stride = perm(s%stride, nd, rev)
    if (s%has_at) then
       if (brank /= nd) then
          rc = PASSION_EINVAL
          return
       end if
       sh = 0
       off = 0
       sh(1:nd) = bshape(1:nd)
       off(1:nd) = s%at(1:nd) - 1
       do d = 1, nd
          if (cnt(d) > 0 .and. (off(d) < 0 .or. off(d) + cnt(d) > sh(d))) &
               rc = PASSION_ERANGE
       end do
       cm%shape = perm(sh, nd, rev)
       cm%offset = perm(off, nd, rev)
    end if
  end function prep

  ! ------------------------------------------------------------ files

  ! the Fortran view (rank, reversed) of a C array handle
  subroutine view_of(p, nd, rev)
    type(c_ptr), intent(in) :: p
    integer, intent(out) :: nd
    logical, intent(out) :: rev
    type(c_fspec) :: fs
    nd = 0
    rev = .false.
    if (c_array_get_spec(p, fs) /= 0) return
    nd = int(fs%ndims)
    rev = fs%storage == PASSION_ROW_MAJOR
  end subroutine view_of

  ! Open an existing file by its own header ("x.npy", "run.h5:/u",
  ! "run.nc:v", a local set "data.%d.laf"): a and f are made from what the
  ! file says (a C-order file is seen with its dimensions reversed). mode:
  ! PASSION_MODE_RDONLY or _RDWR. layout (optional, Fortran view): grid,
  ! dist, block, ghost and placement to use; ndims/shape and
  ! elem_size/kind/endian, when nonzero, must equal the file's
  ! (PASSION_EFORMAT). On success close f, then free a. Collective.
  integer function passion_open(ctx, name, mode, a, f, layout) result(rc)
    type(passion_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: name
    integer, intent(in) :: mode
    type(passion_array), intent(out) :: a
    type(passion_file), intent(out) :: f
    type(passion_array_spec), intent(in), optional :: layout
    type(passion_array_spec) :: lay
    type(c_fspec), target :: fs
    integer :: nd
    logical :: rev
    if (present(layout)) then
       ! the layout is in Fortran order: which C dimension each entry
       ! means depends on the file's rank and storage order, read first
       ! (one more header read, collective like the open)
       rc = c_open(ctx%p, f2c(name), int(mode, c_int64_t), c_null_ptr, a%p, &
            f%p)
       if (rc /= 0) return
       call view_of(a%p, nd, rev)
       rc = c_file_close(f%p)
       if (rc == 0) rc = c_array_free(a%p)
       a = passion_array()
       f = passion_file()
       if (rc /= 0) return
       lay = layout
       if (lay%ndims == 0) then
          lay%ndims = nd
          lay%storage = merge(PASSION_ROW_MAJOR, PASSION_COL_MAJOR, rev)
       end if
       call spec_to_c(lay, fs)
       fs%ndims = layout%ndims
       rc = c_open(ctx%p, f2c(name), int(mode, c_int64_t), c_loc(fs), a%p, &
            f%p)
    else
       rc = c_open(ctx%p, f2c(name), int(mode, c_int64_t), c_null_ptr, a%p, &
            f%p)
    end if
    if (rc /= 0) return
    call view_of(a%p, a%nd, a%rev)
    f%nd = a%nd
    f%rev = a%rev
  end function passion_open

  ! Open a's file(s): a local set's pattern ("data.%d.laf"), a global file
  ! (.npy: NumPy). Collective.
  integer function passion_file_open(a, path, mode, f) result(rc)
    type(passion_array), intent(in) :: a
    character(len=*), intent(in) :: path
    integer, intent(in) :: mode
    type(passion_file), intent(out) :: f
    rc = c_file_open(a%p, f2c(path), int(mode, c_int), f%p)
    if (rc == 0) then
       f%nd = a%nd
       f%rev = a%rev
    end if
  end function passion_file_open

  ! Collective; resets f on success.
  integer function passion_file_close(f) result(rc)
    type(passion_file), intent(inout) :: f
    rc = c_file_close(f%p)
    if (rc == 0) f = passion_file()
  end function passion_file_close

  integer function passion_file_sync(f) result(rc)
    type(passion_file), intent(in) :: f
    rc = c_file_sync(f%p)
  end function passion_file_sync

  ! Publish the file(s) under a new name (every rank's writes synced, then
  ! renamed in one step; a local set's pattern as in passion_file_open);
  ! f stays open under the new name. Collective.
  integer function passion_file_rename(f, path) result(rc)
    type(passion_file), intent(in) :: f
    character(len=*), intent(in) :: path
    rc = c_file_rename(f%p, f2c(path))
  end function passion_file_rename

  ! Drop the file's pages from the page cache (cold benchmarks).
  integer function passion_file_drop_cache(f) result(rc)
    type(passion_file), intent(in) :: f
    rc = c_file_drop_cache(f%p)
  end function passion_file_drop_cache

  function passion_file_path(f) result(s)
    type(passion_file), intent(in) :: f
    character(len=:), allocatable :: s
    s = c2f(c_file_path(f%p))
  end function passion_file_path

  ! This rank's whole local file (ghosts included) to or from buf, in
  ! storage order. Independent; local placement.
  integer function passion_file_read_local(f, buf) result(rc)
    type(passion_file), intent(in) :: f
    type(*), dimension(..), intent(inout), target :: buf
    rc = local_io(c_file_read_local, f, bufptr(buf))
  end function passion_file_read_local

  integer function passion_file_write_local(f, buf) result(rc)
    type(passion_file), intent(in) :: f
    type(*), dimension(..), intent(in), target :: buf
    rc = local_io(c_file_write_local, f, bufptr(buf))
  end function passion_file_write_local

  ! the whole-file call cf (c_file_read_local or c_file_write_local) with
  ! the buffer bp from bufptr: NULL (empty or not contiguous) is
  ! PASSION_EINVAL here
  integer function local_io(cf, f, bp) result(rc)
    procedure(c_file_read_local) :: cf
    type(passion_file), intent(in) :: f
    type(c_ptr), intent(in) :: bp
    if (.not. c_associated(bp)) then
       rc = PASSION_EINVAL
       return
    end if
    rc = cf(f%p, bp)
  end function local_io

  ! the section calls (req: the request of the _BEGIN kinds)
  integer function xfer(kind, f, s, bp, brank, bshape, contig, method, &
       req) result(rc)
    integer, intent(in) :: kind
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(c_ptr), intent(in) :: bp
    integer, intent(in) :: brank
    integer(int64), intent(in) :: bshape(:)
    logical, intent(in) :: contig
    integer, intent(in), optional :: method
    type(passion_request), intent(out), optional :: req
    type(c_section) :: cs
    type(c_memspec), target :: cm
    type(c_ptr) :: mp
    integer(c_int) :: m
    m = PASSION_METHOD_AUTO
    if (present(method)) m = int(method, c_int)
    rc = prep(f%nd, f%rev, s, brank, bshape, contig, cs, cm)
    if (rc /= 0 .and. (kind == K_READ_ALL .or. kind == K_WRITE_ALL)) then
       ! still collective: take part with an impossible section so that
       ! every rank fails together (stride 0 is PASSION_EINVAL in C)
       cs = c_section()
       cs%stride = 0
       rc = 0
    end if
    if (rc /= 0) return
    mp = c_null_ptr
    if (s%has_at) mp = c_loc(cm)
    select case (kind)
    case (K_READ)
       rc = c_file_read(f%p, cs, bp, mp, m)
    case (K_WRITE)
       rc = c_file_write(f%p, cs, bp, mp, m)
    case (K_READ_ALL)
       rc = c_file_read_all(f%p, cs, bp, mp, m)
    case (K_WRITE_ALL)
       rc = c_file_write_all(f%p, cs, bp, mp, m)
    case (K_READ_BEGIN)
       rc = c_file_read_begin(f%p, cs, bp, mp, m, req%p)
    case default
       rc = c_file_write_begin(f%p, cs, bp, mp, m, req%p)
    end select
  end function xfer

  ! the buffer's address (NULL when empty: allowed for an empty section)
  function bufptr(buf) result(p)
    type(*), dimension(..), intent(in), target :: buf
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(buf) > 0 .and. is_contiguous(buf)) p = c_loc(buf)
  end function bufptr

  ! Read section s of f into buf (independent). method: PASSION_METHOD_*
  ! (default auto).
  integer function passion_file_read(f, s, buf, method) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(*), dimension(..), intent(inout), target :: buf
    integer, intent(in), optional :: method
    rc = xfer(K_READ, f, s, bufptr(buf), rank(buf), &
         int(shape(buf), int64), is_contiguous(buf), method)
  end function passion_file_read

  integer function passion_file_write(f, s, buf, method) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in), optional :: method
    rc = xfer(K_WRITE, f, s, bufptr(buf), rank(buf), &
         int(shape(buf), int64), is_contiguous(buf), method)
  end function passion_file_write

  ! Collective read of a global file's sections, each rank its own s (an
  ! empty section takes part with nothing). The same code on every rank.
  integer function passion_file_read_all(f, s, buf, method) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(*), dimension(..), intent(inout), target :: buf
    integer, intent(in), optional :: method
    rc = xfer(K_READ_ALL, f, s, bufptr(buf), rank(buf), &
         int(shape(buf), int64), is_contiguous(buf), method)
  end function passion_file_read_all

  integer function passion_file_write_all(f, s, buf, method) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(*), dimension(..), intent(in), target :: buf
    integer, intent(in), optional :: method
    rc = xfer(K_WRITE_ALL, f, s, bufptr(buf), rank(buf), &
         int(shape(buf), int64), is_contiguous(buf), method)
  end function passion_file_write_all

  ! Begin an asynchronous read / write (independent); buf must stay
  ! untouched and alive until passion_request_wait(req).
  integer function passion_file_read_begin(f, s, buf, req, method) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(*), dimension(..), intent(inout), target, asynchronous :: buf
    type(passion_request), intent(out) :: req
    integer, intent(in), optional :: method
    rc = xfer(K_READ_BEGIN, f, s, bufptr(buf), rank(buf), &
         int(shape(buf), int64), is_contiguous(buf), method, req)
  end function passion_file_read_begin

  integer function passion_file_write_begin(f, s, buf, req, method) &
       result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(*), dimension(..), intent(in), target, asynchronous :: buf
    type(passion_request), intent(out) :: req
    integer, intent(in), optional :: method
    rc = xfer(K_WRITE_BEGIN, f, s, bufptr(buf), rank(buf), &
         int(shape(buf), int64), is_contiguous(buf), method, req)
  end function passion_file_write_begin

  ! Wait for the request, free it (req reset), return its outcome.
  integer function passion_request_wait(req) result(rc)
    type(passion_request), intent(inout) :: req
    rc = c_request_wait(req%p)
    req%p = c_null_ptr
  end function passion_request_wait

  integer function passion_request_test(req, done) result(rc)
    type(passion_request), intent(in) :: req
    logical, intent(out) :: done
    integer(c_int) :: d
    d = 0
    rc = c_request_test(req%p, d)
    done = d /= 0
  end function passion_request_test

  ! Ghost exchange of local files along grid dimension dim (1..n): dir +1
  ! to the higher neighbour, -1 to the lower, 0 both; width 0 = the ghost
  ! width. Collective.
  integer function passion_file_shift_all(f, dim, dir, periodic, width) &
       result(rc)
    type(passion_file), intent(in) :: f
    integer, intent(in) :: dim, dir
    logical, intent(in), optional :: periodic
    integer(int64), intent(in), optional :: width
    integer(c_int) :: per, cd
    integer(c_int64_t) :: w
    per = 0
    if (present(periodic)) then
       if (periodic) per = 1
    end if
    w = 0
    if (present(width)) w = width
    cd = cdim(dim, f%nd, f%rev)
    if (cd < 0) cd = PASSION_MAX_DIMS   ! C rejects it on every rank
    rc = c_file_shift_all(f%p, cd, int(dir, c_int), per, w)
  end function passion_file_shift_all

  ! ------------------------------------------------------------ slabs

  ! Iterate over this rank's local file f in slabs (opts: defaults if
  ! absent). Independent.
  integer function passion_slab_open(f, it, opts) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_slab_iter), intent(out) :: it
    type(passion_slab_opts), intent(in), optional :: opts
    type(passion_slab_opts) :: o
    integer(c_int64_t) :: cd
    if (present(opts)) o = opts
    cd = -1
    if (o%dim /= 0) then
       cd = cdim(o%dim, f%nd, f%rev)
       if (cd < 0) then
          rc = PASSION_EINVAL
          return
       end if
    end if
    rc = c_slab_open(f%p, cd, int(o%width, c_int64_t), &
         int(o%budget, c_int64_t), int(o%halo, c_int64_t), &
         merge(1_c_int64_t, 0_c_int64_t, o%prefetch), &
         merge(1_c_int64_t, 0_c_int64_t, o%reuse), &
         merge(1_c_int64_t, 0_c_int64_t, o%writeback), o%out%p, &
         int(o%method, c_int64_t), it%p)
    if (rc == 0) then
       it%nd = f%nd
       it%rev = f%rev
    end if
  end function passion_slab_open

  ! 1 with the next slab in s, 0 after the last, < 0 on error.
  integer function passion_slab_next(it, s) result(rc)
    type(passion_slab_iter), intent(in) :: it
    type(passion_slab), intent(out) :: s
    type(c_fslab) :: c
    integer(int64) :: lb(PASSION_MAX_DIMS)
    integer :: cd
    rc = c_slab_next(it%p, c)
    if (rc /= 1) return
    cd = int(c%dim)
    s%index = c%index + 1
    s%nslabs = c%nslabs
    s%dim = fdim(cd, it%nd, it%rev)
    s%nd = it%nd
    s%first = c%start + 1
    s%count = c%count
    s%halo = c%halo
    lb = 1 - c%offset
    lb(cd + 1) = lb(cd + 1) + c%start
    s%shape = perm(c%shape, it%nd, it%rev)
    s%lbound = perm(lb, it%nd, it%rev)
    s%in = c%in
    s%out = c%out
  end function passion_slab_next

  integer function passion_slab_dirty(it) result(rc)
    type(passion_slab_iter), intent(in) :: it
    rc = c_slab_dirty(it%p)
  end function passion_slab_dirty

  ! Finish pending writes, free the iterator (reset); the first error.
  integer function passion_slab_close(it) result(rc)
    type(passion_slab_iter), intent(inout) :: it
    rc = c_slab_close(it%p)
    it = passion_slab_iter()
  end function passion_slab_close

  ! ------------------------------------------------------- partitions

  ! Partitioned in-core iteration over a global array file f whose grid
  ! has as many ranks as the communicator (opts: defaults if absent).
  ! Collective (the same options on every rank); f and opts%out stay busy
  ! until passion_part_close_all.
  integer function passion_part_open(f, it, opts) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_part_iter), intent(out) :: it
    type(passion_part_opts), intent(in), optional :: opts
    type(passion_part_opts) :: o
    integer(c_int64_t) :: cd
    if (present(opts)) o = opts
    cd = -1
    if (o%dim /= 0) then
       cd = cdim(o%dim, f%nd, f%rev)
       if (cd < 0) cd = PASSION_MAX_DIMS   ! C rejects it on every rank
    end if
    rc = c_part_open(f%p, cd, int(o%width, c_int64_t), &
         int(o%budget, c_int64_t), int(o%halo, c_int64_t), &
         merge(1_c_int64_t, 0_c_int64_t, o%prefetch), o%out%p, &
         int(o%method, c_int64_t), it%p)
    if (rc == 0) then
       it%nd = f%nd
       it%rev = f%rev
    end if
  end function passion_part_open

  ! Write the previous partition's output, read the next: 1 with the
  ! partition in p, 0 after the last, < 0 on error. Collective.
  integer function passion_part_next_all(it, p) result(rc)
    type(passion_part_iter), intent(in) :: it
    type(passion_part), intent(out) :: p
    type(c_fpart) :: c
    integer(int64) :: lb(PASSION_MAX_DIMS), lo(PASSION_MAX_DIMS)
    rc = c_part_next_all(it%p, c)
    if (rc /= 1) return
    p%index = c%index + 1
    p%nparts = c%nparts
    p%nd = it%nd
    lo = c%lo + 1
    lb = lo - c%offset
    p%lo = perm(lo, it%nd, it%rev)
    p%count = perm(c%count, it%nd, it%rev)
    p%shape = perm(c%shape, it%nd, it%rev)
    p%lbound = perm(lb, it%nd, it%rev)
    p%in = c%in
    p%out = c%out
  end function passion_part_next_all

  ! Write the last output if the loop stopped early, free the iterator
  ! (reset); the first error of the iteration. Collective.
  integer function passion_part_close_all(it) result(rc)
    type(passion_part_iter), intent(inout) :: it
    rc = c_part_close_all(it%p)
    it = passion_part_iter()
  end function passion_part_close_all

  ! ------------------------------------------------------- exchange

  ! passion_alltoall(ctx, sendbuf, recvbuf, count, datatype [, alg]
  ! [, radix]): MPI_Alltoall's shape, block j of sendbuf (count elements
  ! of datatype, from mpi_f08 or an integer handle of `use mpi`) to rank j
  ! (ranks 0..P-1 as in MPI), block i of recvbuf from rank i. Both buffers
  ! contiguous, of at least P * count elements; alg PASSION_XCHG_*
  ! (default PASSION_XCHG_DEFAULT: the `exchange` option), radix 0 = the
  ! option / the model. Collective: the same count, alg and radix on every
  ! rank; the same code on every rank.
  integer function a2a(ctx, sbuf, rbuf, ok, count, dt, alg, radix) &
       result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(c_ptr), intent(in) :: sbuf, rbuf
    logical, intent(in) :: ok
    integer(int64), intent(in) :: count
    integer, intent(in) :: dt
    integer, intent(in), optional :: alg, radix
    integer(c_int64_t) :: al, rx, n
    al = PASSION_XCHG_DEFAULT
    rx = 0
    if (present(alg)) al = alg
    if (present(radix)) rx = radix
    n = count
    if (.not. ok) n = -1   ! a negative count: every rank fails together
    rc = c_alltoall(ctx%p, sbuf, rbuf, n, int(dt, c_int), al, rx)
    if (.not. ok) rc = PASSION_EINVAL
  end function a2a

  integer function alltoall_int_8(ctx, sendbuf, recvbuf, count, datatype, &
       alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer(int64), intent(in) :: count
    integer, intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = a2a(ctx, bufptr(sendbuf), bufptr(recvbuf), &
         is_contiguous(sendbuf) .and. is_contiguous(recvbuf), count, &
         datatype, alg, radix)
  end function alltoall_int_8

  integer function alltoall_int(ctx, sendbuf, recvbuf, count, datatype, &
       alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer, intent(in) :: count
    integer, intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = alltoall_int_8(ctx, sendbuf, recvbuf, int(count, int64), &
         datatype, alg, radix)
  end function alltoall_int

  integer function alltoall_f08_8(ctx, sendbuf, recvbuf, count, datatype, &
       alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer(int64), intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = alltoall_int_8(ctx, sendbuf, recvbuf, count, datatype%MPI_VAL, &
         alg, radix)
  end function alltoall_f08_8

  integer function alltoall_f08(ctx, sendbuf, recvbuf, count, datatype, &
       alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer, intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = alltoall_int_8(ctx, sendbuf, recvbuf, int(count, int64), &
         datatype%MPI_VAL, alg, radix)
  end function alltoall_f08

  ! passion_alltoallv(ctx, sendbuf, sendcounts, sdispls, recvbuf,
  ! recvcounts, rdispls, datatype [, alg] [, radix]): MPI_Alltoallv's
  ! shape; counts and displacements (default integer or int64 arrays of
  ! one element per rank, indexed 1..P for ranks 0..P-1) in elements of
  ! datatype, displacements 0-based as in MPI. recvcounts(i+1) on rank j
  ! must equal sendcounts(j+1) on rank i (PASSION_EMISMATCH). Collective.
  integer function a2av(ctx, sbuf, sc, sd, rbuf, rcn, rd, ok, dt, alg, &
       radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(c_ptr), intent(in) :: sbuf, rbuf
    integer(int64), intent(in) :: sc(:), sd(:), rcn(:), rd(:)
    logical, intent(in) :: ok
    integer, intent(in) :: dt
    integer, intent(in), optional :: alg, radix
    integer(c_int64_t) :: al, rx
    integer(c_int64_t), allocatable :: a(:), b(:), c(:), d(:)
    type(MPI_Comm) :: comm
    integer :: p
    logical :: good
    al = PASSION_XCHG_DEFAULT
    rx = 0
    if (present(alg)) al = alg
    if (present(radix)) rx = radix
    comm%MPI_VAL = c_ctx_comm(ctx%p)
    p = 0
    if (c_associated(ctx%p)) call MPI_Comm_size(comm, p)
    good = ok .and. size(sc) == p .and. size(sd) == p .and. &
         size(rcn) == p .and. size(rd) == p
    allocate(a(p), b(p), c(p), d(p))
    a = -1
    b = -1
    c = -1
    d = -1
    if (good) then
       a = sc
       b = sd
       c = rcn
       d = rd
    end if
    ! a bad argument: negative counts, which fail on every rank together
    rc = c_alltoallv(ctx%p, sbuf, a, b, rbuf, c, d, int(dt, c_int), al, rx)
    if (.not. good) rc = PASSION_EINVAL
    deallocate(a, b, c, d)
  end function a2av

  integer function alltoallv_int_8(ctx, sendbuf, sendcounts, sdispls, &
       recvbuf, recvcounts, rdispls, datatype, alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer(int64), intent(in) :: sendcounts(:), sdispls(:), &
         recvcounts(:), rdispls(:)
    integer, intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = a2av(ctx, bufptr(sendbuf), sendcounts, sdispls, bufptr(recvbuf), &
         recvcounts, rdispls, is_contiguous(sendbuf) .and. &
         is_contiguous(recvbuf), datatype, alg, radix)
  end function alltoallv_int_8

  integer function alltoallv_int(ctx, sendbuf, sendcounts, sdispls, &
       recvbuf, recvcounts, rdispls, datatype, alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer, intent(in) :: sendcounts(:), sdispls(:), recvcounts(:), &
         rdispls(:)
    integer, intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = alltoallv_int_8(ctx, sendbuf, int(sendcounts, int64), &
         int(sdispls, int64), recvbuf, int(recvcounts, int64), &
         int(rdispls, int64), datatype, alg, radix)
  end function alltoallv_int

  integer function alltoallv_f08_8(ctx, sendbuf, sendcounts, sdispls, &
       recvbuf, recvcounts, rdispls, datatype, alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer(int64), intent(in) :: sendcounts(:), sdispls(:), &
         recvcounts(:), rdispls(:)
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = alltoallv_int_8(ctx, sendbuf, sendcounts, sdispls, recvbuf, &
         recvcounts, rdispls, datatype%MPI_VAL, alg, radix)
  end function alltoallv_f08_8

  integer function alltoallv_f08(ctx, sendbuf, sendcounts, sdispls, &
       recvbuf, recvcounts, rdispls, datatype, alg, radix) result(rc)
    type(passion_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in), target :: sendbuf
    type(*), dimension(..), intent(inout), target :: recvbuf
    integer, intent(in) :: sendcounts(:), sdispls(:), recvcounts(:), &
         rdispls(:)
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(in), optional :: alg, radix
    rc = alltoallv_int_8(ctx, sendbuf, int(sendcounts, int64), &
         int(sdispls, int64), recvbuf, int(recvcounts, int64), &
         int(rdispls, int64), datatype%MPI_VAL, alg, radix)
  end function alltoallv_f08

  ! ------------------------------------------------ MPI-IO file views

  ! passion_section_filetype(f, s, type, disp): section s of f as an MPI
  ! file view (etype MPI_BYTE): a committed datatype (type(MPI_Datatype)
  ! or an integer handle; MPI_Type_free it) and the byte displacement of
  ! its first element (integer(int64), MPI_OFFSET_KIND). Independent.
  integer function filetype_int(f, s, type, disp) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    integer, intent(out) :: type
    integer(int64), intent(out) :: disp
    type(passion_section) :: sp
    type(c_section) :: cs
    type(c_memspec) :: cm
    integer(int64) :: none(1)
    integer(c_int) :: t
    integer(c_int64_t) :: d
    none = 0
    sp = s
    sp%has_at = .false.
    t = 0
    d = 0
    rc = prep(f%nd, f%rev, sp, 0, none, .true., cs, cm)
    if (rc == 0) rc = c_section_filetype(f%p, cs, t, d)
    type = t
    disp = d
  end function filetype_int

  integer function filetype_f08(f, s, type, disp) result(rc)
    type(passion_file), intent(in) :: f
    type(passion_section), intent(in) :: s
    type(MPI_Datatype), intent(out) :: type
    integer(int64), intent(out) :: disp
    integer :: h
    rc = filetype_int(f, s, h, disp)
    type%MPI_VAL = h
  end function filetype_f08

  ! ------------------------------------------------------- multicast

  ! Rank root (an MPI rank of the context's communicator, 0-based) reads
  ! section src of its local file f, and every rank of group (ranks
  ! 0..P-1; absent: all) receives it: into section dst of its own file
  ! when dst is present (the same counts as src), else into buf (the
  ! packed count box of src, or placed at src%at). Every rank passes the
  ! same root, src and group; ranks outside the group pass through.
  ! Collective.
  integer function passion_file_multicast_all(f, root, src, dst, buf, &
       group) result(rc)
    type(passion_file), intent(in) :: f
    integer, intent(in) :: root
    type(passion_section), intent(in) :: src
    type(passion_section), intent(in), optional :: dst
    type(*), dimension(..), intent(inout), target, optional :: buf
    integer, intent(in), optional :: group(:)
    type(c_section), target :: cs, cd
    type(c_memspec), target :: cm, cm2
    integer(c_int), allocatable, target :: g(:)
    integer(int64) :: none(1)
    type(c_ptr) :: gp, dp, bp, mp
    type(passion_section) :: sp
    integer :: rc1, ng
    none = 0
    sp = src
    if (present(dst) .or. .not. present(buf)) sp%has_at = .false.
    if (present(buf) .and. .not. present(dst)) then
       rc1 = prep(f%nd, f%rev, sp, rank(buf), int(shape(buf), int64), &
            is_contiguous(buf), cs, cm)
    else
       rc1 = prep(f%nd, f%rev, sp, 0, none, .true., cs, cm)
    end if
    mp = c_null_ptr
    if (sp%has_at) mp = c_loc(cm)
    dp = c_null_ptr
    bp = c_null_ptr
    if (present(dst)) then
       sp = dst
       sp%has_at = .false.
       if (rc1 == 0) rc1 = prep(f%nd, f%rev, sp, 0, none, .true., cd, cm2)
       dp = c_loc(cd)
    else if (present(buf)) then
       bp = bufptr(buf)
    end if
    if (rc1 /= 0) then
       ! still collective: an impossible section fails every rank together
       cs = c_section()
       cs%stride = 0
       mp = c_null_ptr
    end if
    gp = c_null_ptr
    ng = 0
    if (present(group)) then
       ng = size(group)
       allocate(g(max(1, ng)))
       if (ng > 0) g(1:ng) = int(group, c_int)
       gp = c_loc(g)
    end if
    rc = c_multicast_all(f%p, int(root, c_int), c_loc(cs), gp, &
         int(ng, c_int), dp, bp, mp)
    if (rc1 /= 0) rc = rc1
    if (allocated(g)) deallocate(g)
  end function passion_file_multicast_all

  ! ------------------------------------------------------- last method

  ! What the last section access on ctx did on this rank: method the
  ! PASSION_METHOD_* it used (auto resolved; PASSION_METHOD_AUTO before
  ! the first access, after a failed one, or when this rank moved no
  ! data independently); predicted (optional) the seconds the collective
  ! cost model predicted for its choice when the call was collective
  ! with method auto, else 0. Independent.
  integer function passion_ctx_last_method(ctx, method, predicted) &
       result(rc)
    type(passion_ctx), intent(in) :: ctx
    integer, intent(out) :: method
    real(real64), intent(out), optional :: predicted
    integer(c_int64_t) :: m
    real(c_double) :: p
    m = 0
    p = 0
    rc = c_ctx_last_method(ctx%p, m, p)
    method = int(m)
    if (present(predicted)) predicted = p
  end function passion_ctx_last_method

end module passion
