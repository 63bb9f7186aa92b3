package stacks

// Progress is a stack's progress rule for Comm: which programs complete.
// A stack states it from its paper (ProgressRuler); a workload that draws
// programs at random (the soak) draws only programs within it, so that a
// failure is a bug of the stack, never a program the stack's API does not
// promise to complete.
type Progress struct {
	// Split: the blocking calls (Send, Recv) and the nonblocking ones
	// (Isend, Irecv) are two separate protocols that never match each
	// other: a message sent with Send is received only by Recv, one sent
	// with Isend only by Irecv. Send and Recv rendezvous: each blocks
	// until the other side has called its half, carries no tag (messages
	// of a pair match in order) and progresses nothing else meanwhile, so
	// a program must order its blocking calls so that every Send meets
	// its Recv (one order of the messages that every rank follows does).
	// Not split (MPI's rule): any message matches any receive, and a
	// rank blocked in any call progresses every request it has posted.
	Split bool
	// Reliable: the protocol assumes a network that lands every remote
	// write exactly once (the paper's machines do); it has no checkpoint
	// or retry. Under a machine's fault params (a CRC error on a response
	// lands a write twice) a failure says the assumption broke, not that
	// the stack has a bug: the soak does not run it under them.
	Reliable bool
	// Rule states the rule in a sentence or two, and Source cites where
	// it comes from (the paper and its section).
	Rule, Source string
}

// ProgressRuler is optionally offered by a stack's ranks: the stack's
// progress rule. A rank that does not offer it follows MPIProgress.
type ProgressRuler interface {
	ProgressRule() Progress
}

// MPIProgress is MPI's progress rule: a nonblocking receive, once posted,
// is matched by the first matching message whatever the rank is blocked
// in, and a blocking call of a rank progresses every request the rank has
// posted (MPI-1.1, section 3.7.4, "Progress").
func MPIProgress() Progress {
	return Progress{
		Rule: "MPI's: any send matches any posted receive; a rank blocked in any call (Send, Recv, Wait) " +
			"progresses every request it has posted, so a program that posts its receives before its sends completes",
		Source: "MPI-1.1, section 3.7.4",
	}
}

// ProgressOf is w's progress rule: its ranks' (ProgressRuler), else
// MPIProgress.
func ProgressOf(w *World) Progress {
	if len(w.Ranks) > 0 {
		if r, ok := w.Ranks[0].(ProgressRuler); ok {
			return r.ProgressRule()
		}
	}
	return MPIProgress()
}
