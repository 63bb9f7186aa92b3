#!/usr/bin/env bash
# bench/traces/make.sh: builds small real MPI programs with SimGrid's smpicc
# and traces them with smpirun -trace-ti (SimGrid's time-independent
# traces), writing the traces msgsim's trace workload replays:
#
#   src/jacobi.c     2D Jacobi: halo exchange with the four neighbours and
#                    an MPI_Allreduce of the residual per step (10 steps, 64x64)
#   src/cg.c         a conjugate-gradient skeleton: neighbour halo exchange
#                    and three MPI_Allreduce dot products per iteration (10)
#   src/ring.c       an MPI_Bcast, a token around a ring (4 laps), an MPI_Bcast
#   src/pingpong.c   the ping-pong of the pingpong workload (2 ranks, 8 and
#                    1024 bytes)
#   src/actions.c    one call of every MPI function a trace records (4 ranks)
#   src/datatypes.c  one message of every predefined datatype (2 ranks): the
#                    datatype numbers and sizes of workloads/trace/datatype.go
#
# at 4, 16 and 64 ranks (RANKS to change). Each trace is DIR/NAME/RANKS/
# with the index NAME.txt and the ranks' files in NAME.txt_files/ (named
# rank-1.txt ... as smpirun numbers them, from 1), the index's paths
# relative to its own directory, so that the directory can be moved.
#
# Compute is traced with --cfg=smpi/host-speed:1Gf: a trace's compute
# amounts are the host's seconds times 10^9, so they vary from one host
# (and one run) to the next; the checked-in traces are one such run. CI
# never runs this script: it replays the checked-in copies.
#
#   bench/traces/make.sh                 every program at 4, 16, 64 ranks
#   RANKS="256 1024" OUT=/tmp/t bench/traces/make.sh jacobi
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here}
ranks=${RANKS:-"4 16 64"}
progs=${*:-"jacobi cg ring pingpong actions datatypes"}
command -v smpicc >/dev/null && command -v smpirun >/dev/null || {
	echo "make.sh: SimGrid's smpicc and smpirun are needed (apt-get install libsimgrid-dev)" >&2
	exit 2
}
work=$(mktemp -d "${TMPDIR:-/tmp}/msgsim-traces.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A flat cluster big enough for every rank count: where the ranks run
# does not change a time-independent trace.
cat >"$work/platform.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="c" prefix="h" suffix="" radical="0-4095" speed="1Gf" bw="1GBps" lat="1us"/>
  </zone>
</platform>
XML
for i in $(seq 0 4095); do echo "h$i"; done >"$work/hosts"

# trace NAME N ARGS...: traces NAME at N ranks into $out/NAME/N/.
trace() {
	local name=$1 n=$2
	shift 2
	local dir="$out/$name/$n"
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$work" && smpirun -np "$n" -platform platform.xml -hostfile hosts -trace-ti \
		--cfg=tracing/filename:"$name.txt" --cfg=smpi/host-speed:1Gf \
		--cfg=smpi/display-timing:no "./$name" "$@" >/dev/null 2>"$name.log") || {
		cat "$work/$name.log" >&2
		exit 1
	}
	mkdir -p "$dir/$name.txt_files"
	local r=1
	while read -r f; do
		cp "$work/$f" "$dir/$name.txt_files/rank-$r.txt"
		echo "$name.txt_files/rank-$r.txt" >>"$dir/$name.txt"
		r=$((r + 1))
	done <"$work/$name.txt"
	rm -rf "$work/$name.txt" "$work/$name.txt_files"
	echo "$dir: $((r - 1)) ranks, $(cat "$dir/$name.txt_files/"*.txt | wc -l) actions"
}

for p in $progs; do
	smpicc -O2 -o "$work/$p" "$here/src/$p.c" 2>/dev/null
	case $p in
	pingpong)
		trace pingpong 2 8 4
		mv "$out/pingpong/2" "$out/pingpong/8"
		trace pingpong 2 1024 4
		mv "$out/pingpong/2" "$out/pingpong/1024"
		;;
	actions) trace actions 4 ;;
	datatypes) trace datatypes 2 ;;
	*) for n in $ranks; do trace "$p" "$n"; done ;;
	esac
done
