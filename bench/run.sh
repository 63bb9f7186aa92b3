#!/usr/bin/env bash
# bench/run.sh: msgsim and SimGrid SMPI side by side on the same workloads,
# on this machine, one after the other: a pairwise MPI all-to-all of 64 KiB
# messages at 128, 256 and 1024 PEs and a 2-rank ping-pong. Prints wall time,
# peak memory (RSS) and simulated time of both, with msgsim/SimGrid ratios.
# Not part of CI: nothing depends on it.
#
#   bench/run.sh                        every point (the 1024-PE ones are long)
#   BENCH_PES="128 256" bench/run.sh    only these all-to-all sizes
#   BENCH_BYTES=65536                   all-to-all message size
#
# Installs what it needs: SimGrid's smpicc/smpirun from Debian's
# libsimgrid-dev when missing (apt-get, with sudo only when not root) and
# GNU time when /usr/bin/time is missing. msgsim is built from this checkout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
pes=${BENCH_PES:-"128 256 1024"}
bytes=${BENCH_BYTES:-65536}
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

# measure NAME CMD...: runs CMD under /usr/bin/time -v, keeps its output in
# $work/NAME.out and prints "wall_s cpu_s peak_MB" (cpu: user + system, the
# fairer figure on a machine shared with other jobs).
measure() {
	local name=$1
	shift
	/usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>&1 || {
		echo "bench: $name failed:" >&2
		tail -20 "$work/$name.out" >&2
		exit 1
	}
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; w = s }
		/User time|System time/ { c += $2 }
		/Maximum resident set size/ { m = $2 / 1024 }
		END { printf "%.2f %.2f %.0f\n", w, c, m }' "$work/$name.time"
}

smpi=(smpirun -platform "$here/platform.xml" -hostfile "$work/hosts"
	--cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf)

# msgsim's side: the built-in alltoall and pingpong workloads on the T3D
# with MPICH (ch_t3d), written as scenario files (bench/*.yaml with the
# point substituted).
scenario() { sed -e "s/@PES@/$2/g" -e "s/@BYTES@/$bytes/g" "$here/$1.yaml" >"$work/$1-$2.yaml"; echo "$work/$1-$2.yaml"; }

row() { # label sg_wall sg_cpu sg_mb sg_sim ms_wall ms_cpu ms_mb ms_sim
	awk -v l="$1" -v sw="$2" -v sc="$3" -v sm="$4" -v ss="$5" -v mw="$6" -v mc="$7" -v mm="$8" -v ms="$9" 'BEGIN {
		printf "%-22s %8.2f %8.2f %6.2fx %8.2f %8.2f %6.2fx %6.0f %6.0f %5.2fx %10s %10s\n", l, sw, mw, mw / sw, sc, mc, mc / sc, sm, mm, mm / sm, ss, ms }'
}

echo
echo "SG: SimGrid SMPI; ms: msgsim; x: msgsim/SimGrid (below 1: msgsim better). wall and"
echo "cpu (user + system) in seconds, peak RSS in MB, simulated time of the exchange."
printf "%-22s %8s %8s %7s %8s %8s %7s %6s %6s %6s %10s %10s\n" "workload" "SG wall" "ms wall" "x" "SG cpu" "ms cpu" "x" "SG MB" "ms MB" "x" "SG sim" "ms sim"
events=()
for p in $pes; do
	read -r sw sc sm < <(measure "sg-a2a-$p" "${smpi[@]}" -np "$p" "$work/alltoall" "$bytes")
	ss=$(sed -n 's/.*simulated_s=\([0-9.]*\).*/\1/p' "$work/sg-a2a-$p.out")
	grep -q "corrupted=0" "$work/sg-a2a-$p.out" || { echo "bench: SimGrid all-to-all reported corruption" >&2; exit 1; }
	read -r mw mc mm < <(measure "ms-a2a-$p" "$work/simrun" run "$(scenario alltoall "$p")" --out "$work/ms-a2a-$p")
	mt=$(sed -n 's/.*throughput_MBps,\([0-9.e+-]*\),.*/\1/p' "$work/ms-a2a-$p/results.csv")
	msim=$(awk -v p="$p" -v n="$bytes" -v t="$mt" 'BEGIN { printf "%.6f", (p - 1) * n / (t * 1e6) }')
	row "alltoall $p x $bytes B" "$sw" "$sc" "$sm" "${ss:0:8}s" "$mw" "$mc" "$mm" "${msim}s"
	ev=$(sed -n 's/^events: \([0-9]*\) .*/\1/p' "$work/ms-a2a-$p.out")
	events+=("$(awk -v p="$p" -v e="$ev" 'BEGIN { printf "  %5d PEs: %d events, %.0f per message", p, e, e / (p * (p - 1)) }')")
done
read -r sw sc sm < <(measure sg-pingpong "${smpi[@]}" -np 2 "$work/pingpong")
read -r mw mc mm < <(measure ms-pingpong "$work/simrun" run "$(scenario pingpong 2)" --out "$work/ms-pingpong")
row "pingpong 8 B-1 MiB" "$sw" "$sc" "$sm" "-" "$mw" "$mc" "$mm" "-"
echo
echo "msgsim events of the all-to-all (the barriers included):"
printf '%s\n' "${events[@]}"
echo "simulated time: all-to-all = between the barriers around the exchange (msgsim: (P-1) x bytes / per-PE throughput)."
echo "ping-pong half round trip, microseconds (SimGrid | msgsim):"
paste <(sed -n 's/.*bytes=\([0-9]*\) half_round_trip_us=\([0-9.]*\).*/\1 \2/p' "$work/sg-pingpong.out") \
	<(sed -n 's/^[^,]*,bytes,[0-9]*,latency_us,\([0-9.e+-]*\),.*/\1/p' "$work/ms-pingpong/results.csv") |
	awk '{ printf "  %8d B  %10.3f | %10.3f\n", $1, $2, $3 }'
echo "SimGrid: $(smpirun -version 2>/dev/null | head -1 || true); flat cluster bench/platform.xml, simulate-computation off"
echo "msgsim: $(cd "$root" && git describe --always --dirty 2>/dev/null || echo unknown), T3D + MPICH ch_t3d"
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
