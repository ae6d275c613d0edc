! test_f_comm.f90 - the Fortran module's collective calls beyond sections:
! passion_alltoall / passion_alltoallv (every algorithm, mpi_f08 and
! integer datatype handles, default and int64 counts; the received blocks
! checked element by element against the formula every rank used to fill
! its send blocks), passion_section_filetype (the view read back with
! plain MPI-IO and compared with the array's formula), passion_file_
! multicast_all (into a buffer and into a file section, checked against
! the root's values and the untouched cells), passion_part_open/next_all/
! close_all (every piece and its clipped halo checked, an out file
! computed from the halo and compared with a naive loop), passion_ctx_
! last_method, and error cases that must fail on every rank together.
! Sizes and counts come from a seeded generator (the seed is printed).
program test_f_comm
  use, intrinsic :: iso_c_binding, only : c_f_pointer, c_associated
  use, intrinsic :: iso_fortran_env, only : int64, real64
  use mpi_f08
  use passion
  use ftest
  implicit none
  integer(int64), parameter :: seed = 20261125_int64
  type(passion_ctx) :: ctx

  call MPI_Init()
  call rng_seed(seed)
  if (me == 0) write (*, '(a,i0)') 'seed ', seed
  call check_rc(passion_init(MPI_COMM_WORLD, ctx), 0, 'init')
  call t_alltoall()
  call t_alltoallv()
  call t_filetype()
  call t_multicast()
  call t_part()
  call t_last()
  call check_rc(passion_finalize(ctx), 0, 'finalize')
  call finish('test_f_comm')

contains

  integer function v3(i, j, k)
    integer, intent(in) :: i, j, k
    v3 = i * 100000 + j * 1000 + k
  end function v3

  real(real64) function g2(i, j)
    integer(int64), intent(in) :: i, j
    g2 = real(i, real64) + 1000.0_real64 * real(j, real64) + 0.5_real64
  end function g2

  subroutine t_alltoall()
    integer, parameter :: algs(9) = [PASSION_XCHG_DEFAULT, &
         PASSION_XCHG_AUTO, PASSION_XCHG_MPI, PASSION_XCHG_PAIRWISE, &
         PASSION_XCHG_A1, PASSION_XCHG_INDEX, PASSION_XCHG_FOURSTAGE, &
         PASSION_XCHG_FOURSTAGE_NB, PASSION_XCHG_TWOLEVEL]
    integer, allocatable :: sb(:,:), rb(:,:)
    real(real64), allocatable :: sd(:,:), rd(:,:)
    integer :: cnt, ia, i, j, k, rc, bad, rx
    character(len=64) :: what
    do ia = 1, size(algs)
       cnt = rng_int(1, 9)
       rx = 0
       if (algs(ia) == PASSION_XCHG_INDEX .and. np >= 2) rx = rng_int(2, np)
       allocate(sb(cnt, np), rb(cnt, np), sd(cnt, np), rd(cnt, np))
       do j = 1, np
          do k = 1, cnt
             sb(k, j) = v3(me, j - 1, k)
             sd(k, j) = real(v3(me, j - 1, k), real64) / 4
          end do
       end do
       rb = -1
       rd = -1
       write (what, '(a,i0,a,i0)') 'alltoall alg ', algs(ia), ' count ', cnt
       ! mpi_f08 datatype, default-integer count
       call check_rc(passion_alltoall(ctx, sb, rb, cnt, MPI_INTEGER, &
            algs(ia), rx), 0, trim(what) // ' (f08)')
       ! integer handle (`use mpi`), int64 count
       call check_rc(passion_alltoall(ctx, sd, rd, int(cnt, int64), &
            MPI_DOUBLE_PRECISION%MPI_VAL, algs(ia), rx), 0, &
            trim(what) // ' (int handle)')
       bad = 0
       do i = 1, np
          do k = 1, cnt
             if (rb(k, i) /= v3(i - 1, me, k)) bad = bad + 1
             if (rd(k, i) /= real(v3(i - 1, me, k), real64) / 4) bad = bad + 1
          end do
       end do
       call check(bad == 0, trim(what) // ': received blocks')
       deallocate(sb, rb, sd, rd)
    end do
    ! errors, on every rank together: a count that differs by rank, an
    ! unknown algorithm, one rank's non-contiguous buffer
    allocate(sb(8, np), rb(8, np))
    sb = 0
    if (np > 1) then
       rc = passion_alltoall(ctx, sb, rb, 4 + merge(1, 0, me == np - 1), &
            MPI_INTEGER)
       call check_rc(rc, PASSION_EMISMATCH, 'alltoall: counts differ')
    end if
    rc = passion_alltoall(ctx, sb, rb, 2, MPI_INTEGER, 42)
    call check(rc < 0, 'alltoall: unknown algorithm fails')
    if (me == 0) then
       rc = passion_alltoall(ctx, sb(1::2, :), rb, 2, MPI_INTEGER)
    else
       rc = passion_alltoall(ctx, sb, rb, 2, MPI_INTEGER)
    end if
    call check_rc(rc, PASSION_EINVAL, 'alltoall: rank 0 non-contiguous')
    deallocate(sb, rb)
  end subroutine t_alltoall

  subroutine t_alltoallv()
    integer, allocatable :: c(:,:), sc(:), sdp(:), rcn(:), rdp(:)
    integer, allocatable :: sb(:), rb(:)
    integer :: i, j, k, round, bad, rc
    character(len=64) :: what
    do round = 1, 3
       allocate(c(0:np - 1, 0:np - 1))   ! c(i, j): elements i sends j
       do j = 0, np - 1
          do i = 0, np - 1
             c(i, j) = rng_int(0, 6)
          end do
       end do
       allocate(sc(np), sdp(np), rcn(np), rdp(np))
       do j = 1, np
          sc(j) = c(me, j - 1)
          rcn(j) = c(j - 1, me)
       end do
       sdp(1) = 0
       rdp(1) = 3                       ! a gap before the first block
       do j = 2, np
          sdp(j) = sdp(j - 1) + sc(j - 1)
          rdp(j) = rdp(j - 1) + rcn(j - 1)
       end do
       allocate(sb(max(1, sum(sc))), rb(3 + sum(rcn)))
       do j = 1, np
          do k = 1, sc(j)
             sb(sdp(j) + k) = v3(me, j - 1, k)
          end do
       end do
       rb = -7
       write (what, '(a,i0)') 'alltoallv round ', round
       if (round == 2) then
          rc = passion_alltoallv(ctx, sb, int(sc, int64), int(sdp, int64), &
               rb, int(rcn, int64), int(rdp, int64), MPI_INTEGER%MPI_VAL, &
               PASSION_XCHG_PAIRWISE)
       else
          rc = passion_alltoallv(ctx, sb, sc, sdp, rb, rcn, rdp, &
               MPI_INTEGER, merge(PASSION_XCHG_A1, PASSION_XCHG_DEFAULT, &
               round == 3))
       end if
       call check_rc(rc, 0, what)
       bad = count(rb(1:3) /= -7)
       do i = 1, np
          do k = 1, rcn(i)
             if (rb(rdp(i) + k) /= v3(i - 1, me, k)) bad = bad + 1
          end do
       end do
       call check(bad == 0, trim(what) // ': received blocks')
       ! a receive count that is not what the peer sends
       if (np > 1 .and. round == 1) then
          if (me == 0) rcn(np) = rcn(np) + 1
          rc = passion_alltoallv(ctx, sb, sc, sdp, rb, rcn, rdp, MPI_INTEGER)
          call check_rc(rc, PASSION_EMISMATCH, 'alltoallv: counts disagree')
       end if
       ! count arrays of the wrong size, on rank 0 only
       if (round == 1) then
          if (me == 0) then
             rc = passion_alltoallv(ctx, sb, sc(1:np - 1), sdp, rb, rcn, &
                  rdp, MPI_INTEGER)
          else
             rc = passion_alltoallv(ctx, sb, sc, sdp, rb, rcn, rdp, &
                  MPI_INTEGER)
          end if
          call check_rc(rc, PASSION_EINVAL, 'alltoallv: short count array')
       end if
       deallocate(c, sc, sdp, rcn, rdp, sb, rb)
    end do
  end subroutine t_alltoallv

  ! a global file G(i, j) written collectively; random strided sections'
  ! file views read with MPI-IO on MPI_COMM_SELF
  subroutine t_filetype()
    integer(int64) :: n1, n2, lo(2), hi(2), st(2), i, j, disp, nel
    type(passion_array_spec) :: spec
    type(passion_array) :: a
    type(passion_file) :: f
    type(MPI_Datatype) :: ft
    type(MPI_File) :: fh
    real(real64), allocatable :: whole(:,:), got(:), ref(:)
    integer :: round, bad, tsize, m, th
    n1 = rng_int(5, 17)
    n2 = rng_int(4, 11)
    call check_rc(passion_array_spec_init(spec, [n1, n2], 8), 0, 'spec ft')
    spec%placement = PASSION_PLACE_GLOBAL
    call check_rc(passion_array_create(ctx, spec, a), 0, 'create ft')
    call check_rc(passion_file_open(a, 'f_comm_ft.dat', PASSION_MODE_CREATE, &
         f), 0, 'open ft')
    allocate(whole(n1, n2))
    do j = 1, n2
       do i = 1, n1
          whole(i, j) = g2(i, j)
       end do
    end do
    if (me == 0) then
       call check_rc(passion_file_write_all(f, passion_section([1_int64, &
            1_int64], [n1, n2]), whole), 0, 'write ft')
    else
       call check_rc(passion_file_write_all(f, passion_section([1_int64, &
            1_int64], [0_int64, 0_int64]), whole), 0, 'write ft (none)')
    end if
    call check_rc(passion_file_sync(f), 0, 'sync ft')
      call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_File_open(MPI_COMM_SELF, 'f_comm_ft.dat', MPI_MODE_RDONLY, &
         MPI_INFO_NULL, fh)
    do round = 1, 6
       lo = [int(rng_int(1, int(n1)), int64), int(rng_int(1, int(n2)), int64)]
       st = [int(rng_int(1, 3), int64), int(rng_int(1, 3), int64)]
       hi = [int(rng_int(int(lo(1)), int(n1)), int64), &
            int(rng_int(int(lo(2)), int(n2)), int64)]
       if (round == 6) hi(2) = lo(2) - 1          ! empty
       nel = ((hi(1) - lo(1)) / st(1) + 1) * max(0_int64, &
            (hi(2) - lo(2)) / st(2) + 1)
       if (hi(2) < lo(2)) nel = 0
       call check_rc(passion_section_filetype(f, passion_section(lo, hi, &
            st), ft, disp), 0, 'filetype')
       call MPI_Type_size(ft, tsize)
       call check(tsize == nel * 8, 'filetype: size')
       allocate(got(max(1_int64, nel)), ref(max(1_int64, nel)))
       got = -1
       ref = -1
       m = 0
       do j = lo(2), hi(2), st(2)
          do i = lo(1), hi(1), st(1)
             m = m + 1
             ref(m) = g2(i, j)
          end do
       end do
       call MPI_File_set_view(fh, disp, MPI_BYTE, ft, 'native', &
            MPI_INFO_NULL)
       call MPI_File_read(fh, got, int(nel * 8), MPI_BYTE, MPI_STATUS_IGNORE)
       bad = count(got /= ref)
       call check(bad == 0, 'filetype: MPI-IO read of the view')
       call MPI_Type_free(ft)
       deallocate(got, ref)
    end do
    call MPI_File_close(fh)
    ! integer handle; a section of the wrong rank fails (binding check)
    call check_rc(passion_section_filetype(f, passion_section([1_int64, &
         1_int64], [n1, 1_int64]), th, disp), 0, 'filetype (int)')
    call MPI_Type_size_c_int(th, tsize)
    call check(tsize == n1 * 8 .and. disp == 0, 'filetype (int): size')
    call check_rc(passion_section_filetype(f, passion_section([1_int64], &
         [n1]), th, disp), PASSION_EINVAL, 'filetype: wrong rank')
    call check_rc(passion_file_close(f), 0, 'close ft')
    call check_rc(passion_array_free(a), 0, 'free ft')
    deallocate(whole)
  end subroutine t_filetype

  subroutine MPI_Type_size_c_int(h, s)
    integer, intent(inout) :: h
    integer, intent(out) :: s
    type(MPI_Datatype) :: t
    t%MPI_VAL = h
    call MPI_Type_size(t, s)
    call MPI_Type_free(t)
  end subroutine MPI_Type_size_c_int

  ! local files (*, BLOCK) with a ghost column; each rank's interior holds
  ! G(i, global j), ghosts -1
  subroutine t_multicast()
    integer(int64), parameter :: n1 = 6
    integer(int64) :: n2, lo(2), hi(2), rlo(2), rhi(2), sh(2), i, j, c1, c2
    type(passion_array_spec) :: spec
    type(passion_array) :: a
    type(passion_file) :: f
    real(real64), allocatable :: loc(:,:), buf(:,:), big(:,:), back(:,:)
    integer, allocatable :: grp(:)
    integer :: root, bad, k
    logical :: ingrp
    n2 = 3 * np + rng_int(0, 2)
    call check_rc(passion_array_spec_init(spec, [n1, n2], 8), 0, 'spec mc')
    spec%grid(1:2) = [1, np]
    spec%dist(1) = PASSION_DIST_COLLAPSED
    spec%ghost(2) = 1
    call check_rc(passion_array_create(ctx, spec, a), 0, 'create mc')
    call check_rc(passion_file_open(a, 'f_comm_mc.%d.laf', &
         PASSION_MODE_CREATE, f), 0, 'open mc')
    call check_rc(passion_array_local_bounds(a, me, lo, hi), 0, 'bounds')
    call check_rc(passion_array_local_shape(a, me, sh), 0, 'shape')
    allocate(loc(n1, 0:sh(2) + 1))
    loc = -1
    do j = 1, sh(2)
       do i = 1, n1
          loc(i, j) = g2(i, lo(2) + j - 1)
       end do
    end do
    call check_rc(passion_file_write_local(f, loc), 0, 'write_local mc')
    root = np - 1
    call check_rc(passion_array_local_bounds(a, root, rlo, rhi), 0, &
         'root bounds')
    ! rows 2:n1:2 of the root's first two local columns (min its width)
    c2 = min(2_int64, rhi(2) - rlo(2) + 1)
    c1 = (n1 - 2) / 2 + 1
    allocate(buf(c1, c2))
    buf = 0
    call check_rc(passion_file_multicast_all(f, root, passion_section( &
         [2_int64, 1_int64], [n1, c2], [2_int64, 1_int64]), buf=buf), 0, &
         'multicast into buf')
    bad = 0
    do j = 1, c2
       do i = 1, c1
          if (buf(i, j) /= g2(2 + (i - 1) * 2, rlo(2) + j - 1)) bad = bad + 1
       end do
    end do
    call check(bad == 0, 'multicast into buf: values')
    ! placed at (2, 2) of a larger buffer: the rest untouched
    allocate(big(c1 + 2, c2 + 2))
    big = -5
    call check_rc(passion_file_multicast_all(f, root, passion_section( &
         [2_int64, 1_int64], [n1, c2], [2_int64, 1_int64], at=[2_int64, &
         2_int64]), buf=big), 0, 'multicast into buf at')
    bad = 0
    do j = 1, c2 + 2
       do i = 1, c1 + 2
          if (i >= 2 .and. i <= c1 + 1 .and. j >= 2 .and. j <= c2 + 1) then
             if (big(i, j) /= g2(2 + (i - 2) * 2, rlo(2) + j - 2)) &
                  bad = bad + 1
          else if (big(i, j) /= -5) then
             bad = bad + 1
          end if
       end do
    end do
    call check(bad == 0, 'multicast into buf at: values')
    ! the even ranks receive the root's column 1 (rows 1:n1:2... all rows)
    ! into their own last interior column, as a file section
    allocate(grp((np + 1) / 2))
    grp = [(2 * k, k = 0, size(grp) - 1)]
    ingrp = mod(me, 2) == 0
    call check_rc(passion_file_multicast_all(f, root, passion_section( &
         [1_int64, 1_int64], [n1, 1_int64]), dst=passion_section([1_int64, &
         sh(2)], [n1, sh(2)]), group=grp), 0, 'multicast into a section')
    allocate(back(n1, 0:sh(2) + 1))
    back = 0
    call check_rc(passion_file_read_local(f, back), 0, 'read_local mc')
    bad = 0
    do j = 0, sh(2) + 1
       do i = 1, n1
          if (ingrp .and. j == sh(2)) then
             if (back(i, j) /= g2(i, rlo(2))) bad = bad + 1
          else if (back(i, j) /= loc(i, j)) then
             bad = bad + 1
          end if
       end do
    end do
    call check(bad == 0, 'multicast into a section: file cells')
    ! a bad root fails on every rank
    call check(passion_file_multicast_all(f, np, passion_section([1_int64, &
         1_int64], [1_int64, 1_int64]), buf=buf) < 0, 'multicast: bad root')
    call check_rc(passion_file_close(f), 0, 'close mc')
    call check_rc(passion_array_free(a), 0, 'free mc')
    deallocate(loc, buf, big, grp, back)
  end subroutine t_multicast

  ! a global n1 x n2 file over the grid (np, 1); partitions of width w
  ! along dimension 2 with halo 1; out = in(i,j) + in(i-1,j) + in(i,j+1)
  ! (where they exist), checked against a naive loop
  subroutine t_part()
    integer(int64) :: n1, n2, i, j, lb(2), ub(2), vlo(2), vhi(2)
    type(passion_array_spec) :: spec
    type(passion_array) :: a
    type(passion_file) :: f, g
    type(passion_part_iter) :: it
    type(passion_part_opts) :: po
    type(passion_part) :: p
    real(real64), allocatable :: whole(:,:), want(:,:), got(:,:)
    real(real64), pointer :: q(:,:), u(:,:), w(:,:)
    integer :: rc, bad, nseen, k
    n1 = rng_int(np, 3 * np + 4)
    n2 = rng_int(3, 13)
    call check_rc(passion_array_spec_init(spec, [n1, n2], 8), 0, 'spec pt')
    spec%placement = PASSION_PLACE_GLOBAL
    spec%grid(1:2) = [np, 1]
    spec%dist(2) = PASSION_DIST_COLLAPSED
    call check_rc(passion_array_create(ctx, spec, a), 0, 'create pt')
    call check_rc(passion_file_open(a, 'f_comm_pt_in.dat', &
         PASSION_MODE_CREATE, f), 0, 'open pt in')
    call check_rc(passion_file_open(a, 'f_comm_pt_out.dat', &
         PASSION_MODE_CREATE, g), 0, 'open pt out')
    allocate(whole(n1, n2), want(n1, n2), got(n1, n2))
    do j = 1, n2
       do i = 1, n1
          whole(i, j) = g2(i, j)
       end do
    end do
    do j = 1, n2
       do i = 1, n1
          want(i, j) = whole(i, j)
          if (i > 1) want(i, j) = want(i, j) + whole(i - 1, j)
          if (j < n2) want(i, j) = want(i, j) + whole(i, j + 1)
       end do
    end do
    k = merge(1, 0, me == 0)
    call check_rc(passion_file_write_all(f, passion_section([1_int64, &
         1_int64], [k * n1, k * n2]), whole), 0, 'write pt')
    po%width = rng_int(1, 4)
    po%halo = 1
    po%out = g
    call check_rc(passion_part_open(f, it, po), 0, 'part_open')
    nseen = 0
    bad = 0
    do
       rc = passion_part_next_all(it, p)
       if (rc /= 1) exit
       nseen = nseen + 1
       call check(p%index == nseen .and. p%nd == 2, 'part index')
       if (any(p%count(1:2) == 0)) cycle
       call c_f_pointer(p%in, q, p%shape(1:2))
       u(p%lbound(1):, p%lbound(2):) => q
       call c_f_pointer(p%out, q, p%shape(1:2))
       w(p%lbound(1):, p%lbound(2):) => q
       ! the piece and its clipped halo hold the file's values
       vlo = max(1_int64, p%lo(1:2) - 1)
       vhi = min([n1, n2], p%lo(1:2) + p%count(1:2))
       lb = lbound(u, kind=int64)
       ub = ubound(u, kind=int64)
       call check(all(vlo >= lb) .and. all(vhi <= ub), 'part: buffer box')
       do j = vlo(2), vhi(2)
          do i = vlo(1), vhi(1)
             if (u(i, j) /= whole(i, j)) bad = bad + 1
          end do
       end do
       do j = p%lo(2), p%lo(2) + p%count(2) - 1
          do i = p%lo(1), p%lo(1) + p%count(1) - 1
             w(i, j) = u(i, j)
             if (i > 1) w(i, j) = w(i, j) + u(i - 1, j)
             if (j < n2) w(i, j) = w(i, j) + u(i, j + 1)
          end do
       end do
    end do
    call check_rc(rc, 0, 'part_next_all end')
    call check(bad == 0, 'part: in buffers')
    call check(nseen == (n2 + po%width - 1) / po%width, 'part: count')
    call check_rc(passion_part_close_all(it), 0, 'part_close_all')
    call check(.not. c_associated(it%p), 'part_close_all resets')
    got = 0
    call check_rc(passion_file_read(g, passion_section([1_int64, 1_int64], &
         [n1, n2]), got), 0, 'read pt out')
    call check(count(got /= want) == 0, 'part: out file vs naive loop')
    ! a dimension number out of range fails on every rank
    po%dim = 3
    call check_rc(passion_part_open(f, it, po), PASSION_EINVAL, &
         'part_open: bad dim')
    call check_rc(passion_file_close(g), 0, 'close pt out')
    call check_rc(passion_file_close(f), 0, 'close pt in')
    call check_rc(passion_array_free(a), 0, 'free pt')
    deallocate(whole, want, got)
  end subroutine t_part

  ! passion_ctx_last_method on a fresh context: AUTO before any access,
  ! the fixed method given (no prediction), auto resolved with a positive
  ! prediction equal on every rank, an independent sieve read, AUTO after
  ! a failed collective call; every read checked against v(i) = i
  subroutine t_last()
    integer(int64), parameter :: n = 600
    type(passion_ctx) :: c2
    type(passion_array_spec) :: spec
    type(passion_array) :: a
    type(passion_file) :: f
    real(real64), allocatable :: v(:), b(:)
    real(real64) :: pred, pmin, pmax
    integer(int64) :: i, nb
    integer :: m, k, rc
    integer, parameter :: fixed(4) = [PASSION_METHOD_DIRECT, &
         PASSION_METHOD_SIEVE, PASSION_METHOD_ETP_STATIC, &
         PASSION_METHOD_ETP_DYNAMIC]
    character(len=48) :: what
    call check_rc(passion_init(MPI_COMM_WORLD, c2), 0, 'init c2')
    pred = -1
    m = -1
    call check_rc(passion_ctx_last_method(c2, m, pred), 0, 'last_method')
    call check(m == PASSION_METHOD_AUTO .and. pred == 0, &
         'last_method before any access')
    call check_rc(passion_ctx_last_method(passion_ctx(), m), &
         PASSION_EINVAL, 'last_method: no context')
    call check_rc(passion_array_spec_init(spec, [n], 8), 0, 'spec lm')
    spec%placement = PASSION_PLACE_GLOBAL
    call check_rc(passion_array_create(c2, spec, a), 0, 'create lm')
    call check_rc(passion_file_open(a, 'f_comm_lm.dat', PASSION_MODE_CREATE, &
         f), 0, 'open lm')
    allocate(v(n))
    v = [(real(i, real64), i = 1, n)]
    if (me == 0) call check_rc(passion_file_write(f, passion_section( &
         [1_int64], [n]), v, PASSION_METHOD_DIRECT), 0, 'fill lm')
    call check_rc(passion_ctx_last_method(c2, m, pred), 0, 'last_method')
    call check(m == merge(PASSION_METHOD_DIRECT, PASSION_METHOD_AUTO, &
         me == 0) .and. pred == 0, 'last_method after the fill')
    call MPI_Barrier(MPI_COMM_WORLD)
    nb = (n - (me + 1)) / np + 1          ! v(me+1:n:np)
    allocate(b(nb))
    do k = 1, 4
       b = 0
       write (what, '(a,i0)') 'read_all method ', fixed(k)
       call check_rc(passion_file_read_all(f, passion_section([me + 1_int64], &
            [n], [int(np, int64)]), b, fixed(k)), 0, what)
       call check(all(b == v(me + 1::np)), trim(what) // ': values')
       call check_rc(passion_ctx_last_method(c2, m, pred), 0, 'last_method')
       call check(m == fixed(k) .and. pred == 0, trim(what) // ': last')
    end do
    b = 0
    call check_rc(passion_file_read_all(f, passion_section([me + 1_int64], &
         [n], [int(np, int64)]), b), 0, 'read_all auto')
    call check(all(b == v(me + 1::np)), 'read_all auto: values')
    call check_rc(passion_ctx_last_method(c2, m, pred), 0, 'last_method')
    call MPI_Allreduce(pred, pmin, 1, MPI_DOUBLE_PRECISION, MPI_MIN, &
         MPI_COMM_WORLD)
    call MPI_Allreduce(pred, pmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, &
         MPI_COMM_WORLD)
    call check(m >= PASSION_METHOD_DIRECT .and. &
         m <= PASSION_METHOD_ETP_DYNAMIC, 'read_all auto: resolved')
    call check(pred > 0 .and. pmin == pmax, 'read_all auto: predicted, &
         &the same on every rank')
    call check_rc(passion_file_read(f, passion_section([me + 1_int64], &
         [n], [int(np, int64)]), b, PASSION_METHOD_SIEVE), 0, 'read sieve')
    call check_rc(passion_ctx_last_method(c2, m), 0, 'last_method')
    call check(m == PASSION_METHOD_SIEVE, 'independent sieve: last')
    ! out of bounds on the last rank: every rank fails, AUTO afterwards
    i = merge(n + 1, 1_int64, me == np - 1)
    rc = passion_file_read_all(f, passion_section([i], count=[1_int64]), b)
    call check_rc(rc, PASSION_ERANGE, 'read_all out of bounds')
    call check_rc(passion_ctx_last_method(c2, m, pred), 0, 'last_method')
    call check(m == PASSION_METHOD_AUTO .and. pred == 0, &
         'last_method after a failure')
    call check_rc(passion_file_close(f), 0, 'close lm')
    call check_rc(passion_array_free(a), 0, 'free lm')
    call check_rc(passion_finalize(c2), 0, 'finalize c2')
    deallocate(v, b)
  end subroutine t_last

end program test_f_comm
