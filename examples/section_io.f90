! section_io.f90 - strided sections of a global array file from Fortran.
!
! A 2-D array of doubles (N1 x N2, column-major: Fortran's own order) in
! one global file. Every rank writes the columns j = rank+1, rank+1+P,
! ... (the section 1:N1, rank+1:N2:P) with one collective call, then reads
! back a strided block (rows 2:N1:3, columns me+1:N2:2) collectively and
! one corner independently into the middle of a larger array; rank 0
! finally reads the whole file with plain Fortran stream I/O. Everything
! is checked against the formula a(i, j) = i + 1000 j.
!
! Build: mpifort.mpich section_io.f90 $(pkg-config --cflags --libs passion-fortran)
! Run:   mpiexec.mpich -n 3 ./section_io [DIR]
program section_io
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi_f08
  use passion
  implicit none
  integer, parameter :: N1 = 300, N2 = 200
  type(passion_ctx) :: ctx
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: f
  type(passion_counters) :: cnt
  real(real64), allocatable :: mine(:,:), blk(:,:), pad(:,:), disk(:,:)
  character(len=4096) :: dir
  integer :: me, np, i, j, ncol, bad, total, u

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  dir = '.'
  if (command_argument_count() > 0) call get_command_argument(1, dir)
  bad = 0

  call ok(passion_init(MPI_COMM_WORLD, ctx), 'passion_init')
  call ok(passion_array_spec_init(spec, [N1, N2], 8), 'spec')
  spec%placement = PASSION_PLACE_GLOBAL          ! one file, column-major
  call ok(passion_array_create(ctx, spec, a), 'array_create')
  call ok(passion_file_open(a, trim(dir) // '/section_io_f.dat', &
       PASSION_MODE_CREATE, f), 'file_open')

  ! my columns: me+1, me+1+np, ... (1:N1, me+1:N2:np)
  ncol = (N2 - (me + 1)) / np + 1
  allocate(mine(N1, ncol))
  do j = 1, ncol
     do i = 1, N1
        mine(i, j) = val(i, me + 1 + (j - 1) * np)
     end do
  end do
  call ok(passion_file_write_all(f, passion_section([1, me + 1], &
       [N1, N2], [1, np]), mine), 'write_all')

  ! a strided block: rows 2:N1:3, columns me+1:N2:2 (collective)
  allocate(blk(size(mine(2:N1:3, 1)), (N2 - (me + 1)) / 2 + 1))
  call ok(passion_file_read_all(f, passion_section([2, me + 1], [N1, N2], &
       [3, 2]), blk), 'read_all')
  do j = 1, size(blk, 2)
     do i = 1, size(blk, 1)
        if (blk(i, j) /= val(2 + (i - 1) * 3, me + 1 + (j - 1) * 2)) &
             bad = bad + 1
     end do
  end do

  ! independent: the 4 x 5 corner at (7, 11) into pad(3:6, 2:6)
  allocate(pad(8, 8))
  pad = -1
  call ok(passion_file_read(f, passion_section([7, 11], count=[4, 5], &
       at=[3, 2]), pad), 'read')
  do j = 1, 8
     do i = 1, 8
        if (i >= 3 .and. i <= 6 .and. j >= 2 .and. j <= 6) then
           if (pad(i, j) /= val(7 + i - 3, 11 + j - 2)) bad = bad + 1
        else if (pad(i, j) /= -1) then
           bad = bad + 1
        end if
     end do
  end do

  call ok(passion_counters_get(ctx, cnt), 'counters_get')
  write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'rank ', me, ': wrote ', &
       size(mine), ' and read ', size(blk) + 20, ' elements; file bytes read ', &
       cnt%bytes_read, ', written ', cnt%bytes_written
  call ok(passion_file_close(f), 'file_close')
  call ok(passion_array_free(a), 'array_free')
  call ok(passion_finalize(ctx), 'finalize')

  ! the file is a plain column-major array: Fortran reads it as one
  if (me == 0) then
     allocate(disk(N1, N2))
     open (newunit=u, file=trim(dir) // '/section_io_f.dat', &
          access='stream', form='unformatted', status='old', action='read')
     read (u) disk
     close (u)
     do j = 1, N2
        do i = 1, N1
           if (disk(i, j) /= val(i, j)) bad = bad + 1
        end do
     end do
  end if

  deallocate(mine, blk, pad)
  if (allocated(disk)) deallocate(disk)
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) write (*, '(a,i0,a)') 'section_io: ', total, &
       ' wrong elements'
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  real(real64) function val(i, j)
    integer, intent(in) :: i, j
    val = i + 1000.0_real64 * j
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

end program section_io
