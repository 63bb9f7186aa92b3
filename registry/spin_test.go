package registry

import (
	"fmt"
	"slices"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// pingPongTimes runs a ping-pong of msgs messages of each size between
// ranks 0 and 1 of a world opened by open, and returns the instant each
// message was received and the run's end. polling makes the engine run
// step by step with every spin polling for real (mem.CPU.SetPollingSpins):
// each poll of every receive loop its own timed steps.
func pingPongTimes(t *testing.T, open Opener, polling bool, sizes []int, msgs int) ([]sim.Time, error) {
	t.Helper()
	eng := sim.NewEngine(1)
	eng.SetLimits(sim.Limits{MaxEvents: 20_000_000})
	w, err := open(eng, 2)
	if err != nil {
		return nil, err
	}
	comms, err := stacks.As[stacks.Comm](w, "spin test", "message passing")
	if err != nil {
		return nil, err
	}
	if polling {
		eng.SetStepByStep(true)
		for _, c := range comms {
			c.CPU().SetPollingSpins(true)
		}
	}
	var got []sim.Time
	for rank := range 2 {
		c := comms[rank]
		eng.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			for _, n := range sizes {
				buf, err := c.Buffer(n)
				if err != nil {
					eng.Fail(err)
					return
				}
				for range msgs {
					if rank == 0 {
						if err := c.Send(p, buf, 1, 7); err != nil {
							eng.Fail(err)
							return
						}
					}
					if _, err := c.Recv(p, buf, 1-rank, 7); err != nil {
						eng.Fail(err)
						return
					}
					got = append(got, p.Now())
					if rank == 1 {
						if err := c.Send(p, buf, 0, 7); err != nil {
							eng.Fail(err)
							return
						}
					}
				}
			}
		})
	}
	if err := eng.Run(); err != nil {
		return nil, err
	}
	return append(got, eng.Now()), nil
}

// TestSleepingSpinsPollExactly runs every message-passing stack's receive
// loop on every machine it opens on twice: with its spins sleeping until a
// watched word is written (the default) and, step by step, polling for
// real. The receive instants must agree to the picosecond: the sleeping
// spin wakes at the poll that would have read the write and charges what
// those polls cost.
//
// Two stacks' receive spins are not of the form the sleeping spin is exact
// for (mem.CPU.SpinUntil: a check that reads its watched words first and
// costs the same every poll), and one machine's polls are not free of
// effects on others: they are listed with why, and their results are
// those of the sleeping spin.
func TestSleepingSpinsPollExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every pairing twice")
	}
	inexact := map[string]string{
		"aclmpl": "its receive spin's check is a whole receive attempt, whose cost changes from poll to poll",
		"scampi": "its receive spin's check reads a directory word, scans and then reads the acknowledgement words",
	}
	inexactOn := map[string]string{
		"challenge": "on its snooping bus a poll that misses is a bus transaction, which moves the line's MESI state in the writer's cache; a sleeping spinner issues none (the polling loop is about 0.5 % faster there)",
	}
	r := Default()
	ran := 0
	for _, me := range r.Machines() {
		if _, ok := inexactOn[me.Name]; ok {
			continue
		}
		for _, se := range r.Stacks() {
			if _, ok := inexact[se.Name]; ok {
				continue
			}
			vs := append([]string{""}, se.Variants...)
			for _, v := range vs {
				open, _, err := r.ResolveSetup("", Ref{Name: me.Name}, variantRef(t, se.Name, v))
				if err != nil {
					continue // a pairing that cannot work
				}
				name := se.Name + "/" + me.Name + "/" + v
				t.Run(name, func(t *testing.T) {
					sleeping, err := pingPongTimes(t, open, false, []int{8, 4096}, 3)
					if err != nil {
						t.Skipf("no ping-pong: %v", err)
					}
					polling, err := pingPongTimes(t, open, true, []int{8, 4096}, 3)
					if err != nil {
						t.Fatalf("polling: %v", err)
					}
					if !slices.Equal(sleeping, polling) {
						t.Errorf("receive instants differ:\nsleeping %v\npolling  %v", sleeping, polling)
					}
					ran++
				})
			}
		}
	}
	if ran < 25 {
		t.Errorf("compared %d pairings; want every message-passing stack variant on every machine it opens on (29 when written)", ran)
	}
}
