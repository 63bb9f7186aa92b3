package scampi

import "github.com/msgsim/msgsim/stacks"

// ProgressRule is ScaMPI's progress rule (stacks.ProgressRuler): MPI's
// (stacks.MPIProgress), as "Scali's own high performance implementation of
// MPI" (papers/scampi-sci.txt, section 1.3.3). Its Wait and Test consume
// every whole envelope of every channel (progress, scampi.go), whichever
// request they were called on.
func (x *Rank) ProgressRule() stacks.Progress {
	p := stacks.MPIProgress()
	p.Source = "scampi-sci.txt, section 1.3.3; " + p.Source
	return p
}
