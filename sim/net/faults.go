package net

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// InjectCRC makes the next count units that cross l arrive with a bad CRC:
// the link layer retries each (the receiver reports the error, the sender
// sends the unit again after retry), so its payload arrives intact, later.
func (l *Link) InjectCRC(count int, retry sim.Time) {
	f := l.faults()
	f.next += count
	f.retry = retry
}

func (l *Link) faults() *crcFaults {
	x := l.rare()
	if x.crc == nil {
		x.crc = &crcFaults{}
		l.faulty = true
	}
	return x.crc
}

// SetCRCErrorRate gives every unit crossing l a CRC error with probability
// p, drawn from the engine's generator (reproducible for a seed); each is
// retried as InjectCRC says.
func (l *Link) SetCRCErrorRate(p float64, retry sim.Time) error {
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("link %s: CRC error rate %g must be in [0, 1)", l.Name(), p)
	}
	f := l.faults()
	f.rate = p
	f.retry = retry
	return nil
}

// LinkDown takes l down at simulated time at, for d (d <= 0: for good). A
// unit on l when it goes down is lost on the wire, and so is its route: it
// is sent again from its source, as is every unit that waits for l or asks
// for it while it is down; the router gives the resend a route avoiding
// the links that are down, or the message is reported Failed. No unit is
// silently lost. On the flow model (Config.Flow) a link going down aborts
// nothing: only messages sent while it is down avoid it (machines reject
// links going down with the flow model).
func (n *Network) LinkDown(l *Link, at, d sim.Time) {
	n.eng.At(at, func() {
		now := n.eng.Now()
		l.down = true
		n.routing++
		if u := l.holder; u != nil && l.freeAt > now && u.msg != nil {
			l.rare().aborted++
			u.abort()
		}
		for len(l.waiters()) > 0 {
			l.x.aborted++
			l.x.waiters[0].abort()
		}
		if d > 0 {
			n.eng.At(now+d, func() {
				l.down = false
				n.routing++
				l.schedule(n.eng)
			})
		}
	})
}
