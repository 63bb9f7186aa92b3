#!/usr/bin/env bash
# bench/pgo.sh: records cmd/simrun/default.pgo, the CPU profile go build
# uses for profile-guided optimisation (https://go.dev/doc/pgo: hot calls
# inlined, hot interface calls devirtualised), from the runs that dominate
# the suite's CPU: every series of t3d-fig4 at three of its sizes
# (bench/pgo/t3d-alltoall.yaml) and bench's 128-PE 64 KiB MPI all-to-all.
# The same code compiled differently: no output depends on it. Rerun it
# after large changes to the hot code (a stale profile still builds, and
# helps less). Not part of CI.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/msgsim-pgo.XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -pgo=off -o "$work/simrun" ./cmd/simrun)
sed 's/@PES@/128/g; s/@BYTES@/65536/g; s/@MODEL@/units/g; s/@STACK@/{name: mpich, params: {device: ch_t3d}}/g' "$here/alltoall.yaml" >"$work/alltoall.yaml"
"$work/simrun" run "$here/pgo/t3d-alltoall.yaml" --out "$work/a" --quiet -j 1 --cpuprofile "$work/a.prof" >/dev/null
"$work/simrun" run "$work/alltoall.yaml" --out "$work/b" --quiet -j 1 --cpuprofile "$work/b.prof" >/dev/null
go tool pprof -proto "$work/a.prof" "$work/b.prof" >"$root/cmd/simrun/default.pgo"
echo "wrote cmd/simrun/default.pgo"
