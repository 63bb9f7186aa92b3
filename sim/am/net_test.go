package am

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/net"
)

// oneLink is a Router with a single link from node 0 to node 1.
type oneLink struct{ l *net.Link }

func (r oneLink) Route(route []*net.Link, src, dst, class int) ([]*net.Link, error) {
	return append(route, r.l), nil
}

// deliverer hands a delivered message to the receiving node's endpoint, as
// a machine's network adapter does: the wiring an SP or SCI model uses.
type deliverer struct {
	ep        *Endpoint
	n         *node
	delivered sim.Time
}

func (d *deliverer) Sent(*net.Message)              {}
func (d *deliverer) Arrived(*net.Message, int, int) {}
func (d *deliverer) Failed(m *net.Message, err error) {
	d.n.e.Fail(err)
}
func (d *deliverer) Delivered(m *net.Message) {
	d.delivered = d.n.e.Now()
	d.ep.Arrive(Arrival{Header: d.n.header, Args: [4]uint64{1}, DataAt: d.delivered})
}

// TestNetworkDeliveryRunsHandler: a message crossing a sim/net link is
// handed to the receiver's endpoint when it is delivered, and its header
// handler runs there in either mode at that mode's cost: in interrupt mode
// interrupt latency, interrupt cost, dispatch and the handler after the
// delivery; in polling mode at the application's next poll.
func TestNetworkDeliveryRunsHandler(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		// done is when the header handler finishes, from the delivery
		// (interrupt) or absolute (polling: the poll after 100 us of
		// computing: poll 1, dispatch 2, handler 3).
		after, at sim.Time
	}{
		{Interrupt, (10 + 20 + 2 + 3) * us, 0},
		{Polling, 0, 106 * us},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			n := newNode(t, testParams(tc.mode))
			link := net.NewLink("0->1", 1*us, 100)
			nw, err := net.New(n.e, oneLink{link}, net.Config{})
			if err != nil {
				t.Fatal(err)
			}
			d := &deliverer{ep: n.ep, n: n}
			var done sim.Time
			app := n.e.Spawn("app", func(p *sim.Proc) {
				p.Sleep(100 * us)
				n.ep.WaitUntil(p, "waiting for the message's handler", func() bool { return n.done == 1 })
				done = p.Now()
			})
			n.core.BindApp(app)
			n.e.At(0, func() { nw.Send(net.Msg{Src: 0, Dst: 1, Bytes: 1000}, d) })
			if err := n.e.Run(); err != nil {
				t.Fatal(err)
			}
			// 1 us of head latency and 10 us for 1000 bytes at 100 MB/s.
			if d.delivered != 11*us {
				t.Fatalf("delivered at %v, want 11us", d.delivered)
			}
			if n.done != 1 {
				t.Fatalf("%d header handlers ran, want 1", n.done)
			}
			want := tc.at
			if tc.mode == Interrupt {
				// The handler thread's 25 us of processor work (interrupt
				// cost, dispatch, handler; the interrupt latency is not
				// processor time) preempts the computing application: it
				// finishes at 125 us.
				want = 125 * us
				if got := n.ep.Stats().ByInterrupt; got != 1 {
					t.Errorf("%d arrivals handled by interrupt, want 1", got)
				}
				if want, got := "header 1 by node0 interrupt handler at "+(d.delivered+tc.after).String(), n.log[0]; got != want {
					t.Errorf("handler: %s, want %s", got, want)
				}
			}
			if done != want {
				t.Errorf("application done at %v, want %v", done, want)
			}
		})
	}
}
