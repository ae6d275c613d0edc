! test_f_slab.f90 - the Fortran module on local array files: a 2-D array
! (*, BLOCK) over the ranks with one ghost column, filled by section
! writes, ghosts exchanged (passion_file_shift_all), then a slab loop with
! prefetch along dimension 2 whose in buffers are checked cell by cell
! (interior, halo and ghosts, through Fortran pointers with local lower
! bounds) and whose out buffers get a 3-point stencil, compared with a
! naive loop over the global array; then a write-back loop (dirty) that
! doubles every interior cell, checked with passion_file_read_local.
! Also passion_init with an integer communicator handle (`use mpi` style).
program test_f_slab
  use, intrinsic :: iso_c_binding, only : c_f_pointer, c_associated
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi_f08
  use passion
  use ftest
  implicit none
  integer, parameter :: n1 = 5
  type(passion_ctx) :: ctx
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: f, g
  type(passion_slab_iter) :: it
  type(passion_slab_opts) :: so
  type(passion_slab) :: s
  type(passion_counters) :: cnt
  real(real64), allocatable :: loc(:,:), got(:,:), whole(:,:)
  real(real64), pointer :: p(:,:), u(:,:), v(:,:)
  integer(int64) :: lo(2), hi(2), sh(2)
  integer :: n2, rc, i, j, nslab, nloc, comm_int
  logical :: ok

  call MPI_Init()
  call rng_seed(1_int64)
  n2 = 10 * np + 3

  ! an integer handle, as `use mpi` gives it
  comm_int = MPI_COMM_WORLD%MPI_VAL
  call check_rc(passion_init(comm_int, ctx), 0, 'init (integer handle)')

  call check_rc(passion_array_spec_init(spec, [n1, n2], 8), 0, 'spec')
  spec%grid(1:2) = [1, np]
  spec%dist(1) = PASSION_DIST_COLLAPSED
  spec%ghost(2) = 1
  call check_rc(passion_array_create(ctx, spec, a), 0, 'array_create')
  call check_rc(passion_array_local_shape(a, me, sh), 0, 'local_shape')
  call check_rc(passion_array_local_bounds(a, me, lo, hi), 0, 'local_bounds')
  nloc = int(sh(2))
  call check(sh(1) == n1 .and. hi(2) - lo(2) + 1 == nloc .and. &
       lo(1) == 1 .and. hi(1) == n1, 'local bounds agree with the shape')
  call check_rc(passion_file_open(a, 'fslab.%d.laf', PASSION_MODE_CREATE, &
       f), 0, 'open in')
  call check_rc(passion_file_open(a, 'fslab_out.%d.laf', &
       PASSION_MODE_CREATE, g), 0, 'open out')

  ! interior: G(i, global j), written as one section
  allocate(loc(n1, nloc))
  do j = 1, nloc
     do i = 1, n1
        loc(i, j) = gval(i, int(lo(2)) + j - 1)
     end do
  end do
  call check_rc(passion_file_write(f, passion_section([1, 1], [n1, nloc]), &
       loc), 0, 'write interior')
  call check_rc(passion_file_shift_all(f, 2, 0), 0, 'shift_all')

  ! slab loop: 3 columns per slab, halo 1 (the ghost width), prefetch
  so%dim = 2
  so%width = 3
  so%prefetch = .true.
  so%out = g
  call check_rc(passion_counters_reset(ctx), 0, 'counters_reset')
  call check_rc(passion_slab_open(f, it, so), 0, 'slab_open')
  nslab = 0
  do
     rc = passion_slab_next(it, s)
     if (rc /= 1) exit
     nslab = nslab + 1
     call check(s%index == nslab .and. s%dim == 2 .and. s%halo == 1 .and. &
          c_associated(s%out), 'slab fields')
     call c_f_pointer(s%in, p, s%shape(1:2))
     u(s%lbound(1):, s%lbound(2):) => p
     call c_f_pointer(s%out, p, s%shape(1:2))
     v(s%lbound(1):, s%lbound(2):) => p
     ! in: interior and halo columns, rows 1..n1 (no ghosts along dim 1)
     ok = lbound(u, 1) == 1 .and. ubound(u, 1) == n1 .and. &
          lbound(u, 2) <= s%first - 1 .and. &
          ubound(u, 2) >= s%first + s%count
     call check(ok, 'slab buffer covers interior and halo')
     if (.not. ok) cycle
     do j = int(s%first) - 1, int(s%first + s%count)
        do i = 1, n1
           call check(u(i, j) == gval(i, int(lo(2)) + j - 1), 'slab in cell')
        end do
     end do
     do j = int(s%first), int(s%first + s%count) - 1
        v(:, j) = u(:, j - 1) + u(:, j + 1) + 0.5d0 * u(:, j)
     end do
  end do
  call check_rc(rc, 0, 'slab_next end')
  call check(nslab == (nloc + 2) / 3, 'number of slabs')
  call check_rc(passion_slab_close(it), 0, 'slab_close')
  call check_rc(passion_counters_get(ctx, cnt), 0, 'counters_get')
  call check(cnt%io_calls > 0 .and. cnt%bytes_read > 0 .and. &
       cnt%bytes_written > 0, 'counters count I/O')
  if (nslab > 1) call check(cnt%reuse_bytes > 0, 'halo reuse counted')

  ! the stencil's output against the naive loop on the global array
  allocate(got(n1, nloc))
  got = -1
  call check_rc(passion_file_read(g, passion_section([1, 1], [n1, nloc]), &
       got), 0, 'read out')
  do j = 1, nloc
     do i = 1, n1
        call check(got(i, j) == gval(i, int(lo(2)) + j - 2) + &
             gval(i, int(lo(2)) + j) + 0.5d0 * gval(i, int(lo(2)) + j - 1), &
             'stencil cell')
     end do
  end do

  ! write-back: double every interior cell of f in place
  so = passion_slab_opts()
  so%writeback = .true.
  so%width = 2
  call check_rc(passion_slab_open(f, it, so), 0, 'slab_open writeback')
  do
     rc = passion_slab_next(it, s)
     if (rc /= 1) exit
     call c_f_pointer(s%in, p, s%shape(1:2))
     u(s%lbound(1):, s%lbound(2):) => p
     u(:, s%first:s%first + s%count - 1) = 2 * u(:, s%first:s%first + &
          s%count - 1)
     call check_rc(passion_slab_dirty(it), 0, 'slab_dirty')
  end do
  call check_rc(rc, 0, 'slab_next end (writeback)')
  call check_rc(passion_slab_close(it), 0, 'slab_close (writeback)')
  ! the whole local file, ghosts included: interior doubled, ghosts not
  allocate(whole(n1, 0:nloc + 1))
  call check_rc(passion_file_read_local(f, whole), 0, 'read_local')
  do j = 0, nloc + 1
     do i = 1, n1
        if (j == 0 .or. j == nloc + 1) then
           call check(whole(i, j) == gval(i, int(lo(2)) + j - 1), 'ghost cell')
        else
           call check(whole(i, j) == 2 * gval(i, int(lo(2)) + j - 1), &
                'doubled cell')
        end if
     end do
  end do

  call check_rc(passion_file_close(g), 0, 'close out')
  call check_rc(passion_file_close(f), 0, 'close in')
  call check_rc(passion_array_free(a), 0, 'array_free')
  call check_rc(passion_finalize(ctx), 0, 'finalize')
  deallocate(loc, got, whole)
  call finish('test_f_slab')

contains

  ! the global array's value at (i, global column jg); 0 outside
  pure real(real64) function gval(i, jg)
    integer, intent(in) :: i, jg
    if (jg < 1 .or. jg > n2) then
       gval = 0
    else
       gval = i + 1000 * jg
    end if
  end function gval

end program test_f_slab
