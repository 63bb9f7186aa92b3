package mem

import "github.com/msgsim/msgsim/sim"

// Update is cycles of the program's work on its own n bytes at a: it
// charges the cycles (Compute), then f sees the bytes as the program does
// (through the cache and the store buffer, as Peek) and what f leaves in
// them is written back as the program would, visible at once (Poke). A nil
// p is the bytes' initial contents, set up before the run (cycles must be
// 0).
func (c *CPU) Update(p *sim.Proc, a Addr, n int, cycles float64, f func(b []byte)) {
	if c.polling {
		c.notInPoll("Update")
	}
	if p != nil {
		c.Compute(p, cycles)
	}
	if n <= 0 {
		return
	}
	b := c.getBuf(n)
	c.Peek(a, b)
	f(b)
	c.Poke(a, b)
	c.release(b)
}

// Reduce is cycles of the program's work combining the n bytes at in into
// the n bytes at acc, elem bytes at a time: it charges the cycles
// (Compute), then folds in into acc as the program sees both (Fold).
func (c *CPU) Reduce(p *sim.Proc, acc, in Addr, n, elem int, cycles float64, f func(acc, in []byte)) {
	if c.polling {
		c.notInPoll("Reduce")
	}
	c.Compute(p, cycles)
	c.Fold(acc, in, n, elem, f)
}

// Delay waits d without touching memory: a back-off stated in time, an
// idle wait.
func (c *CPU) Delay(p *sim.Proc, d sim.Time) {
	if c.polling {
		c.advanceRun(p, d)
		return
	}
	p.Sleep(d)
}
