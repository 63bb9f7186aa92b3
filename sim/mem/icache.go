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
// an instruction cache (ICache disabled) it is Compute(p, cycles). A store
// run's fill may execute (its code is the CPU's own, looked up once); a
// poll's check may not (it may run again).
func (c *CPU) Execute(p *sim.Proc, code Code, cycles float64) {
	if c.polling && !c.filling {
		c.notInPoll("Execute")
	}
	ic := c.cfg.ICache
	if !ic.Enabled || code.Bytes <= 0 {
		c.Compute(p, cycles)
		return
	}
	if c.icache == nil {
		c.icache = &icache{sets: uint64(ic.SizeBytes / ic.LineBytes)}
	}
	lb := uint64(ic.LineBytes)
	first, last := uint64(code.Addr)/lb, (uint64(code.Addr)+uint64(code.Bytes)-1)/lb
	misses := c.icache.run(first, last)
	c.stats.IFetches += last - first + 1
	c.stats.IMisses += uint64(misses)
	c.Compute(p, cycles+float64(misses)*c.cfg.Costs.MissCycles)
}

// icache is a direct-mapped instruction cache's tags, held as runs: code
// runs through consecutive lines, which fill consecutive indices, so the
// tags are a few runs of indices each holding consecutive lines, and a
// path of hundreds of lines is looked up in a few comparisons rather than
// one per line.
type icache struct {
	sets uint64
	// runs, in index order, not overlapping: indices [lo, hi) hold lines
	// lo+off ... hi-1+off (off a multiple of sets). An index in no run is
	// empty.
	runs []icRun
	tmp  []icRun // scratch for run
}

type icRun struct{ lo, hi, off uint64 }

// run looks up lines first..last in order, fills those that miss, and
// returns how many missed. A path longer than the cache goes a cache's
// worth of lines at a time: within one, no two lines share an index.
func (ic *icache) run(first, last uint64) int {
	var misses uint64
	for a := first; a <= last; a += ic.sets {
		n := min(last-a+1, ic.sets)
		i0 := a % ic.sets
		off := a - i0
		if i0+n <= ic.sets {
			misses += ic.fill(i0, i0+n, off)
		} else {
			misses += ic.fill(i0, ic.sets, off)
			misses += ic.fill(0, i0+n-ic.sets, off+ic.sets)
		}
	}
	return int(misses)
}

// fill looks up indices [lo, hi) for lines lo+off ..., returns how many
// held other lines or none, and makes them hold those lines.
func (ic *icache) fill(lo, hi, off uint64) uint64 {
	hits := uint64(0)
	out := ic.tmp[:0]
	placed := false
	for _, r := range ic.runs {
		if r.hi <= lo || r.lo >= hi {
			if r.lo >= hi && !placed {
				out, placed = ic.appendRun(out, icRun{lo, hi, off}), true
			}
			out = ic.appendRun(out, r)
			continue
		}
		// Overlapping: count the hits, keep the parts outside [lo, hi).
		if r.off == off {
			hits += min(r.hi, hi) - max(r.lo, lo)
		}
		if r.lo < lo {
			out = ic.appendRun(out, icRun{r.lo, lo, r.off})
		}
		if r.hi > hi {
			if !placed {
				out, placed = ic.appendRun(out, icRun{lo, hi, off}), true
			}
			out = ic.appendRun(out, icRun{hi, r.hi, r.off})
		}
	}
	if !placed {
		out = ic.appendRun(out, icRun{lo, hi, off})
	}
	ic.tmp, ic.runs = ic.runs[:0], out
	return (hi - lo) - hits
}

// appendRun appends r to runs in index order, joined with the last run
// when it continues it.
func (ic *icache) appendRun(runs []icRun, r icRun) []icRun {
	if k := len(runs); k > 0 && runs[k-1].hi == r.lo && runs[k-1].off == r.off {
		runs[k-1].hi = r.hi
		return runs
	}
	return append(runs, r)
}
