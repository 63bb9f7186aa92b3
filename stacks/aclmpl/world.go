package aclmpl

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/stacks"
)

// Open sets ACLMPL up on m (New) and returns it as a World: one PE per
// processor. Each PE offers stacks.Comm (Send and Recv are the synchronous
// protocol, Isend and Irecv the asynchronous one) and the synchronous
// library's collectives (stacks.SendRecver, Bcaster, Reducer,
// BinarySwapReducer).
func Open(m machines.Machine, params Params) (*stacks.World, error) {
	l, err := New(m, params)
	if err != nil {
		return nil, err
	}
	w := &stacks.World{Stack: Name, Title: "ACLMPL", Machine: m, Ranks: make([]stacks.Rank, 0, len(l.pes))}
	for _, x := range l.pes {
		w.Ranks = append(w.Ranks, x)
	}
	return w, nil
}

// Needs are the verbs ACLMPL uses: remote writes always; for the
// asynchronous protocol a fetch-and-increment register per PE, or a remote
// fetch-and-increment to build one from a word.
func Needs() []machines.Capability {
	return []machines.Capability{
		machines.VerbRemoteWrite,
		forAsync(machines.VerbFetchIncReg, ""),
		forAsync(machines.VerbRemoteFetchInc, " where there is no register (one built from a word in each PE's memory)"),
	}
}

// forAsync is verb as a need of the asynchronous protocol.
func forAsync(verb machines.Capability, where string) machines.Capability {
	verb.What += ", for the asynchronous protocol" + where
	return verb
}

// FootprintBytes is what the PE's library holds in its memory
// (stacks.Footprint): the request and completion arrays and the staging
// block, and with the asynchronous protocol (nonblocking) the buffer pool
// and the word of its register where the register is built from one.
func (x *PE) FootprintBytes(nonblocking bool) int {
	line := func(b int) int { return (b + 63) &^ 63 }
	n := line(x.size*reqBytes) + line(x.size*compBytes) + 64
	if nonblocking {
		p := x.lib.params
		n += p.PoolSlots * ((hdrBytes + p.SlotBytes + 63) &^ 63)
		if x.lib.reg != nil {
			n += x.lib.reg.bytes()
		}
	}
	return n
}
