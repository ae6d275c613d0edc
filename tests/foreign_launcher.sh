#!/bin/sh
# A passion started by the launcher of the other MPI (each process then
# an MPI job of one rank) must refuse to run: passion_init fails on every
# process with a detail naming the launcher to use, and `passion info`
# exits non-zero with that message. The same probe under this build's own
# launcher, and alone (a singleton), is accepted. Skipped (77) where the
# other MPI's launcher is not installed.
# usage: foreign_launcher.sh MPI_IMPL PROBE PASSION OWN_MPIEXEC
impl=$1 probe=$2 passion=$3 own=$4
case $impl in
mpich)
    other=$(command -v mpiexec.openmpi) || exit 77
    set -- --oversubscribe
    want='start it with mpiexec.mpich' ;;
openmpi)
    other=$(command -v mpiexec.mpich) || exit 77
    export HYDRA_LAUNCHER=fork
    set --
    want='start it with mpiexec.openmpi' ;;
*)
    exit 77 ;;
esac
# Open MPI's processes (under either launcher, or alone) run as root here
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail=0
# what, expected count, pattern, output: occurrences, not lines (the
# launcher forwards each process's output as it comes, and two processes'
# lines can arrive cut and merged: "acceptedaccepted")
check() {
    n=$(printf '%s\n' "$4" | grep -o -- "$3" | wc -l)
    if [ "$n" -ne "$2" ]; then
        echo "FAIL: $1: $n times '$3', want $2; output:"
        printf '%s\n' "$4"
        fail=1
    else
        echo "ok: $1"
    fi
}
out=$(timeout 120 "$other" "$@" -n 2 "$probe" 2>&1)
check "probe under $other -n 2: refused on both processes" 2 \
    "refused: " "$out"
check "probe under $other -n 2: both name the launcher" 2 "$want" "$out"
printf '%s\n' "$out" | grep '^refused' | head -1
out=$(timeout 120 "$other" "$@" -n 2 "$passion" info 2>&1)
st=$?
[ $st -ne 0 ] || { echo "FAIL: passion info exited 0 under $other"; fail=1; }
check "passion info under $other -n 2: the message on both" 2 \
    "passion init: " "$out"
check "passion info under $other -n 2: both name the launcher" 2 "$want" \
    "$out"
out=$(timeout 120 "$own" -n 2 "$probe" 2>&1)
check "probe under this MPI's launcher: accepted" 2 'accepted' "$out"
out=$(timeout 120 "$probe" 2>&1)
check "probe alone (singleton): accepted" 1 'accepted' "$out"
exit $fail
