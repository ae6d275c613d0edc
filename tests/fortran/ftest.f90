! ftest.f90 - what the Fortran tests share: a seeded generator that gives
! every rank the same sequence, and failure counting summed over ranks.
module ftest
  use, intrinsic :: iso_fortran_env, only : int64, error_unit
  use mpi_f08
  implicit none
  private
  public :: rng_seed, rng_int, check, check_rc, finish, fails, me, np

  integer(int64) :: state = 1
  integer :: fails = 0
  integer :: me = 0, np = 1

contains

  subroutine rng_seed(seed)
    integer(int64), intent(in) :: seed
    state = modulo(seed, 2147483646_int64) + 1
    call MPI_Comm_rank(MPI_COMM_WORLD, me)
    call MPI_Comm_size(MPI_COMM_WORLD, np)
  end subroutine rng_seed

  ! uniform in lo..hi: the Park-Miller "minimal standard" generator
  ! (multiplier 48271, modulus 2^31 - 1), no 64-bit overflow (Fortran's
  ! signed overflow is undefined; UBSan checks it)
  integer function rng_int(lo, hi) result(r)
    integer, intent(in) :: lo, hi
    state = modulo(state * 48271_int64, 2147483647_int64)
    r = lo + int(modulo(state, int(hi - lo + 1, int64)))
  end function rng_int

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       fails = fails + 1
       if (fails <= 20) write (error_unit, '(a,i0,a,a)') 'rank ', me, &
            ': FAILED: ', what
    end if
  end subroutine check

  subroutine check_rc(rc, want, what)
    integer, intent(in) :: rc, want
    character(len=*), intent(in) :: what
    character(len=16) :: a, b
    if (rc /= want) then
       write (a, '(i0)') rc
       write (b, '(i0)') want
       call check(.false., what // ': rc ' // trim(a) // ', want ' // trim(b))
    end if
  end subroutine check_rc

  ! failures summed over ranks; exit status 1 if any
  subroutine finish(name)
    character(len=*), intent(in) :: name
    integer :: total
    call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (me == 0) write (*, '(a,a,i0,a,i0)') name, ': failures ', total, &
         ' ranks ', np
    call MPI_Finalize()
    if (total /= 0) stop 1
  end subroutine finish

end module ftest
