package mem

import "github.com/msgsim/msgsim/sim"

// Code is a stretch of a program's code: its address in the program's text
// and its length in bytes. Only its place matters (which instruction-cache
// lines it occupies): the simulator holds no instructions.
type Code struct {
	Addr  Addr
	Bytes int
}

// Execute charges p for running code that takes cycles of the CPU's own
// work, plus a line fill from memory (Costs.MissCycles) for every line of
// code that is not in the instruction cache, which then holds it
// (direct-mapped: a line evicts whatever code shares its index). Without
// an instruction cache (ICache disabled) it is Compute(p, cycles).
func (c *CPU) Execute(p *sim.Proc, code Code, cycles float64) {
	ic := c.cfg.ICache
	if !ic.Enabled || code.Bytes <= 0 {
		c.Compute(p, cycles)
		return
	}
	if c.itags == nil {
		c.itags = make([]uint64, ic.SizeBytes/ic.LineBytes)
	}
	lb := uint64(ic.LineBytes)
	first, last := uint64(code.Addr)/lb, (uint64(code.Addr)+uint64(code.Bytes)-1)/lb
	// The lines' indices wrap around the cache: one division for the
	// first, none per line.
	misses := 0
	tags := c.itags
	i := int(first % uint64(len(tags)))
	for l := first; l <= last; l++ {
		if tags[i] != l+1 {
			tags[i] = l + 1
			misses++
		}
		if i++; i == len(tags) {
			i = 0
		}
	}
	c.stats.IFetches += last - first + 1
	c.stats.IMisses += uint64(misses)
	c.Compute(p, cycles+float64(misses)*c.cfg.Costs.MissCycles)
}
