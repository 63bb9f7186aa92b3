#!/usr/bin/env bash
# Regenerates the per-scenario tables of docs/fidelity.md's "Network
# models: flow against units" section: every built-in scenario with a
# networked machine run on both network models by simrun run NAME
# --compare-network, the heavy ones at the reduced size their heading
# names. Usage: bench/fidelity.sh > /tmp/tables.md (then paste over the
# section's tables). Takes about half an hour of CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/simrun-fidelity ./cmd/simrun
run() { # NAME [REDUCE]
	if [ $# -gt 1 ]; then
		/tmp/simrun-fidelity run "$1" --compare-network --reduce "$2" -j 1 2>/dev/null
	else
		/tmp/simrun-fidelity run "$1" --compare-network -j 1 2>/dev/null
	fi
	echo
}
run t3d-table1
run t3d-table2
run t3d-fig3
run t3d-fig4 '{pes: [64], bytes: [1, 256, 4096, 65536]}'
run t3d-fig5 '{pes: [32], bytes: [1, 256, 4096, 65536]}'
run t3d-fig6 '{pes: [32], bytes: [1, 256, 4096, 65536, 1048576]}'
run t3d-fig7
run t3d-fig8 '{pes: [32], bytes: [1, 256, 4096, 65536, 1048576]}'
run t3d-fig9 '{pes: [32], bytes: [8, 1024, 16384, 262144]}'
run t3d-partitions-alltoall
run t3d-partitions-bcast '{pes: [2, 4, 8, 16, 32, 64]}'
run sci-pingpong
run sci-fig1-3
run sci-table1-1
run sci-table1-2 '{procs: [2, 4, 8, 16, 32]}'
run sci-index-bytewise
run sci-no-crc
run sci-no-membarrier
run armci-2x100
run armci-acc
run armci-fig4
run armci-fig5
run armci-polling-sleeping
run whatif-stacks
