! test_f_errors.f90 - error paths of the Fortran module: codes as
! integers, passion_strerror's text, passion_ctx_errdetail, the binding's
! own argument checks, a collective call failing on every rank because of
! one rank's section, lifetimes (PASSION_ESTATE), options, version.
! Uses `use mpi` (integer handles) as an older code would.
program test_f_errors
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi
  use passion
  use ftest, only : rng_seed, check, check_rc, finish, me, np
  implicit none
  type(passion_ctx) :: ctx
  type(passion_options) :: opt
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: f
  type(passion_section) :: s
  real(real64) :: buf(10, 10), big(4, 4)
  integer :: ierr, ma, mi, pa, comm, csize, rc
  character(len=32) :: val
  character(len=:), allocatable :: v

  call MPI_Init(ierr)
  call rng_seed(1_int64)

  ! version: the string and the numbers, as the header's constants say
  v = passion_version(ma, mi, pa)
  call check(v == '1.0.0', 'version string')
  call check(ma == PASSION_VERSION_MAJOR .and. mi == PASSION_VERSION_MINOR &
       .and. pa == PASSION_VERSION_PATCH, 'version numbers')

  ! strerror: C's text for every code
  call check(passion_strerror(PASSION_OK) == 'success', 'strerror OK')
  call check(passion_strerror(PASSION_ERANGE) == &
       'index or section outside the array bounds', 'strerror ERANGE')
  call check(passion_strerror(PASSION_EINVAL) == 'invalid argument', &
       'strerror EINVAL')
  call check(passion_strerror(PASSION_ESTATE) == 'call out of order', &
       'strerror ESTATE')
  call check(passion_strerror(-999) == 'unknown passion error code', &
       'strerror unknown')

  ! options: a bad key is EINVAL with a detail; values read back
  call check_rc(passion_options_create(opt), 0, 'options_create')
  call check_rc(passion_options_set(opt, 'no_such_key', '1'), &
       PASSION_EINVAL, 'unknown option key')
  call check(len(passion_options_errdetail(opt)) > 0, 'options errdetail')
  call check_rc(passion_options_set(opt, 'memory_budget', 2 * 1048576), 0, &
       'set_int')
  call check_rc(passion_options_get(opt, 'memory_budget', val), 0, &
       'options_get')
  call check(val == '2097152', 'memory_budget read back: ' // val)
  call check_rc(passion_options_set(opt, 'io_latency', 0.25d0), 0, &
       'set_double')
  call check_rc(passion_options_set(opt, 'memory_budget', -5_int64), &
       PASSION_EINVAL, 'negative budget')
  call check_rc(passion_options_parse(opt, 'verbosity=0,radix=0'), 0, 'parse')
  call check_rc(passion_options_get(opt, 'memory_budget', val(1:3)), &
       PASSION_ERANGE, 'options_get into a short string')

  call check_rc(passion_init(MPI_COMM_WORLD, ctx, opt), 0, 'init (use mpi)')
  call check_rc(passion_options_free(opt), 0, 'options_free')
  call check_rc(passion_ctx_comm(ctx, comm), 0, 'ctx_comm')
  call MPI_Comm_size(comm, csize, ierr)
  call check(csize == np, 'ctx_comm size')
  call check_rc(passion_ctx_option_get(ctx, 'memory_budget', val), 0, &
       'ctx_option_get')
  call check(val == '2097152', 'context keeps the options')

  call check_rc(passion_array_spec_init(spec, [10_int64, 10_int64], 8), 0, &
       'spec')
  spec%placement = PASSION_PLACE_GLOBAL
  call check_rc(passion_array_create(ctx, spec, a), 0, 'array_create')

  ! a missing file
  call check_rc(passion_file_open(a, 'no_such_dir/x.dat', &
       PASSION_MODE_RDONLY, f), PASSION_ENOENT, 'open a missing file')
  call check_rc(passion_file_open(a, 'ferrors.dat', PASSION_MODE_CREATE, f), &
       0, 'open')

  ! out of range: hi past the last index (10)
  rc = passion_file_read(f, passion_section([1, 1], [11, 10]), buf)
  call check_rc(rc, PASSION_ERANGE, 'section past the bounds')
  call check(passion_strerror(rc) == &
       'index or section outside the array bounds', 'its message')
  call check(len(passion_ctx_errdetail(ctx)) > 0, 'errdetail set')
  ! index 0 (below Fortran's first index 1)
  call check_rc(passion_file_read(f, passion_section([0, 1], [3, 3]), buf), &
       PASSION_ERANGE, 'section starting at 0')
  ! zero stride
  call check_rc(passion_file_read(f, passion_section([1, 1], [3, 3], &
       [1, 0]), buf), PASSION_EINVAL, 'zero stride')
  ! the binding's checks: rank, contiguity, placement, constructor
  call check_rc(passion_file_read(f, passion_section([1], [3]), buf), &
       PASSION_EINVAL, 'section of the wrong rank')
  call check_rc(passion_file_read(f, passion_section([1, 1], [2, 2]), &
       buf(1:10:2, :)), PASSION_EINVAL, 'non-contiguous buffer')
  call check_rc(passion_file_read(f, passion_section([1, 1], [3, 3], &
       at=[3, 3]), big), PASSION_ERANGE, 'at: the box past the buffer')
  s = passion_section([1, 1], [2, 2], count=[2, 2])
  call check(s%nd < 0, 'hi and count together are invalid')
  call check_rc(passion_file_read(f, s, buf), PASSION_EINVAL, &
       'an invalid section')
  ! empty section (hi < lo): nothing moves, success
  call check_rc(passion_file_read(f, passion_section([5, 5], [4, 9]), buf), &
       0, 'empty section')
  call check(passion_section_elems(passion_section([5, 5], [4, 9])) == 0, &
       'empty section has no elements')
  call check(passion_section_elems(passion_section([1, 2], [9, 10], &
       [2, 4])) == 15, 'elements of 1:9:2 x 2:10:4')

  ! collective: only the last rank's section is out of range, every rank
  ! gets PASSION_ERANGE
  if (me == np - 1) then
     s = passion_section([1, 1], [10, 12])
  else
     s = passion_section([1, 1], [2, 2])
  end if
  call check_rc(passion_file_read_all(f, s, buf), PASSION_ERANGE, &
       'read_all with one bad rank')
  ! the binding's own check in a collective: every rank still fails
  if (me == 0) then
     s = passion_section([1], [2])
  else
     s = passion_section([1, 1], [2, 2])
  end if
  rc = passion_file_write_all(f, s, buf)
  call check(rc /= 0, 'write_all with one rank''s bad section fails')
  call MPI_Allreduce(MPI_IN_PLACE, rc, 1, MPI_INTEGER, MPI_MIN, &
       MPI_COMM_WORLD, ierr)
  call check(rc /= 0, 'and it fails on every rank')

  ! lifetimes: the array outlives its file, the context its arrays
  call check_rc(passion_array_free(a), PASSION_ESTATE, 'free with file open')
  call check_rc(passion_file_close(f), 0, 'close')
  call check_rc(passion_finalize(ctx), PASSION_ESTATE, 'finalize with array')
  call check_rc(passion_array_free(a), 0, 'array_free')
  call check_rc(passion_finalize(ctx), 0, 'finalize')
  call check_rc(passion_finalize(ctx), 0, 'finalize a reset handle: no-op')
  deallocate(v)
  call finish('test_f_errors')
end program test_f_errors
