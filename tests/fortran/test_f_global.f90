! test_f_global.f90 - the Fortran module on a global file: strided
! sections written and read, collectively (every method) and
! independently, checked element by element against a naive Fortran
! reference array that every rank keeps; at the end rank 0 reads the
! whole file with Fortran stream I/O and compares it with the reference
! (column-major, no header). A last round writes and reads with
! passion_file_{write,read}_begin and passion_request_wait. Seeded; the
! seed is printed on failure.
program test_f_global
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi_f08
  use passion
  use ftest
  implicit none
  integer, parameter :: n1 = 13, n2 = 9
  integer(int64), parameter :: seed = 20261123_int64
  integer, parameter :: methods(5) = [PASSION_METHOD_AUTO, &
       PASSION_METHOD_DIRECT, PASSION_METHOD_SIEVE, &
       PASSION_METHOD_ETP_STATIC, PASSION_METHOD_ETP_DYNAMIC]
  real(real64), allocatable :: ref(:,:,:), buf(:,:,:), big(:,:,:), disk(:,:,:)
  real(real64), allocatable, target, asynchronous :: abuf(:,:,:)
  type(passion_request) :: req
  type(passion_ctx) :: ctx
  type(passion_options) :: opt
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: f
  type(passion_section) :: s
  integer :: n3, round, mi, q, lo(3), hi(3), st(3), c(3), at(3), m
  integer :: mylo(3), myhi(3), myst(3), u
  character(len=64) :: what

  call MPI_Init()
  call rng_seed(seed)
  n3 = 3 * np + 2
  allocate(ref(n1, n2, n3))
  ref = 0

  call check_rc(passion_options_create(opt), 0, 'options_create')
  call check_rc(passion_options_set(opt, 'memory_budget', '1M'), 0, &
       'options_set')
  call check_rc(passion_init(MPI_COMM_WORLD, ctx, opt), 0, 'init (mpi_f08)')
  call check_rc(passion_options_free(opt), 0, 'options_free')

  call check_rc(passion_array_spec_init(spec, [n1, n2, n3], 8), 0, 'spec')
  call check(spec%storage == PASSION_COL_MAJOR, 'default column-major')
  spec%placement = PASSION_PLACE_GLOBAL
  call check_rc(passion_array_create(ctx, spec, a), 0, 'array_create')
  call check_rc(passion_file_open(a, 'fglobal.dat', PASSION_MODE_CREATE, f), &
       0, 'file_open')

  do round = 1, 10
     m = methods(mod(round - 1, 5) + 1)
     mi = methods(mod(round - 1, 3) + 1)   ! independent: auto, direct, sieve
     call draw_write(round)
     buf = vals(mylo, myhi, myst, round)   ! (allocated by the assignment)
     if (mod(round, 2) == 0) then
        s = passion_section(mylo, myhi, myst)
     else   ! the same section by count, in 64-bit integers
        s = passion_section(int(mylo, int64), &
             count=int(counts(mylo, myhi, myst), int64), &
             stride=int(myst, int64))
     end if
     write (what, '(a,i0,a,i0)') 'write round ', round, ' method ', m
     if (mod(round, 3) == 0) then
        ! independent writes, one rank at a time: a sieved write rewrites
        ! the holes of its extent (other ranks' planes), so concurrent
        ! independent writes with interleaved extents may lose updates
        do q = 0, np - 1
           if (q == me) call check_rc(passion_file_write(f, s, buf, mi), 0, &
                trim(what))
           call MPI_Barrier(MPI_COMM_WORLD)
        end do
     else
        call check_rc(passion_file_write_all(f, s, buf, m), 0, trim(what))
     end if
     deallocate(buf)

     call draw_read()
     c = counts(mylo, myhi, myst)
     allocate(buf(c(1), c(2), c(3)))
     buf = -1
     write (what, '(a,i0,a,i0)') 'read_all round ', round, ' method ', m
     call check_rc(passion_file_read_all(f, passion_section(mylo, myhi, &
          myst), buf, m), 0, trim(what))
     if (product(c) > 0) call check(all(buf == ref(mylo(1):myhi(1):myst(1), &
          mylo(2):myhi(2):myst(2), mylo(3):myhi(3):myst(3))), &
          trim(what) // ': data')
     ! independent read into a larger buffer at an offset ("at"); the
     ! cells around it must stay untouched
     at = [2, 3, 1]
     allocate(big(c(1) + 3, c(2) + 4, c(3) + 1))
     big = -7
     write (what, '(a,i0)') 'read at round ', round
     call check_rc(passion_file_read(f, passion_section(mylo, myhi, myst, &
          at=at), big, mi), 0, trim(what))
     call check_at(big, at, c, buf, trim(what))
     deallocate(buf, big)
     ! the next round's independent writes must not race this round's reads
     call MPI_Barrier(MPI_COMM_WORLD)
  end do

  ! ---- asynchronous: the writes one rank at a time as above, then a
  ! read at an offset in a larger buffer
  call draw_write(11)
  abuf = vals(mylo, myhi, myst, 11)
  do q = 0, np - 1
     if (q == me) then
        call check_rc(passion_file_write_begin(f, passion_section(mylo, &
             myhi, myst), abuf, req), 0, 'write_begin')
        call check_rc(passion_request_wait(req), 0, 'write_begin: wait')
     end if
     call MPI_Barrier(MPI_COMM_WORLD)
  end do
  deallocate(abuf)
  call draw_read()
  c = counts(mylo, myhi, myst)
  at = [3, 1, 2]
  allocate(abuf(c(1) + 2, c(2) + 1, c(3) + 3))
  abuf = -7
  call check_rc(passion_file_read_begin(f, passion_section(mylo, myhi, &
       myst, at=at), abuf, req), 0, 'read_begin')
  call check_rc(passion_request_wait(req), 0, 'read_begin: wait')
  call check_at(abuf, at, c, ref(mylo(1):myhi(1):myst(1), &
       mylo(2):myhi(2):myst(2), mylo(3):myhi(3):myst(3)), 'read_begin')
  deallocate(abuf)
  call MPI_Barrier(MPI_COMM_WORLD)

  call check_rc(passion_file_close(f), 0, 'file_close')
  call check_rc(passion_array_free(a), 0, 'array_free')
  call check_rc(passion_finalize(ctx), 0, 'finalize')

  ! the file itself, read naively: column-major doubles, no header
  if (me == 0) then
     allocate(disk(n1, n2, n3))
     open (newunit=u, file='fglobal.dat', access='stream', &
          form='unformatted', status='old', action='read')
     read (u) disk
     close (u)
     call check(all(disk == ref), 'file contents (stream read) = reference')
  end if
  deallocate(ref)
  if (allocated(disk)) deallocate(disk)
  if (fails > 0) write (*, '(a,i0)') 'seed ', seed
  call finish('test_f_global')

contains

  ! every rank writes a section (mylo:myhi:myst, values of round);
  ! ranks' sections are disjoint (their planes along dimension 3 are
  ! congruent to the rank mod np); ref gets what every write stores
  subroutine draw_write(round)
    integer, intent(in) :: round
    do q = 0, np - 1
       call random_section(lo, hi, st)
       lo(3) = q + 1 + np * rng_int(0, 1)
       st(3) = np * rng_int(1, 2)
       hi(3) = rng_int(lo(3) - 1, n3)
       c = counts(lo, hi, st)
       if (q == me) then
          mylo = lo
          myhi = hi
          myst = st
       end if
       if (product(c) > 0) ref(lo(1):hi(1):st(1), lo(2):hi(2):st(2), &
            lo(3):hi(3):st(3)) = vals(lo, hi, st, round)
    end do
  end subroutine draw_write

  ! every rank reads a section of its own (any overlap): every rank
  ! draws all, keeps its own in mylo:myhi:myst
  subroutine draw_read()
    do q = 0, np - 1
       call random_section(lo, hi, st)
       lo(3) = rng_int(1, n3)
       st(3) = rng_int(1, 3)
       hi(3) = rng_int(lo(3), n3)
       if (q == me) then
          mylo = lo
          myhi = hi
          myst = st
       end if
    end do
  end subroutine draw_read

  ! b holds want (counts c) at offset at; the cells around it must have
  ! stayed -7
  subroutine check_at(b, at, c, want, what)
    real(real64), intent(inout) :: b(:,:,:)
    integer, intent(in) :: at(3), c(3)
    real(real64), intent(in) :: want(:,:,:)
    character(len=*), intent(in) :: what
    if (product(c) > 0) then
       call check(all(b(at(1):at(1) + c(1) - 1, at(2):at(2) + c(2) - 1, &
            at(3):at(3) + c(3) - 1) == want), what // ': data')
       b(at(1):at(1) + c(1) - 1, at(2):at(2) + c(2) - 1, &
            at(3):at(3) + c(3) - 1) = -7
    end if
    call check(all(b == -7), what // ': outside the box')
  end subroutine check_at

  subroutine random_section(lo, hi, st)
    integer, intent(out) :: lo(3), hi(3), st(3)
    lo(1) = rng_int(1, n1)
    st(1) = rng_int(1, 3)
    hi(1) = rng_int(lo(1) - 1, n1)   ! lo - 1: an empty section
    lo(2) = rng_int(1, n2)
    st(2) = rng_int(1, 4)
    hi(2) = rng_int(lo(2), n2)
    lo(3) = 1
    st(3) = 1
    hi(3) = 1
  end subroutine random_section

  pure function counts(lo, hi, st) result(c)
    integer, intent(in) :: lo(3), hi(3), st(3)
    integer :: c(3)
    c = max(0, (hi - lo) / st + 1)
    where (hi < lo) c = 0
  end function counts

  ! the values a round writes at global indices lo:hi:st
  pure function vals(lo, hi, st, round) result(v)
    integer, intent(in) :: lo(3), hi(3), st(3), round
    real(real64), allocatable :: v(:,:,:)
    integer :: i, j, k, c(3)
    c = counts(lo, hi, st)
    allocate(v(c(1), c(2), c(3)))
    do k = 1, c(3)
       do j = 1, c(2)
          do i = 1, c(1)
             v(i, j, k) = (lo(1) + (i - 1) * st(1)) + &
                  100 * (lo(2) + (j - 1) * st(2)) + &
                  10000 * (lo(3) + (k - 1) * st(3)) + 1000000 * round
          end do
       end do
    end do
  end function vals

end program test_f_global
