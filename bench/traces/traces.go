// Package traces holds the checked-in SimGrid time-independent traces
// that make.sh writes (real MPI programs traced with smpirun -trace-ti at
// 4, 16 and 64 ranks), embedded so that built-in scenarios replay them
// without SimGrid: a built-in scenario's trace index is a path in FS
// (e.g. "jacobi/16/jacobi.txt").
//
// Layer: data only; imports nothing of the project.
package traces

import "embed"

// FS holds the traces: NAME/RANKS/NAME.txt and NAME/RANKS/NAME.txt_files/.
//
//go:embed jacobi cg ring pingpong actions datatypes
var FS embed.FS
