package collective

import (
	"github.com/msgsim/msgsim/sim"
)

// bcast: PE 0 broadcasts its window; every PE checks what it received.
func (pt *point) bcast(p *sim.Proc, pe int) error {
	buf, err := pt.sys.buffer(pe, pt.n)
	if err != nil {
		return err
	}
	if pe == 0 {
		pt.fill(pe, buf, 0)
	}
	pt.barrier(p, pe, true)
	if err := pt.sys.bcast(p, pe, buf); err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	pt.verify(p, pe, buf, 0, "broadcast")
	return nil
}
