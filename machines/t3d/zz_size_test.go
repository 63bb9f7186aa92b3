package t3d

import (
	"testing"
	"unsafe"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

func TestZZSizes(t *testing.T) {
	t.Logf("pe %d Memory %d CPU %d op %d Proc %d WaitQueue %d Link %d Channel %d Message %d Segment %d Stats %d",
		unsafe.Sizeof(pe{}), unsafe.Sizeof(mem.Memory{}), unsafe.Sizeof(mem.CPU{}), unsafe.Sizeof(op{}),
		unsafe.Sizeof(sim.Proc{}), unsafe.Sizeof(sim.WaitQueue{}), unsafe.Sizeof(net.Link{}), unsafe.Sizeof(net.Channel{}), unsafe.Sizeof(net.Message{}), unsafe.Sizeof(mem.Segment{}), unsafe.Sizeof(mem.Stats{}))
}
