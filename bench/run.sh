#!/usr/bin/env bash
# bench/run.sh: msgsim and SimGrid SMPI side by side on the same workload,
# on this machine: a pairwise all-to-all of 64 KiB messages at 128 and 256
# PEs (1,024 with BENCH_PES) and a 2-rank ping-pong.
#
#   SimGrid: MPI (bench/alltoall.c) on two platforms: a flat cluster
#     (bench/platform.xml: a private 300 MB/s link per PE, an unlimited
#     backbone) and a 3D torus of the T3D's shape (two PEs per router node,
#     the nodes in the most nearly cubic torus, as msgsim's T3D builds it;
#     300 MB/s, 20 ns links; the node's 167 ns interface as its loopback).
#   msgsim: the T3D with MPICH (ch_t3d) and with synchronous ACLMPL, each on
#     the unit and on the flow network model (machine param network_model).
#
# Runs are interleaved (every configuration once, then again, BENCH_REPS
# times, 3 by default) and the minimum CPU time (user + system) of each is
# kept: the fairer figure on a machine shared with other jobs. Not part of
# CI: nothing depends on it.
#
#   bench/run.sh                         128 and 256 PEs
#   BENCH_PES="128 256 1024" bench/run.sh
#   BENCH_BYTES=65536 BENCH_REPS=3
#
# bench/run.sh traces compares trace replays instead: the 2D Jacobi of
# bench/traces/src/jacobi.c traced by smpirun -trace-ti at 64, 256 and
# 1,024 ranks (BENCH_TRACE_PES; bench/traces/make.sh, the checked-in trace
# at 64), replayed by SimGrid (smpireplaymain) on the T3D torus platform
# below and by msgsim on the T3D with MPICH (ch_t3d) on the unit and on
# the flow network model, compute charged at 150 Mflop/s by both (the
# platform's host speed, the trace workload's flops_per_second).
# BENCH_TRACE_COMPUTE=0 leaves compute out of both (SimGrid's hosts at
# 10^15 flop/s, msgsim's compute_scale 0): the communication alone.
#
# Installs what it needs: SimGrid's smpicc/smpirun from Debian's
# libsimgrid-dev when missing (apt-get, with sudo only when not root) and
# GNU time when /usr/bin/time is missing. msgsim is built from this checkout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
pes=${BENCH_PES:-"128 256"}
bytes=${BENCH_BYTES:-65536}
reps=${BENCH_REPS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/msgsim-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

apt_install() {
	local sudo=""
	if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
command -v smpicc >/dev/null && command -v smpirun >/dev/null || apt_install libsimgrid-dev
[ -x /usr/bin/time ] || apt_install time
command -v go >/dev/null || { echo "bench: go is needed to build msgsim" >&2; exit 2; }

echo "building: simrun (go build), alltoall and pingpong (smpicc -O2)"
(cd "$root" && go build -o "$work/simrun" ./cmd/simrun)
smpicc -O2 -o "$work/alltoall" "$here/alltoall.c" 2>/dev/null
smpicc -O2 -o "$work/pingpong" "$here/pingpong.c" 2>/dev/null
for i in $(seq 0 2047); do echo "pe$i"; done >"$work/hosts"

# shape3d N: the most nearly cubic x >= y >= z with x*y*z = N (net.Shape3D).
shape3d() {
	awk -v n="$1" 'BEGIN { bx = n; by = 1; bz = 1
		for (z = 1; z * z * z <= n; z++) { if (n % z) continue; r = n / z
			for (y = z; y * y <= r; y++) { if (r % y) continue; x = r / y
				if (x - z < bx - bz) { bx = x; by = y; bz = z } } }
		printf "%d,%d,%d\n", bx, by, bz }'
}

# torus P: a SimGrid platform of the T3D's torus for P PEs (two per node)
# and its hostfile (each node's host twice: its two PEs).
torus() {
	local p=$1 nodes=$((($1 + 1) / 2))
	cat >"$work/torus-$p.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="t3d" prefix="node" suffix="" radical="0-$((nodes - 1))" speed="150Mf"
             bw="300MBps" lat="20ns" topology="TORUS" topo_parameters="$(shape3d "$nodes")"
             loopback_bw="300MBps" loopback_lat="167ns"/>
  </zone>
</platform>
XML
	for i in $(seq 0 $((nodes - 1))); do echo "node$i"; echo "node$i"; done | head -n "$p" >"$work/torus-$p.hosts"
}

# measure NAME CMD...: runs CMD under /usr/bin/time -v, keeps its output in
# $work/NAME.out and appends "cpu_s wall_s peak_MB" to $work/NAME.runs.
measure() {
	local name=$1
	shift
	nice -n 0 /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>&1 || {
		echo "bench: $name failed:" >&2
		tail -20 "$work/$name.out" >&2
		exit 1
	}
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; w = s }
		/User time|System time/ { c += $2 }
		/Maximum resident set size/ { m = $2 / 1024 }
		END { printf "%.2f %.2f %.0f\n", c, w, m }' "$work/$name.time" >>"$work/$name.runs"
}

# best NAME: the run of least CPU time, "cpu wall MB".
best() { sort -n "$work/$1.runs" | head -1; }

smpi=(smpirun --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf)
mpich="{name: mpich, params: {device: ch_t3d}}"
aclmpl="{name: aclmpl}"
scenario() { # NAME PES MODEL STACK -> file
	sed -e "s/@PES@/$2/g" -e "s/@BYTES@/$bytes/g" -e "s/@MODEL@/$3/g" -e "s/@STACK@/$4/g" "$here/$1.yaml" >"$work/$1-$2-$3.yaml"
	echo "$work/$1-$2-$3.yaml"
}

if [ "${1:-}" = traces ]; then
	tpes=${BENCH_TRACE_PES:-"64 256 1024"}
	configs=()
	scale=1
	for p in $tpes; do
		torus "$p"
		if [ "${BENCH_TRACE_COMPUTE:-1}" = 0 ]; then
			sed -i 's/speed="150Mf"/speed="1000000Gf"/' "$work/torus-$p.xml"
			scale=0
		fi
		tdir="$root/bench/traces/jacobi/$p"
		if [ ! -f "$tdir/jacobi.txt" ]; then
			echo "tracing jacobi at $p ranks (bench/traces/make.sh)" >&2
			RANKS=$p OUT="$work/traces" "$here/traces/make.sh" jacobi >&2
			tdir="$work/traces/jacobi/$p"
		fi
		echo "$tdir" >"$work/tdir-$p"
		for m in units flow; do
			cat >"$work/jacobi-$p-$m.yaml" <<YAML
name: jacobi-$p-$m
machine: {name: t3d, params: {network_model: $m}}
stack: {name: mpich, params: {device: ch_t3d}}
workload: {name: trace, params: {index: $tdir/jacobi.txt, compute_scale: $scale}}
YAML
		done
		configs+=("sg-replay-$p" "ms-units-$p" "ms-flow-$p")
	done
	for r in $(seq 1 "$reps"); do
		echo "round $r of $reps: ${configs[*]}" >&2
		for c in "${configs[@]}"; do
			p=${c##*-}
			case $c in
			sg-replay-*) (cd "$(cat "$work/tdir-$p")" && measure "$c" smpirun --cfg=smpi/display-timing:yes -platform "$work/torus-$p.xml" \
				-hostfile "$work/torus-$p.hosts" -np "$p" -replay jacobi.txt /usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain) ;;
			ms-units-*) measure "$c" "$work/simrun" run "$work/jacobi-$p-units.yaml" --out "$work/$c" -j 1 ;;
			ms-flow-*) measure "$c" "$work/simrun" run "$work/jacobi-$p-flow.yaml" --out "$work/$c" -j 1 ;;
			esac
		done
	done
	echo
	echo "2D Jacobi trace replayed: CPU (user + system) and wall seconds, the minimum of $reps"
	echo "interleaved runs; peak RSS in MB; predicted run time in ms."
	printf "%-16s %8s %8s %7s %10s %s\n" "run" "cpu" "wall" "MB" "predicted" "vs SimGrid (cpu, predicted)"
	for p in $tpes; do
		read -r tg _ _ < <(best "sg-replay-$p")
		sgt=$(sed -n 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' "$work/sg-replay-$p.out" | head -1)
		sgt=$(awk -v s="$sgt" 'BEGIN { printf "%.3f", s * 1000 }')
		for c in "sg-replay-$p" "ms-units-$p" "ms-flow-$p"; do
			read -r cpu wall mb < <(best "$c")
			pred=$sgt
			ratio=""
			if [ "${c:0:2}" = ms ]; then
				pred=$(awk -F, '$4 == "predicted_time_us" { printf "%.3f", $5 / 1000 }' "$work/$c/results.csv")
				ratio=$(awk -v a="$cpu" -v g="$tg" -v m="$pred" -v s="$sgt" 'BEGIN { printf "cpu %.2fx, predicted %.2fx", a / g, m / s }')
			fi
			printf "%-16s %8.2f %8.2f %7.0f %10s %s\n" "$c" "$cpu" "$wall" "$mb" "$pred" "$ratio"
		done
	done
	echo "SimGrid: $(smpirun -version 2>/dev/null | head -1 || true); replay on the T3D torus platform"
	echo "msgsim: $(cd "$root" && git describe --always --dirty 2>/dev/null || echo unknown), T3D, MPICH ch_t3d"
	echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi

configs=()
for p in $pes; do
	torus "$p"
	configs+=("sg-flat-$p" "sg-torus-$p" "ms-units-mpi-$p" "ms-flow-mpi-$p" "ms-units-sync-$p" "ms-flow-sync-$p")
done
configs+=(sg-pingpong ms-pingpong)

run_config() {
	local c=$1 p=${1##*-}
	case $c in
	sg-flat-*) measure "$c" "${smpi[@]}" -platform "$here/platform.xml" -hostfile "$work/hosts" -np "$p" "$work/alltoall" "$bytes" ;;
	sg-torus-*) measure "$c" "${smpi[@]}" -platform "$work/torus-$p.xml" -hostfile "$work/torus-$p.hosts" -np "$p" "$work/alltoall" "$bytes" ;;
	ms-units-mpi-*) measure "$c" "$work/simrun" run "$(scenario alltoall "$p" units "$mpich")" --out "$work/$c" -j 1 ;;
	ms-flow-mpi-*) measure "$c" "$work/simrun" run "$(scenario alltoall "$p" flow "$mpich")" --out "$work/$c" -j 1 ;;
	ms-units-sync-*) measure "$c" "$work/simrun" run "$(scenario alltoall "$p" units "$aclmpl")" --out "$work/$c" -j 1 ;;
	ms-flow-sync-*) measure "$c" "$work/simrun" run "$(scenario alltoall "$p" flow "$aclmpl")" --out "$work/$c" -j 1 ;;
	sg-pingpong) measure "$c" "${smpi[@]}" -platform "$here/platform.xml" -hostfile "$work/hosts" -np 2 "$work/pingpong" ;;
	ms-pingpong) measure "$c" "$work/simrun" run "$(sed 's/@MODEL@/units/' "$here/pingpong.yaml" >"$work/pp.yaml"; echo "$work/pp.yaml")" --out "$work/$c" ;;
	esac
}

for r in $(seq 1 "$reps"); do
	echo "round $r of $reps: ${configs[*]}" >&2
	for c in "${configs[@]}"; do run_config "$c"; done
done

# simulated time of the exchange: SimGrid prints it; msgsim's is
# (P-1) x bytes / per-PE throughput.
simtime() {
	local c=$1 p=${1##*-}
	case $c in
	sg-*) sed -n 's/.*simulated_s=\([0-9.]*\).*/\1/p' "$work/$c.out" | cut -c1-9 ;;
	ms-*) awk -v p="$p" -v n="$bytes" -F, '$4 == "throughput_MBps" { printf "%.6f", (p - 1) * n / ($5 * 1e6) }' "$work/$c/results.csv" ;;
	esac
}

echo
echo "CPU (user + system) and wall time in seconds, the minimum of $reps interleaved runs;"
echo "peak RSS in MB; simulated time of the exchange in seconds."
printf "%-22s %8s %8s %7s %12s %s\n" "run" "cpu" "wall" "MB" "simulated" "cpu ratios"
for p in $pes; do
	read -r tu _ _ < <(best "ms-units-mpi-$p")
	read -r tg _ _ < <(best "sg-torus-$p")
	read -r su _ _ < <(best "ms-units-sync-$p")
	for c in "sg-flat-$p" "sg-torus-$p" "ms-units-mpi-$p" "ms-flow-mpi-$p" "ms-units-sync-$p" "ms-flow-sync-$p"; do
		read -r cpu wall mb < <(best "$c")
		ratio=""
		case $c in
		ms-flow-mpi-*) ratio=$(awk -v a="$cpu" -v u="$tu" -v g="$tg" 'BEGIN { printf "flow/units %.2f, flow/SimGrid torus %.2f", a / u, a / g }') ;;
		ms-flow-sync-*) ratio=$(awk -v a="$cpu" -v u="$su" -v g="$tg" 'BEGIN { printf "flow/units %.2f, flow/SimGrid torus %.2f", a / u, a / g }') ;;
		ms-units-mpi-*) ratio=$(awk -v a="$cpu" -v g="$tg" 'BEGIN { printf "units/SimGrid torus %.2f", a / g }') ;;
		esac
		grep -q "corrupted=0" "$work/$c.out" 2>/dev/null || [ "${c:0:2}" = ms ] || { echo "bench: $c reported corruption" >&2; exit 1; }
		printf "%-22s %8.2f %8.2f %7.0f %12s %s\n" "$c" "$cpu" "$wall" "$mb" "$(simtime "$c")" "$ratio"
	done
done
for c in sg-pingpong ms-pingpong; do
	read -r cpu wall mb < <(best "$c")
	printf "%-22s %8.2f %8.2f %7.0f\n" "$c" "$cpu" "$wall" "$mb"
done
echo "ping-pong half round trip, microseconds (SimGrid flat | msgsim units):"
paste <(sed -n 's/.*bytes=\([0-9]*\) half_round_trip_us=\([0-9.]*\).*/\1 \2/p' "$work/sg-pingpong.out") \
	<(sed -n 's/^[^,]*,bytes,[0-9]*,latency_us,\([0-9.e+-]*\),.*/\1/p' "$work/ms-pingpong/results.csv") |
	awk '{ printf "  %8d B  %10.3f | %10.3f\n", $1, $2, $3 }'
echo "SimGrid: $(smpirun -version 2>/dev/null | head -1 || true); simulate-computation off"
echo "msgsim: $(cd "$root" && git describe --always --dirty 2>/dev/null || echo unknown), T3D"
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
