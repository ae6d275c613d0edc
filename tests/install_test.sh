#!/bin/sh
# The README's "Install" section, step by step, on a fresh library-only
# build of this source tree (no CUnit needed) installed to a temporary
# prefix P:
#   meson setup B --prefix=P -Dmpi=MPI -Dtests=false -Dbenchmarks=false
#   ninja -C B && meson install -C B
#   P/bin/passion info                       (run path: no LD_LIBRARY_PATH)
#   PKG_CONFIG_PATH=P/lib/pkgconfig pkg-config --cflags --libs passion
#   MPICC ex.c $(pkg-config ...) -lm         (the three C examples)
#   CC=MPICC cmake -S P/share/passion/examples -DCMAKE_PREFIX_PATH=P
# and every example run under MPIEXEC -n 2 (each checks its own result);
# and that the installed library carries no test machinery (nm: no test
# hook's symbol; the test-only options and driver=fault refused).
# usage: install_test.sh SRCDIR MPI(mpich|openmpi|auto) MPICC MPIEXEC [MPIEXEC_ARGS...]
set -eu
src=$1 mpi=$2 mpicc=$3 mpiexec=$4
shift 4
unset LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
: "${HYDRA_LAUNCHER:=fork}"
export HYDRA_LAUNCHER
t=$(mktemp -d "${TMPDIR:-/tmp}/passion-install.XXXXXX")
trap 'rm -rf "$t"' EXIT
P=$t/prefix
run() { echo "+ $*"; "$@"; }
fail() { echo "install test: $*" >&2; exit 1; }

# the build and install (a library-only build: -Dtests/-Dbenchmarks off)
run meson setup "$t/build" "$src" --prefix="$P" -Dmpi="$mpi" \
  -Dtests=false -Dbenchmarks=false >"$t/setup.log" 2>&1 ||
  { cat "$t/setup.log"; fail "meson setup"; }
grep -qi cunit "$t/setup.log" && fail "the library-only build looked for CUnit"
run ninja -C "$t/build" >"$t/ninja.log" 2>&1 || { cat "$t/ninja.log"; fail ninja; }
run meson install -C "$t/build" >"$t/install.log" 2>&1 ||
  { cat "$t/install.log"; fail "meson install"; }
for f in bin/passion include/passion.h lib/pkgconfig/passion.pc \
         lib/cmake/passion/passionConfig.cmake \
         lib/cmake/passion/passionConfigVersion.cmake \
         share/man/man3/passion.3 share/man/man1/passion.1 \
         share/passion/examples/CMakeLists.txt \
         share/passion/examples/section_io.c \
         share/passion/examples/slab_prefetch.c \
         share/passion/examples/stencil.c; do
  [ -e "$P/$f" ] || fail "$P/$f not installed"
done
ls "$P"/lib/libpassion.so.* >/dev/null || fail "no libpassion.so in P/lib"
# the Fortran module, where this build has it, with its page
if ls "$P"/lib/libpassion_fortran.so.* >/dev/null 2>&1; then
  for f in include/passion.mod share/man/man3/passion_fortran.3; do
    [ -e "$P/$f" ] || fail "$P/$f not installed (the Fortran module is)"
  done
fi

# a production build (no -Dtest_hooks=true): the installed library carries
# no test machinery. The shared library exports the public calls only; the
# static one (installed too, every internal symbol in it) holds no simulated
# network, no fault driver or injection, no schedule fuzzer, no entry point
# that only tests call (their names: passion/ net_sim.c, drv_fault.c,
# alloc.c, chaos.c, engine.c, agree.c; collective/ etp_sync.c,
# etp_filecost.c, etp_stream.c, etp_domain.c, exchange/exchange.c,
# exchange/xchg_p2p.c)
so=$(ls "$P"/lib/libpassion.so.*.*.* | head -n 1)
nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' >"$t/exports"
[ -s "$t/exports" ] || fail "nm -D lists nothing in $so"
grep -v '^passion_' "$t/exports" >"$t/not-public" &&
  { cat "$t/not-public"; fail "$so exports symbols outside passion_*"; }
test_only='core_net_sim_[a-z_]*|core_net_cost|core_drv_fault|core_fault_[a-z_]*|core_alloc_fault|core_chaos_[a-z_]*|core_test_[a-z_]*|core_aio_(enters|fixed|ran_inline)|core_wait_(counts|spin|pause)|coll_sync_samples|coll_file_costs|coll_file_streamed|coll_stream_bw|coll_aggregators|coll_xchg_predict|coll_xchg_set_chunk'
for lib in "$so" "$P/lib/libpassion.a"; do
  nm "$lib" 2>/dev/null | grep -E " ($test_only)\$" &&
    fail "$lib carries test machinery (the symbols above)"
done
# its option table refuses the test-only options and the fault driver,
# naming the option and the build option
for o in fault_fail_at=1 sim_net_latency_us=5 driver=fault; do
  PASSION_OPTIONS=$o "$mpiexec" "$@" -n 1 "$P/bin/passion" info \
    >"$t/hooks.txt" 2>&1 && { cat "$t/hooks.txt"; fail "$o accepted"; }
  grep -q "${o%%=*}.*-Dtest_hooks=true" "$t/hooks.txt" ||
    { cat "$t/hooks.txt"; fail "$o: no message naming -Dtest_hooks=true"; }
done

# the installed command runs without LD_LIBRARY_PATH and names its MPI
run "$mpiexec" "$@" -n 1 "$P/bin/passion" info >"$t/info.txt" ||
  { cat "$t/info.txt"; fail "passion info"; }
cat "$t/info.txt"
case $mpi in
  mpich) grep -q '^mpi (built) *MPICH' "$t/info.txt" || fail "info: not MPICH" ;;
  openmpi) grep -q '^mpi (built) *Open MPI' "$t/info.txt" || fail "info: not Open MPI" ;;
esac
grep -q '^mpi (running) ' "$t/info.txt" || fail "info: no running MPI"

# pkg-config: found under P/lib/pkgconfig, names no MPI
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
flags=$(pkg-config --cflags --libs passion) || fail "pkg-config finds no passion"
echo "pkg-config --cflags --libs passion: $flags"
req=$(pkg-config --print-requires --print-requires-private passion)
[ -z "$req" ] || fail "passion.pc requires '$req'"
mkdir "$t/pc" "$t/run"
for ex in section_io slab_prefetch stencil; do
  # shellcheck disable=SC2086
  run "$mpicc" -o "$t/pc/$ex" "$P/share/passion/examples/$ex.c" $flags -lm ||
    fail "pkg-config build of $ex"
  run "$mpiexec" "$@" -n 2 "$t/pc/$ex" "$t/run" || fail "$ex (pkg-config build)"
done

# static: the example linked against the installed libpassion.a, with
# the libraries pkg-config --static adds (Libs.private: liburing, HDF5
# and zlib where built with them), no libpassion.so needed to run
sflags=$(pkg-config --static --cflags --libs passion) ||
  fail "pkg-config --static passion"
echo "pkg-config --static --cflags --libs passion: $sflags"
mkdir "$t/st"
# shellcheck disable=SC2086
run "$mpicc" -o "$t/st/section_io" "$P/share/passion/examples/section_io.c" \
  $(printf '%s\n' $sflags | sed "s|^-lpassion\$|$P/lib/libpassion.a|") -lm ||
  fail "static link of section_io against libpassion.a"
readelf -d "$t/st/section_io" | grep -q 'NEEDED.*libpassion' &&
  fail "the static link still needs libpassion.so"
run "$mpiexec" "$@" -n 2 "$t/st/section_io" "$t/run" ||
  fail "section_io (static libpassion.a)"

# Python (README "From Python"): where a Python with numpy was found the
# package is in P/lib/python3/dist-packages (Debian's interpreter), and
# that interpreter imports it from there with PYTHONPATH and runs an
# example at 2 ranks
if grep -q "Program /usr/bin/python3 (numpy) found: YES" "$t/setup.log"; then
  pp="$P/lib/python3/dist-packages"
  [ -f "$pp/passion/__init__.py" ] || fail "no Python package in $pp"
  where=$(PYTHONPATH=$pp /usr/bin/python3 -c 'import passion; print(passion.__file__)') ||
    fail "PYTHONPATH=$pp /usr/bin/python3 cannot import passion"
  [ "$where" = "$pp/passion/__init__.py" ] ||
    fail "import passion found $where, not the installed package"
  PYTHONPATH=$pp run "$mpiexec" "$@" -n 2 /usr/bin/python3 \
    "$P/share/passion/examples/python/strided.py" "$t/run" ||
    fail "strided.py from the installed package"
fi

# CMake: find_package(passion 1.0) from the prefix, CC = the MPI wrapper
if command -v cmake >/dev/null; then
  CC=$mpicc run cmake -S "$P/share/passion/examples" -B "$t/cm" \
    -DCMAKE_PREFIX_PATH="$P" >"$t/cmake.log" 2>&1 ||
    { cat "$t/cmake.log"; fail "cmake configure"; }
  grep "passion 1" "$t/cmake.log"
  run cmake --build "$t/cm" >"$t/cmbuild.log" 2>&1 ||
    { cat "$t/cmbuild.log"; fail "cmake build"; }
  for ex in section_io slab_prefetch stencil; do
    run "$mpiexec" "$@" -n 2 "$t/cm/$ex" "$t/run" || fail "$ex (CMake build)"
  done
  # passion::passion_static: the same example against libpassion.a
  mkdir "$t/cs"
  printf 'cmake_minimum_required(VERSION 3.13)\nproject(s C)\nfind_package(passion 1.0 REQUIRED)\nadd_executable(section_io %s)\ntarget_link_libraries(section_io PRIVATE passion::passion_static m)\n' \
    "$P/share/passion/examples/section_io.c" >"$t/cs/CMakeLists.txt"
  CC=$mpicc run cmake -S "$t/cs" -B "$t/cs/b" -DCMAKE_PREFIX_PATH="$P" \
    >"$t/cs.log" 2>&1 && run cmake --build "$t/cs/b" >>"$t/cs.log" 2>&1 ||
    { cat "$t/cs.log"; fail "CMake build against passion::passion_static"; }
  readelf -d "$t/cs/b/section_io" | grep -q 'NEEDED.*libpassion' &&
    fail "passion::passion_static still needs libpassion.so"
  run "$mpiexec" "$@" -n 2 "$t/cs/b/section_io" "$t/run" ||
    fail "section_io (CMake, passion::passion_static)"
  # a version the package does not satisfy is refused
  mkdir "$t/v2"
  printf 'cmake_minimum_required(VERSION 3.13)\nproject(v C)\nfind_package(passion 2.0 REQUIRED)\n' \
    >"$t/v2/CMakeLists.txt"
  if CC=$mpicc cmake -S "$t/v2" -B "$t/v2/b" -DCMAKE_PREFIX_PATH="$P" \
       >"$t/v2.log" 2>&1; then
    fail "find_package(passion 2.0) accepted 1.x"
  fi
else
  echo "cmake not installed: CMake part skipped"
  exit 77
fi
echo "install test: ok ($mpi)"
