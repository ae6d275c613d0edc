! test_f_open.f90 - the Fortran module's calls beyond sections: files
! opened by their own header (passion_open), element kinds and byte orders
! (spec%kind, spec%endian), and the queries passion_mpi_build,
! passion_array_owner / passion_array_global_index, passion_section_plan,
! passion_engine_get, passion_file_rename, passion_array_spec_read.
! The references are naive: rank 0 writes .npy files byte by byte with
! Fortran stream I/O (a big-endian int32 Fortran-order file, a native
! float64 C-order file), reads raw files back decoding big-endian by
! hand, and ownership is the BLOCK formula. Seeded; the seed is printed
! on failure.
program test_f_open
  use, intrinsic :: iso_fortran_env, only : int32, int64, real64
  use mpi_f08
  use passion
  use ftest
  implicit none
  integer, parameter :: n1 = 11, n2 = 7          ! fo.npy, Fortran order
  integer, parameter :: m1 = 5, m2 = 4, m3 = 6   ! co.npy, C order (m1,m2,m3)
  integer(int64), parameter :: seed = 20261124_int64
  integer(int32) :: ri(n1, n2)
  real(real64) :: rg(m3, m2, m1)                  ! co.npy in Fortran's view
  integer(int32), allocatable :: ib(:,:)
  real(real64), allocatable :: rb(:,:,:)
  type(passion_ctx) :: ctx
  type(passion_array) :: a
  type(passion_file) :: f
  type(passion_array_spec) :: sp, lay
  type(passion_section) :: s
  type(passion_plan_info) :: pi
  integer :: i, j, k, round, lo(3), hi(3), st(3), rc, eng, nfiles
  integer(int64) :: glo(3), ghi(3), b, gi(3), li(3), back(3)
  integer :: owner
  character(len=256) :: pat
  logical :: ex
  character(len=:), allocatable :: mb

  call MPI_Init()
  call rng_seed(seed)
  if (me == 0) write (*, '(a,i0)') 'seed ', seed
  call check_rc(passion_init(MPI_COMM_WORLD, ctx), 0, 'init')

  ! ---- the MPI passion was built with names the running one's vendor
  mb = passion_mpi_build()
  call check(index(mb, 'MPICH') == 1 .or. index(mb, 'Open MPI') == 1 .or. &
       index(mb, 'MPI ') == 1, 'passion_mpi_build: ' // mb)
  call check(same_vendor(mb), 'passion_mpi_build vs MPI_Get_library_version')
  deallocate(mb)   ! a main program's variables are never freed (LSan)

  ! ---- the reference files, written by rank 0 byte by byte
  do j = 1, n2
     do i = 1, n1
        ri(i, j) = int(i * 1000 + j * 7 - 3000, int32)   ! negatives too
     end do
  end do
  do k = 1, m1
     do j = 1, m2
        do i = 1, m3
           rg(i, j, k) = real(k * 100 + j * 10 + i, real64) + 0.25_real64
        end do
     end do
  end do
  if (me == 0) then
     call write_npy_i4_big('fo.npy', ri)
     call write_npy_f8_c('co.npy', rg)
  end if
  call MPI_Barrier(MPI_COMM_WORLD)

  ! ---- a Fortran-order big-endian int32 file, by its header
  rc = passion_open(ctx, 'fo.npy', PASSION_MODE_RDWR, a, f)
  call check_rc(rc, 0, 'passion_open fo.npy: ' // passion_ctx_errdetail(ctx))
  call check_rc(passion_array_get_spec(a, sp), 0, 'get_spec fo')
  call check(sp%ndims == 2 .and. all(sp%shape(1:2) == [n1, n2]), 'fo shape')
  call check(sp%kind == PASSION_KIND_INT .and. sp%elem_size == 4, 'fo kind')
  call check(sp%endian == PASSION_ENDIAN_BIG, 'fo endian')
  call check(sp%storage == PASSION_COL_MAJOR, 'fo storage')
  call check(sp%placement == PASSION_PLACE_GLOBAL, 'fo placement')
  do round = 1, 8
     call rand_sec2(lo, hi, st)
     allocate(ib(cnt(lo(1), hi(1), st(1)), cnt(lo(2), hi(2), st(2))))
     ib = -1
     s = passion_section(lo(1:2), hi(1:2), st(1:2))
     call check_rc(passion_file_read_all(f, s, ib), 0, 'read_all fo')
     if (size(ib) > 0) call check(all(ib == ri(lo(1):hi(1):st(1), &
          lo(2):hi(2):st(2))), 'read_all fo values')
     deallocate(ib)
  end do
  ! every rank writes its own column j = me+1, me+1+np, ...: -(i + 10 j)
  do j = me + 1, n2, np
     ri(:, j) = int(-(/ (i, i = 1, n1) /) - 10 * j, int32)
  end do
  s = passion_section([1, me + 1], [n1, n2], [1, np])
  allocate(ib(n1, cnt(me + 1, n2, np)))
  ib = ri(:, me + 1:n2:np)
  call check_rc(passion_file_write_all(f, s, ib), 0, 'write_all fo')
  deallocate(ib)
  call check_rc(passion_file_close(f), 0, 'close fo')
  call check_rc(passion_array_free(a), 0, 'free fo')
  do j = 1, n2   ! the reference: every rank's columns
     ri(:, j) = int(-(/ (i, i = 1, n1) /) - 10 * j, int32)
  end do
  if (me == 0) call check(read_i4_big('fo.npy', 128, ri), &
       'fo.npy bytes after write_all (big-endian, decoded by hand)')

  ! ---- a C-order native float64 file: seen with dimensions reversed
  rc = passion_open(ctx, 'co.npy', PASSION_MODE_RDONLY, a, f)
  call check_rc(rc, 0, 'passion_open co.npy')
  call check_rc(passion_array_get_spec(a, sp), 0, 'get_spec co')
  call check(sp%ndims == 3 .and. all(sp%shape(1:3) == [m3, m2, m1]), &
       'co shape (reversed)')
  call check(sp%kind == PASSION_KIND_FLOAT .and. sp%elem_size == 8, 'co kind')
  call check(sp%storage == PASSION_ROW_MAJOR, 'co storage')
  do round = 1, 6
     call rand_sec3(lo, hi, st)
     allocate(rb(cnt(lo(1), hi(1), st(1)), cnt(lo(2), hi(2), st(2)), &
          cnt(lo(3), hi(3), st(3))))
     rb = -1
     s = passion_section(lo, hi, st)
     call check_rc(passion_file_read(f, s, rb), 0, 'read co')
     if (size(rb) > 0) call check(all(rb == rg(lo(1):hi(1):st(1), &
          lo(2):hi(2):st(2), lo(3):hi(3):st(3))), 'read co values')
     deallocate(rb)
  end do
  ! the cost model: a whole fastest dimension (Fortran's first) is one
  ! run per (j, k); every other element of it is one run per element
  s = passion_section([1, 1, 1], [m3, m2, 2], [1, 1, 1])
  call check_rc(passion_section_plan(f, s, .false., pi), 0, 'plan')
  call check(pi%runs == int(m2 * 2, int64) .or. pi%runs == 1_int64, &
       'plan runs (contiguous box)')
  s = passion_section([1, 1, 1], [m3, m2, 2], [2, 1, 1])
  call check_rc(passion_section_plan(f, s, .false., pi), 0, 'plan 2')
  call check(pi%runs == int(cnt(1, m3, 2) * m2 * 2, int64), 'plan runs')
  call check(pi%method == PASSION_METHOD_DIRECT .or. pi%method == &
       PASSION_METHOD_SIEVE, 'plan method')
  call check(pi%requests >= 1 .and. pi%bytes_file >= 8 * pi%runs, &
       'plan requests/bytes')
  call check_rc(passion_file_close(f), 0, 'close co')
  call check_rc(passion_array_free(a), 0, 'free co')

  ! ---- a layout in Fortran's view: BLOCK over the ranks along Fortran
  ! dimension 3 (the file's slowest, C's dimension 0)
  lay = passion_array_spec()
  lay%grid(3) = np
  lay%placement = PASSION_PLACE_GLOBAL
  rc = passion_open(ctx, 'co.npy', PASSION_MODE_RDONLY, a, f, lay)
  call check_rc(rc, 0, 'passion_open co.npy with layout')
  b = (m1 + np - 1) / np
  call check_rc(passion_array_local_bounds(a, me, glo, ghi), 0, 'bounds')
  if (me * b < m1) then
     call check(all(glo == [1_int64, 1_int64, me * b + 1]) .and. &
          all(ghi == [int(m3, int64), int(m2, int64), &
          min((me + 1) * b, int(m1, int64))]), 'layout bounds (BLOCK)')
  end if
  do round = 1, 10   ! owner and local index against the BLOCK formula
     gi = [rng_int(1, m3), rng_int(1, m2), rng_int(1, m1)]
     call check_rc(passion_array_owner(a, gi, owner, li), 0, 'owner')
     call check(owner == int((gi(3) - 1) / b), 'owner rank')
     call check(all(li == [gi(1), gi(2), gi(3) - owner * b]), 'owner lidx')
     call check_rc(passion_array_global_index(a, owner, li, back), 0, &
          'global_index')
     call check(all(back == gi), 'global_index inverts owner')
  end do
  call check_rc(passion_file_close(f), 0, 'close co layout')
  call check_rc(passion_array_free(a), 0, 'free co layout')
  ! a layout that states another type or shape: EFORMAT on every rank
  lay = passion_array_spec()
  lay%elem_size = 8
  lay%kind = PASSION_KIND_INT
  call check_rc(passion_open(ctx, 'co.npy', PASSION_MODE_RDONLY, a, f, lay), &
       PASSION_EFORMAT, 'layout kind int64 on float64')
  call check(index(passion_ctx_errdetail(ctx), 'co.npy') > 0, 'detail names')
  lay = passion_array_spec()
  call check_rc(passion_array_spec_init(lay, [m3, m2, m1 + 1], 8), 0, 'li')
  lay%storage = PASSION_ROW_MAJOR
  call check_rc(passion_open(ctx, 'co.npy', PASSION_MODE_RDONLY, a, f, lay), &
       PASSION_EFORMAT, 'layout shape')

  ! ---- errors of passion_open
  call check_rc(passion_open(ctx, 'none.npy', PASSION_MODE_RDONLY, a, f), &
       PASSION_ENOENT, 'open missing')
  call check_rc(passion_open(ctx, 'fo.npy', PASSION_MODE_CREATE, a, f), &
       PASSION_EINVAL, 'open with create mode')

  ! ---- create with a kind and byte order: raw big-endian int32
  call check_rc(passion_array_spec_init(sp, [n1, n2], 4), 0, 'spec raw')
  call check(sp%kind == PASSION_KIND_FLOAT, 'natural kind of 4 bytes')
  sp%kind = PASSION_KIND_INT
  sp%endian = PASSION_ENDIAN_BIG
  sp%placement = PASSION_PLACE_GLOBAL
  call check_rc(passion_array_create(ctx, sp, a), 0, 'create int32 BE')
  call check_rc(passion_array_get_spec(a, lay), 0, 'get_spec raw')
  call check(lay%kind == PASSION_KIND_INT .and. lay%endian == &
       PASSION_ENDIAN_BIG, 'get_spec keeps kind and endian')
  call check_rc(passion_file_open(a, 'be.raw', PASSION_MODE_CREATE, f), 0, &
       'open be.raw')
  s = passion_section([1, me + 1], [n1, n2], [1, np])
  allocate(ib(n1, cnt(me + 1, n2, np)))
  ib = ri(:, me + 1:n2:np)
  call check_rc(passion_file_write_all(f, s, ib), 0, 'write be.raw')
  deallocate(ib)
  ! rename the finished file (collective), then check it on disk
  call check_rc(passion_file_rename(f, 'be2.raw'), 0, 'rename')
  call check(index(passion_file_path(f), 'be2.raw') > 0, 'path renamed')
  call check_rc(passion_file_close(f), 0, 'close be')
  call check_rc(passion_array_free(a), 0, 'free be')
  if (me == 0) then
     inquire (file='be.raw', exist=ex)
     call check(.not. ex, 'old name gone')
     call check(read_i4_big('be2.raw', 0, ri), 'be2.raw big-endian bytes')
  end if

  ! ---- a local set's description, read without opening the set
  call check_rc(passion_array_spec_init(sp, [n1, 3 * np], 8), 0, 'spec lset')
  sp%grid(2) = np
  sp%ghost(1) = 1
  call check_rc(passion_array_create(ctx, sp, a), 0, 'create lset')
  call check_rc(passion_file_open(a, 'ls.%d.laf', PASSION_MODE_CREATE, f), &
       0, 'open lset')
  call check_rc(passion_file_close(f), 0, 'close lset')
  call check_rc(passion_array_free(a), 0, 'free lset')
  call check_rc(passion_array_spec_read(ctx, 'ls.%d.laf', lay, nfiles, pat), &
       0, 'spec_read')
  call check(nfiles == np, 'spec_read nfiles')
  call check(lay%ndims == 2 .and. all(lay%shape(1:2) == [n1, 3 * np]) .and. &
       lay%grid(2) == np .and. lay%ghost(1) == 1 .and. lay%ghost(2) == 0, &
       'spec_read spec (Fortran order)')
  call check(index(pat, 'ls.%d.laf') > 0, 'spec_read pattern ' // trim(pat))
  call check_rc(passion_array_spec_read(ctx, 'nols.%d.laf', lay, nfiles, &
       pat), PASSION_ENOENT, 'spec_read missing')

  ! ---- the engine
  call check_rc(passion_engine_get(ctx, eng), 0, 'engine_get')
  call check(any(passion_engine_name(eng) == ['uring ', 'thread']), &
       'engine name')

  call check_rc(passion_finalize(ctx), 0, 'finalize')
  if (fails > 0) write (*, '(a,i0)') 'failed with seed ', seed
  call finish('test_f_open')

contains

  integer function cnt(l, h, s)
    integer, intent(in) :: l, h, s
    cnt = max(0, (h - l) / s + 1)
    if (h < l) cnt = 0
  end function cnt

  subroutine rand_sec2(l, h, s)
    integer, intent(out) :: l(3), h(3), s(3)
    l = 1; h = 1; s = 1
    l(1) = rng_int(1, n1); s(1) = rng_int(1, 4); h(1) = rng_int(l(1) - 1, n1)
    l(2) = rng_int(1, n2); s(2) = rng_int(1, 3); h(2) = rng_int(l(2), n2)
  end subroutine rand_sec2

  subroutine rand_sec3(l, h, s)
    integer, intent(out) :: l(3), h(3), s(3)
    integer :: d, n(3)
    n = [m3, m2, m1]
    do d = 1, 3
       l(d) = rng_int(1, n(d))
       s(d) = rng_int(1, 3)
       h(d) = rng_int(l(d), n(d))
    end do
  end subroutine rand_sec3

  ! the first word of MPI_Get_library_version's string in passion's name
  logical function same_vendor(built)
    character(len=*), intent(in) :: built
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: v
    integer :: l
    call MPI_Get_library_version(v, l)
    if (index(built, 'Open MPI') == 1) then
       same_vendor = index(v, 'Open MPI') > 0
    else if (index(built, 'MPICH') == 1) then
       same_vendor = index(v, 'MPICH') > 0
    else
       same_vendor = .true.
    end if
  end function same_vendor

  ! a .npy header of 128 bytes for descr and shape text
  subroutine npy_header(u, descr, fortran, shape_txt)
    integer, intent(in) :: u
    character(len=*), intent(in) :: descr, shape_txt
    logical, intent(in) :: fortran
    character(len=118) :: d
    character(len=5) :: tf
    tf = 'False'
    if (fortran) tf = 'True'
    d = "{'descr': '" // descr // "', 'fortran_order': " // trim(tf) // &
         ", 'shape': " // shape_txt // ", }"
    d(118:118) = achar(10)
    write (u) char(147) // 'NUMPY' // achar(1) // achar(0) // achar(118) &
         // achar(0) // d
  end subroutine npy_header

  subroutine write_npy_i4_big(path, v)
    character(len=*), intent(in) :: path
    integer(int32), intent(in) :: v(:,:)
    integer :: u, i, j
    character(len=32) :: sh
    write (sh, '(a,i0,a,i0,a)') '(', size(v, 1), ', ', size(v, 2), ')'
    open (newunit=u, file=path, access='stream', form='unformatted', &
         status='replace')
    call npy_header(u, '>i4', .true., trim(sh))
    do j = 1, size(v, 2)
       do i = 1, size(v, 1)
          write (u) be4(v(i, j))
       end do
    end do
    close (u)
  end subroutine write_npy_i4_big

  ! rg(m3, m2, m1) in Fortran order is C-order data of shape (m1, m2, m3)
  subroutine write_npy_f8_c(path, v)
    character(len=*), intent(in) :: path
    real(real64), intent(in) :: v(:,:,:)
    integer :: u
    character(len=48) :: sh
    character(len=3) :: descr
    descr = '<f8'
    if (ichar(transfer(1_int32, 'a')) /= 1) descr = '>f8'
    write (sh, '(a,i0,a,i0,a,i0,a)') '(', size(v, 3), ', ', size(v, 2), &
         ', ', size(v, 1), ')'
    open (newunit=u, file=path, access='stream', form='unformatted', &
         status='replace')
    call npy_header(u, descr, .false., trim(sh))
    write (u) v
    close (u)
  end subroutine write_npy_f8_c

  ! x as 4 big-endian bytes (two's complement), by arithmetic
  function be4(x) result(c)
    integer(int32), intent(in) :: x
    character(len=4) :: c
    integer(int64) :: w
    integer :: k
    w = modulo(int(x, int64), 4294967296_int64)
    do k = 4, 1, -1
       c(k:k) = achar(int(modulo(w, 256_int64)))
       w = w / 256
    end do
  end function be4

  ! whether the file's int32 big-endian data after off bytes equal v
  logical function read_i4_big(path, off, v) result(ok)
    character(len=*), intent(in) :: path
    integer, intent(in) :: off
    integer(int32), intent(in) :: v(:,:)
    character(len=4) :: c
    integer :: u, i, j
    ok = .true.
    open (newunit=u, file=path, access='stream', form='unformatted', &
         status='old', action='read')
    do j = 1, size(v, 2)
       do i = 1, size(v, 1)
          read (u, pos=off + 1 + 4 * ((j - 1) * size(v, 1) + (i - 1))) c
          if (c /= be4(v(i, j))) ok = .false.
       end do
    end do
    close (u)
  end function read_i4_big

end program test_f_open
