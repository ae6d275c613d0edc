program using_it        ! mpifort $(pkg-config --cflags --libs passion-fortran)
  use, intrinsic :: iso_fortran_env, only : real64
  use mpi_f08           ! or `use mpi`: passion_init takes its integer handle
  use passion
  implicit none
  integer, parameter :: n1 = 1000, n2 = 600
  type(passion_options) :: opt
  type(passion_ctx) :: ctx
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: f
  real(real64), allocatable :: mine(:,:), back(:)
  integer :: me, np, i, j, bad

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  call ok(passion_options_create(opt))
  call ok(passion_options_set(opt, 'memory_budget', '64M'))
  call ok(passion_init(MPI_COMM_WORLD, ctx, opt))   ! collective
  call ok(passion_options_free(opt))                ! ctx keeps a copy

  call ok(passion_array_spec_init(spec, [n1, n2], 8)) ! column-major
  spec%placement = PASSION_PLACE_GLOBAL              ! one file
  call ok(passion_array_create(ctx, spec, a))
  call ok(passion_file_open(a, 'data.f.dat', PASSION_MODE_CREATE, f))

  ! my columns me+1, me+1+np, ...: the section (1:n1, me+1:n2:np)
  allocate(mine(n1, (n2 - me - 1) / np + 1))
  do j = 1, size(mine, 2)
     do i = 1, n1
        mine(i, j) = i + 1000.0_real64 * (me + 1 + (j - 1) * np)
     end do
  end do
  call ok(passion_file_write_all(f, passion_section([1, me + 1], &
       [n1, n2], [1, np]), mine))
  ! every third row of my first column: (2:n1:3, me+1), read back
  allocate(back(size(mine(2:n1:3, 1))))
  call ok(passion_file_read_all(f, passion_section([2, me + 1], &
       [n1, me + 1], [3, 1]), back))
  bad = count(back /= [(i + 1000.0_real64 * (me + 1), i = 2, n1, 3)])
  print '(a,i0,a,i0,a,i0,a)', 'rank ', me, ': read ', size(back), &
       ' elements, ', bad, ' wrong'
  deallocate(mine, back)

  call ok(passion_file_close(f))                   ! children before parents
  call ok(passion_array_free(a))
  call ok(passion_finalize(ctx))
  call MPI_Finalize()
  if (bad /= 0) error stop 1

contains

  subroutine ok(rc)             ! 0 or a negative PASSION_E* code
    integer, intent(in) :: rc
    if (rc /= PASSION_OK) then
       print '(a,": ",a)', passion_strerror(rc), passion_ctx_errdetail(ctx)
       error stop 1
    end if
  end subroutine ok

end program using_it
