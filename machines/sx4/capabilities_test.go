package sx4

import "github.com/msgsim/msgsim/machines"

// The SX-4 bounds each process's memory; it has no one-sided put, no
// fetch-and-increment register and no barrier network.
var _ machines.Memory = (*Machine)(nil)
