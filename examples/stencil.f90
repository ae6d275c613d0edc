! stencil.f90 - an out-of-core stencil from Fortran: Jacobi sweeps of a
! 2-D grid that lives in local array files, one per rank.
!
! The grid (N1 x N2 doubles, column-major) is distributed (*, BLOCK) with
! one ghost column on each side. Each sweep
!   1. exchanges the ghost columns with the neighbours' files
!      (passion_file_shift_all: file to file, through MPI),
!   2. walks the local file in slabs of columns with a halo of one column
!      (prefetch on; the columns consecutive slabs share are reused, not
!      reread), writing the 5-point average of every interior cell into
!      the second file:
!         v(i, j) = (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1)) / 4,
!      cells outside the grid being 0,
!   3. swaps the two files.
! At the end every rank compares its part with the same sweeps done in
! memory on the whole grid (a naive loop).
!
! Build: mpifort.mpich stencil.f90 $(pkg-config --cflags --libs passion-fortran)
! Run:   mpiexec.mpich -n 3 ./stencil [DIR]
program stencil
  use, intrinsic :: iso_c_binding, only : c_f_pointer
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi_f08
  use passion
  implicit none
  integer, parameter :: N1 = 64, N2 = 96, SWEEPS = 6
  type(passion_ctx) :: ctx
  type(passion_options) :: opt
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: fu, fv, tmp
  type(passion_slab_iter) :: it
  type(passion_slab_opts) :: so
  type(passion_slab) :: s
  type(passion_counters) :: cnt
  real(real64), allocatable :: ref(:,:), loc(:,:)
  real(real64), pointer :: p(:,:), u(:,:), v(:,:)
  integer(int64) :: lo(2), hi(2), sh(2)
  integer :: me, np, rc, i, j, t, bad, total
  real(real64) :: err, gerr, up, down
  character(len=4096) :: dir

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  dir = '.'
  if (command_argument_count() > 0) call get_command_argument(1, dir)
  bad = 0

  call ok(passion_options_create(opt), 'options_create')
  call ok(passion_options_set(opt, 'memory_budget', '64K'), 'options_set')
  call ok(passion_init(MPI_COMM_WORLD, ctx, opt), 'passion_init')
  call ok(passion_options_free(opt), 'options_free')
  call ok(passion_array_spec_init(spec, [N1, N2], 8), 'spec')
  spec%grid(2) = np                     ! (*, BLOCK) over the columns
  spec%dist(1) = PASSION_DIST_COLLAPSED
  spec%ghost(2) = 1
  call ok(passion_array_create(ctx, spec, a), 'array_create')
  call ok(passion_array_local_shape(a, me, sh), 'local_shape')
  call ok(passion_array_local_bounds(a, me, lo, hi), 'local_bounds')
  call ok(passion_file_open(a, trim(dir) // '/stencil_u_f.%d.laf', &
       PASSION_MODE_CREATE, fu), 'open u')
  call ok(passion_file_open(a, trim(dir) // '/stencil_v_f.%d.laf', &
       PASSION_MODE_CREATE, fv), 'open v')

  ! the initial grid, my columns lo(2)..hi(2), as one section
  allocate(loc(sh(1), sh(2)))
  do j = 1, int(sh(2))
     do i = 1, N1
        loc(i, j) = init(i, int(lo(2)) + j - 1)
     end do
  end do
  call ok(passion_file_write(fu, passion_section([1_int64, 1_int64], sh), &
       loc), 'write')

  so%dim = 2                            ! slabs of columns
  so%prefetch = .true.
  so%reuse = .true.
  call ok(passion_counters_reset(ctx), 'counters_reset')
  do t = 1, SWEEPS
     call ok(passion_file_shift_all(fu, 2, 0), 'shift_all')
     so%out = fv
     call ok(passion_slab_open(fu, it, so), 'slab_open')
     do
        rc = passion_slab_next(it, s)
        if (rc /= 1) exit
        call c_f_pointer(s%in, p, s%shape(1:2))
        u(s%lbound(1):, s%lbound(2):) => p
        call c_f_pointer(s%out, p, s%shape(1:2))
        v(s%lbound(1):, s%lbound(2):) => p
        do j = int(s%first), int(s%first + s%count) - 1
           do i = 1, N1
              up = 0                    ! rows outside the grid: 0
              if (i > 1) up = u(i - 1, j)
              down = 0
              if (i < N1) down = u(i + 1, j)
              v(i, j) = (up + down + u(i, j - 1) + u(i, j + 1)) / 4
           end do
        end do
     end do
     call ok(min(rc, 0), 'slab_next')
     call ok(passion_slab_close(it), 'slab_close')
     tmp = fu
     fu = fv
     fv = tmp
  end do
  call ok(passion_counters_get(ctx, cnt), 'counters_get')

  ! the same sweeps in memory, on the whole grid
  allocate(ref(0:N1 + 1, 0:N2 + 1))
  ref = 0
  do j = 1, N2
     do i = 1, N1
        ref(i, j) = init(i, j)
     end do
  end do
  do t = 1, SWEEPS
     ref(1:N1, 1:N2) = (ref(0:N1 - 1, 1:N2) + ref(2:N1 + 1, 1:N2) + &
          ref(1:N1, 0:N2 - 1) + ref(1:N1, 2:N2 + 1)) / 4
  end do
  call ok(passion_file_read(fu, passion_section([1_int64, 1_int64], sh), &
       loc), 'read')
  err = maxval(abs(loc - ref(1:N1, lo(2):hi(2))))
  call MPI_Reduce(err, gerr, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, &
       MPI_COMM_WORLD)
  write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'rank ', me, ': columns ', &
       lo(2), '..', hi(2), '; bytes read ', cnt%bytes_read, &
       ', not reread (reuse) ', cnt%reuse_bytes
  if (me == 0) write (*, '(a,i0,a,es10.3)') 'stencil: ', SWEEPS, &
       ' sweeps, max difference from the in-memory sweeps ', gerr
  if (err > 1e-12_real64) bad = bad + 1

  call ok(passion_file_close(fv), 'close v')
  call ok(passion_file_close(fu), 'close u')
  call ok(passion_array_free(a), 'array_free')
  call ok(passion_finalize(ctx), 'finalize')
  deallocate(ref, loc)
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) write (*, '(a,i0,a)') 'stencil: ', total, ' errors'
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  real(real64) function init(i, j)
    integer, intent(in) :: i, j
    init = real(mod(i * 7 + j * 13, 17), real64)
  end function init

  subroutine ok(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= PASSION_OK) then
       write (*, '(a,i0,a,a,a,a,a,a)') 'rank ', me, ': ', what, ': ', &
            passion_strerror(code), ': ', passion_ctx_errdetail(ctx)
       bad = bad + 1
    end if
  end subroutine ok

end program stencil
