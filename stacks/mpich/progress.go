package mpich

import "github.com/msgsim/msgsim/stacks"

// ProgressRule is MPICH's progress rule (stacks.ProgressRuler): MPI's
// (stacks.MPIProgress). papers/mpich-sx4.txt, section 3: a rendezvous
// message "will not be transferred until the receive is posted" (posted,
// not waited on), and each process reads its one queue of control packets
// from any sender; the progress engine (adi.go) handles every incoming
// packet and every queued send in whatever call the rank is blocked in.
func (r *Rank) ProgressRule() stacks.Progress {
	p := stacks.MPIProgress()
	p.Source = "mpich-sx4.txt, section 3; " + p.Source
	return p
}
