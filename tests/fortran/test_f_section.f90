! test_f_section.f90 - passion_section with integer arguments of mixed
! kinds: literal calls that mix default integers, int64, int32, int16
! and int8 (the generic had one specific per kind, so these did not
! compile), and random sections whose every argument (lo, hi or count,
! stride, at) gets a random kind at run time; each read back from a global
! file, collectively and independently, and compared element by element
! with a naive loop over the reference array. A real argument gives an
! invalid section (PASSION_EINVAL). Seeded; the seed is printed on
! failure.
program test_f_section
  use, intrinsic :: iso_fortran_env, only : int8, int16, int32, int64, &
       real64
  use mpi_f08
  use passion
  use ftest
  implicit none
  integer, parameter :: n1 = 11, n2 = 7
  integer(int64), parameter :: seed = 20261129_int64
  real(real64), allocatable :: ref(:,:,:), buf(:,:,:)
  type(passion_ctx) :: ctx
  type(passion_array_spec) :: spec
  type(passion_array) :: a
  type(passion_file) :: f
  integer :: n3, i, j, k, round, lo(3), hi(3), st(3), at(3)
  character(len=80) :: what

  call MPI_Init()
  call rng_seed(seed)
  n3 = 2 * np + 1
  allocate(ref(n1, n2, n3))
  do k = 1, n3
     do j = 1, n2
        do i = 1, n1
           ref(i, j, k) = i + 100.0_real64 * j + 10000.0_real64 * k
        end do
     end do
  end do
  call check_rc(passion_init(MPI_COMM_WORLD, ctx), 0, 'init')
  call check_rc(passion_array_spec_init(spec, [n1, n2, n3], 8), 0, 'spec')
  spec%placement = PASSION_PLACE_GLOBAL
  call check_rc(passion_array_create(ctx, spec, a), 0, 'array_create')
  call check_rc(passion_file_open(a, 'fsection.dat', PASSION_MODE_CREATE, &
       f), 0, 'file_open')
  ! each rank writes its planes me+1, me+1+np, ...: lo default, hi int64,
  ! stride int16
  lo = [1, 1, me + 1]
  buf = ref(:, :, me + 1::np)
  call check_rc(passion_file_write_all(f, passion_section(lo, &
       int([n1, n2, n3], int64), int([1, 1, np], int16)), buf), 0, &
       'write_all (default, int64, int16)')
  deallocate(buf)

  call literal_calls()
  do round = 1, 40
     call random_round(round)
  end do
  call invalid_calls()

  call check_rc(passion_file_close(f), 0, 'file_close')
  call check_rc(passion_array_free(a), 0, 'array_free')
  call check_rc(passion_finalize(ctx), 0, 'finalize')
  if (fails > 0) write (*, '(a,i0,a,i0)') 'seed ', seed, ' rank ', me
  deallocate(ref)
  call finish('test_f_section')

contains

  ! elements per dimension of lo:hi:st
  function counts(l, h, s) result(n)
    integer, intent(in) :: l(3), h(3), s(3)
    integer :: n(3)
    n = max(0, (h - l) / s + 1)
    where (h < l) n = 0
  end function counts

  ! buf against the naive loop over ref: buf(p, q, r) holds
  ! ref(l1 + (p-1)*s1, ...), p counted from at
  subroutine compare(b, l, s, n, off, w)
    real(real64), intent(in) :: b(:,:,:)
    integer, intent(in) :: l(3), s(3), n(3), off(3)
    character(len=*), intent(in) :: w
    integer :: p, q, r, bad
    bad = 0
    do r = 1, n(3)
       do q = 1, n(2)
          do p = 1, n(1)
             if (b(off(1) + p - 1, off(2) + q - 1, off(3) + r - 1) /= &
                  ref(l(1) + (p - 1) * s(1), l(2) + (q - 1) * s(2), &
                  l(3) + (r - 1) * s(3))) bad = bad + 1
          end do
       end do
    end do
    call check(bad == 0, w // ': data')
  end subroutine compare

  ! the same section (2:n1:3, 1:n2, me+1:n3:np) written in mixed kinds
  ! at compile time, collective reads
  subroutine literal_calls()
    integer :: n(3)
    integer(int64) :: l8(3), c8(3)
    integer(int16) :: s2(3)
    integer(int8) :: a1(3)
    lo = [2, 1, me + 1]
    hi = [n1, n2, n3]
    st = [3, 1, np]
    n = counts(lo, hi, st)
    l8 = lo
    c8 = n
    s2 = int(st, int16)
    a1 = int([2, 1, 3], int8)
    allocate(buf(n(1), n(2), n(3)))
    buf = -1
    call check_rc(passion_file_read_all(f, passion_section(lo, &
         int(hi, int64), st), buf), 0, 'lo default, hi int64')
    call compare(buf, lo, st, n, [1, 1, 1], 'lo default, hi int64')
    buf = -1
    call check_rc(passion_file_read_all(f, passion_section(l8, hi, s2), &
         buf), 0, 'lo int64, hi default, stride int16')
    call compare(buf, lo, st, n, [1, 1, 1], 'lo int64, hi default, st int16')
    buf = -1
    call check_rc(passion_file_read_all(f, passion_section(int(lo, int32), &
         count=c8, stride=int(st, int64)), buf), 0, &
         'lo int32, count int64, stride int64')
    call compare(buf, lo, st, n, [1, 1, 1], 'lo int32, count int64')
    buf = -1
    call check_rc(passion_file_read_all(f, passion_section([2_int64, 1_int64, &
         int(me + 1, int64)], count=n, stride=s2), buf), 0, &
         'literal int64 lo, count default, stride int16')
    call compare(buf, lo, st, n, [1, 1, 1], 'literal lo, count default')
    deallocate(buf)
    allocate(buf(n(1) + 2, n(2) + 1, n(3) + 3))
    buf = -7
    call check_rc(passion_file_read(f, passion_section(l8, hi, st, at=a1), &
         buf), 0, 'lo int64, hi/stride default, at int8')
    call compare(buf, lo, st, n, [2, 1, 3], 'at int8')
    call check(count(buf /= -7) == product(n), 'at int8: outside untouched')
    deallocate(buf)
  end subroutine literal_calls

  ! x as an integer array of kind code kc (1: int8, 2: int16, 3: default,
  ! 4: int64) in an unlimited polymorphic array
  subroutine as_kind(x, kc, out)
    integer, intent(in) :: x(:), kc
    class(*), allocatable, intent(out) :: out(:)
    select case (kc)
    case (1)
       allocate(out, source=int(x, int8))
    case (2)
       allocate(out, source=int(x, int16))
    case (3)
       allocate(out, source=x)
    case default
       allocate(out, source=int(x, int64))
    end select
  end subroutine as_kind

  ! a random section (every rank its own), each argument of a random kind,
  ! read collectively (by hi or by count) or independently at an offset
  subroutine random_round(round)
    integer, intent(in) :: round
    class(*), allocatable :: xl(:), xh(:), xs(:), xa(:)
    integer :: d, q, n(3), kl, kh, ks, ka, form
    integer :: ext(3), l(3), h(3), s(3), k4(4)
    ext = [n1, n2, n3]
    ! every rank draws every rank's section (the generator stays the same
    ! on all ranks, so they make the same collective calls) and keeps its
    ! own
    do q = 0, np - 1
       do d = 1, 3
          l(d) = rng_int(1, ext(d))
          h(d) = rng_int(l(d) - 1, ext(d))
          s(d) = rng_int(1, 4)
       end do
       do d = 1, 4
          k4(d) = rng_int(1, 4)
       end do
       if (q == me) then
          lo = l; hi = h; st = s
          kl = k4(1); kh = k4(2); ks = k4(3); ka = k4(4)
       end if
    end do
    form = rng_int(1, 3)
    n = counts(lo, hi, st)
    call as_kind(lo, kl, xl)
    call as_kind(st, ks, xs)
    write (what, '(a,i0,a,4i2,a,i0)') 'round ', round, ' kinds', kl, kh, &
         ks, ka, ' form ', form
    if (form == 1) then
       call as_kind(hi, kh, xh)
       allocate(buf(n(1), n(2), n(3)))
       buf = -1
       call check_rc(passion_file_read_all(f, passion_section(xl, xh, xs), &
            buf), 0, trim(what))
       call compare(buf, lo, st, n, [1, 1, 1], trim(what))
    else if (form == 2) then
       call as_kind(n, kh, xh)
       allocate(buf(n(1), n(2), n(3)))
       buf = -1
       call check_rc(passion_file_read_all(f, passion_section(xl, &
            count=xh, stride=xs), buf), 0, trim(what))
       call compare(buf, lo, st, n, [1, 1, 1], trim(what))
    else
       call as_kind(hi, kh, xh)
       at = [rng_int(1, 3), rng_int(1, 3), rng_int(1, 3)]
       call as_kind(at, ka, xa)
       allocate(buf(n(1) + at(1) + 1, n(2) + at(2), n(3) + at(3) + 2))
       buf = -7
       call check_rc(passion_file_read(f, passion_section(xl, xh, xs, &
            at=xa), buf), 0, trim(what))
       call compare(buf, lo, st, n, at, trim(what))
       call check(count(buf /= -7) == product(n), trim(what) // &
            ': outside untouched')
    end if
    deallocate(buf)
  end subroutine random_round

  ! not integers, or sizes that differ: an invalid section, refused
  subroutine invalid_calls()
    real(real64) :: b(4)
    call check_rc(passion_file_read(f, passion_section([1.0, 1.0, 1.0], &
         [2, 2, 1]), b), PASSION_EINVAL, 'real lo')
    call check_rc(passion_file_read(f, passion_section([1, 1, 1], &
         [2_int64, 2_int64, 1_int64], stride=[1.0_real64, 1.0_real64, &
         1.0_real64]), b), PASSION_EINVAL, 'real stride')
    call check_rc(passion_file_read(f, passion_section([1, 1, 1], &
         [2_int16, 2_int16]), b), PASSION_EINVAL, 'hi of 2 for rank 3')
  end subroutine invalid_calls

end program test_f_section
