! slab_prefetch.f90 - a slab loop over local array files with prefetch,
! from Fortran with the `use mpi` integer communicator.
!
! A 3-D array of doubles (N1 x N2 x N3) is distributed (*, *, BLOCK): each
! rank keeps its block of planes in its own local file (local placement).
! The loop walks the local file in slabs of W planes along dimension 3;
! with prefetch the next slab is read while the current one is computed,
! and each slab's output buffer (a second local file) is written back
! asynchronously. The computation: out = 2 * in + 1, and the sum of in.
! Checked: the sum against the formula, the output file against it too.
!
! Build: mpifort.mpich slab_prefetch.f90 $(pkg-config --cflags --libs passion-fortran)
! Run:   mpiexec.mpich -n 3 ./slab_prefetch [DIR]
program slab_prefetch
  use, intrinsic :: iso_c_binding, only : c_f_pointer
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi
  use passion
  implicit none
  integer, parameter :: N1 = 40, N2 = 30, N3 = 50, W = 4
  type(passion_ctx) :: ctx
  type(passion_options) :: opt
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: fin, fout
  type(passion_slab_iter) :: it
  type(passion_slab_opts) :: so
  type(passion_slab) :: s
  type(passion_counters) :: cnt
  real(real64), allocatable :: loc(:,:,:)
  real(real64), pointer :: p(:,:,:), u(:,:,:), v(:,:,:)
  real(real64) :: sum_in, want, gsum
  integer(int64) :: lo(3), hi(3), sh(3)
  integer :: me, np, ierr, rc, i, j, k, bad, total, nslabs
  character(len=4096) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  dir = '.'
  if (command_argument_count() > 0) call get_command_argument(1, dir)
  bad = 0

  ! a small budget: many slabs even for this small array
  call ok(passion_options_create(opt), 'options_create')
  call ok(passion_options_set(opt, 'memory_budget', '256K'), 'options_set')
  call ok(passion_init(MPI_COMM_WORLD, ctx, opt), 'passion_init')
  call ok(passion_options_free(opt), 'options_free')

  call ok(passion_array_spec_init(spec, [N1, N2, N3], 8), 'spec')
  spec%grid(3) = np                         ! (*, *, BLOCK)
  spec%dist(1:2) = PASSION_DIST_COLLAPSED
  spec%placement = PASSION_PLACE_LOCAL
  call ok(passion_array_create(ctx, spec, a), 'array_create')
  call ok(passion_array_local_shape(a, me, sh), 'local_shape')
  call ok(passion_array_local_bounds(a, me, lo, hi), 'local_bounds')
  call ok(passion_file_open(a, trim(dir) // '/slab_in_f.%d.laf', &
       PASSION_MODE_CREATE, fin), 'open in')
  call ok(passion_file_open(a, trim(dir) // '/slab_out_f.%d.laf', &
       PASSION_MODE_CREATE, fout), 'open out')

  ! fill the local file: a(i, j, k) = i + 100 j + 10000 k (global k)
  allocate(loc(sh(1), sh(2), sh(3)))
  do k = 1, int(sh(3))
     do j = 1, N2
        do i = 1, N1
           loc(i, j, k) = val(i, j, int(lo(3)) + k - 1)
        end do
     end do
  end do
  call ok(passion_file_write_local(fin, loc), 'write_local')

  ! the slab loop
  so%dim = 3
  so%width = W
  so%prefetch = .true.
  so%out = fout
  call ok(passion_counters_reset(ctx), 'counters_reset')
  call ok(passion_slab_open(fin, it, so), 'slab_open')
  sum_in = 0
  nslabs = 0
  do
     rc = passion_slab_next(it, s)
     if (rc /= 1) exit
     nslabs = nslabs + 1
     ! in and out as Fortran arrays indexed by local indices
     call c_f_pointer(s%in, p, s%shape(1:3))
     u(s%lbound(1):, s%lbound(2):, s%lbound(3):) => p
     call c_f_pointer(s%out, p, s%shape(1:3))
     v(s%lbound(1):, s%lbound(2):, s%lbound(3):) => p
     do k = int(s%first), int(s%first + s%count) - 1
        sum_in = sum_in + sum(u(:, :, k))
        v(:, :, k) = 2 * u(:, :, k) + 1
     end do
  end do
  call ok(min(rc, 0), 'slab_next')
  call ok(passion_slab_close(it), 'slab_close')
  call ok(passion_counters_get(ctx, cnt), 'counters_get')

  ! checks: the sum, and the output file
  want = 0
  do k = int(lo(3)), int(hi(3))
     do j = 1, N2
        do i = 1, N1
           want = want + val(i, j, k)
        end do
     end do
  end do
  if (sum_in /= want) bad = bad + 1
  call ok(passion_file_read_local(fout, loc), 'read_local')
  do k = 1, int(sh(3))
     do j = 1, N2
        do i = 1, N1
           if (loc(i, j, k) /= 2 * val(i, j, int(lo(3)) + k - 1) + 1) &
                bad = bad + 1
        end do
     end do
  end do
  write (*, '(7(a,i0))') 'rank ', me, ': planes ', &
       lo(3), '..', hi(3), ' in ', nslabs, ' slabs; io_calls ', &
       cnt%io_calls, ', prefetch_hits ', cnt%prefetch_hits, &
       ', bytes_read ', cnt%bytes_read
  call MPI_Reduce(sum_in, gsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, &
       MPI_COMM_WORLD, ierr)
  if (me == 0) write (*, '(a,f0.1)') 'sum of the array: ', gsum

  call ok(passion_file_close(fout), 'close out')
  call ok(passion_file_close(fin), 'close in')
  call ok(passion_array_free(a), 'array_free')
  call ok(passion_finalize(ctx), 'finalize')
  deallocate(loc)
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
       ierr)
  if (me == 0) write (*, '(a,i0,a)') 'slab_prefetch: ', total, ' errors'
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1

contains

  real(real64) function val(i, j, k)
    integer, intent(in) :: i, j, k
    val = i + 100.0_real64 * j + 10000.0_real64 * k
  end function val

  subroutine ok(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= PASSION_OK) then
       write (*, '(a,i0,a,a,a,a,a,a)') 'rank ', me, ': ', what, ': ', &
            passion_strerror(code), ': ', passion_ctx_errdetail(ctx)
       bad = bad + 1
    end if
  end subroutine ok

end program slab_prefetch
