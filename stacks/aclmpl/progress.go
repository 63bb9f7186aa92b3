package aclmpl

import "github.com/msgsim/msgsim/stacks"

// ProgressRule is ACLMPL's progress rule (stacks.ProgressRuler), from the
// paper:
//
//   - Section 4: "Splitting synchronous and asynchronous primitives into
//     two separate groups, with no overlap": a message sent with Send (the
//     synchronous send()) is received only by Recv (receive()), one sent
//     with Isend (the asynchronous send) only by Irecv's Test or Wait.
//   - Section 4.1: the synchronous protocol is a rendezvous. The receiver
//     writes its request block to the sender and spins until DONE; the
//     sender "blocks, via a spin-wait loop checking the control flag,
//     until this request block arrives". A PE blocked in either call
//     progresses nothing else, and the request block carries no tag.
//   - Section 4.2: an asynchronous send returns once its message is in
//     the receiver's buffer pool; while that pool is full "the sender must
//     block until the receiver removes messages from the buffer pool",
//     which the receiver does in "each time a send or receive request is
//     processed". An asynchronous receive is a call that looks for a
//     matching message ("the first returns immediately if a message is
//     not available. The other will block"): nothing is posted, so a
//     receive request nobody tests or waits on is given no progress.
//     Messages wait in the pool or in the sent-but-not-yet-received list,
//     so no sender needs it: a sender needs only that its receiver keeps
//     calling the asynchronous library.
//
// It also assumes a reliable network (stacks.Progress.Reliable): the
// receiver of section 4.2 takes a buffer whose DONE flag it sees, and of
// section 4.1 a completion block, trusting that every write lands exactly
// once, as on the T3D; it has no checkpoint and no retry, so a write that
// a network lands twice (an SCI CRC error on the response) brings a
// received buffer's DONE flag back.
func (x *PE) ProgressRule() stacks.Progress {
	return stacks.Progress{
		Split:    true,
		Reliable: true,
		Rule: "two protocols with no overlap: Send/Recv (synchronous) is a tagless rendezvous, each side blocked until " +
			"the other calls; Isend returns once its message is in the receiver's pool (blocking while the pool is full, " +
			"until the receiver makes any asynchronous call); an Irecv progresses only when it is tested or waited on; assumes every remote write lands exactly once",
		Source: "aclmpl-t3d.txt, sections 4, 4.1 and 4.2",
	}
}
