package aclmpl

import "github.com/msgsim/msgsim/stacks"

// An ACLMPL PE offers message passing and the synchronous collectives.
var (
	_ stacks.Comm              = (*PE)(nil)
	_ stacks.SendRecver        = (*PE)(nil)
	_ stacks.Bcaster           = (*PE)(nil)
	_ stacks.Reducer           = (*PE)(nil)
	_ stacks.BinarySwapReducer = (*PE)(nil)
)
