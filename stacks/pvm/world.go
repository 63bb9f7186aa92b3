package pvm

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/stacks"
)

// Open sets PVM up on m (New) and returns it as a World: one task per
// processor. Each task offers stacks.Comm (Send and Isend are pvm_psend,
// Recv is pvm_precv, Irecv a receive the library matches arrivals
// against) and the group library's broadcast and reduce (stacks.Bcaster,
// Reducer), which a program calls whether its point-to-point calls block
// or not (stacks.SoleCollectives).
func Open(m machines.Machine, params Params) (*stacks.World, error) {
	l, err := New(m, params)
	if err != nil {
		return nil, err
	}
	w := &stacks.World{Stack: Name, Title: "PVM", Machine: m, Ranks: make([]stacks.Rank, 0, len(l.tasks))}
	for _, x := range l.tasks {
		w.Ranks = append(w.Ranks, x)
	}
	return w, nil
}

// Needs are the verbs PVM uses: remote writes with their completion.
func Needs() []machines.Capability {
	return []machines.Capability{machines.VerbRemoteWrite}
}

// SoleCollectives marks PVM's group library as the one a program calls
// for a broadcast or a reduce, whatever its point-to-point calls.
func (x *Task) SoleCollectives() {}

// FootprintBytes is what the task's library holds in its memory
// (stacks.Footprint): its rings, one per sender, the freed-count array and
// the staging block (the receive queue grows with the messages held).
func (x *Task) FootprintBytes(bool) int {
	l := x.lib
	return x.size*l.params.Slots*l.stride() + ((x.size*8 + 63) &^ 63) + 64
}

// ProgressRule is PVM's progress rule (stacks.ProgressRuler): any message
// matches any receive, and a task blocked in any call pulls every arrived
// message into its library (posted receives included); a send completes
// without a receive, waiting only while the receiver's ring for it is full.
// It assumes a reliable network: a remote write landed twice brings a
// taken slot's DONE flag back.
func (x *Task) ProgressRule() stacks.Progress {
	return stacks.Progress{
		Reliable: true,
		Rule: "any send matches any receive; psend completes without a receive (the receiver queues what arrives), " +
			"waiting only while the receiver's ring of slots for it is full; a task blocked in any call takes every " +
			"arrived message; assumes every remote write lands exactly once",
		Source: "hardware.yaml t3d_pvm.psend_precv: the PVM book, section on the MPP ports; PVM 3.3's receive list",
	}
}
