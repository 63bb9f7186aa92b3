package litmus

import (
	"fmt"
	"strings"
)

// Quant is the quantifier of a final condition.
type Quant uint8

// Quantifiers of herd7's final conditions.
const (
	Exists    Quant = iota // exists p: Ok if some final state satisfies p
	NotExists              // ~exists p: Ok if none does
	Forall                 // forall p: Ok if every one does
)

func (q Quant) String() string {
	switch q {
	case NotExists:
		return "~exists"
	case Forall:
		return "forall"
	}
	return "exists"
}

// Cond is a final condition: a quantifier and a proposition.
type Cond struct {
	Quant Quant
	Prop  *Prop
}

// Op is a proposition's connective.
type Op uint8

// Connectives of propositions.
const (
	OpTerm Op = iota // Reg (or Loc if Reg < 0) = Val
	OpAnd
	OpOr
	OpNot
	OpTrue
	OpFalse
)

// Prop is a proposition on the final registers and locations.
type Prop struct {
	Op   Op
	Kids []*Prop // OpAnd, OpOr: two or more; OpNot: one
	Reg  int     // OpTerm: register index, or -1 for a location
	Loc  int     // OpTerm on a location
	Val  uint64
}

// Eval evaluates p on final registers regs and locations locs.
func (p *Prop) Eval(regs, locs []uint64) bool {
	switch p.Op {
	case OpTerm:
		if p.Reg >= 0 {
			return regs[p.Reg] == p.Val
		}
		return locs[p.Loc] == p.Val
	case OpAnd:
		for _, k := range p.Kids {
			if !k.Eval(regs, locs) {
				return false
			}
		}
		return true
	case OpOr:
		for _, k := range p.Kids {
			if k.Eval(regs, locs) {
				return true
			}
		}
		return false
	case OpNot:
		return !p.Kids[0].Eval(regs, locs)
	case OpTrue:
		return true
	}
	return false
}

// markLocs sets obs[l] for every location l that p tests.
func (p *Prop) markLocs(obs []bool) {
	if p.Op == OpTerm {
		if p.Reg < 0 {
			obs[p.Loc] = true
		}
		return
	}
	for _, k := range p.Kids {
		k.markLocs(obs)
	}
}

// mentionsLoc reports whether p tests a location.
func (p *Prop) mentionsLoc() bool {
	if p.Op == OpTerm {
		return p.Reg < 0
	}
	for _, k := range p.Kids {
		if k.mentionsLoc() {
			return true
		}
	}
	return false
}

// format prints p in herd7's notation; nested parenthesises a compound.
func (p *Prop) format(t Test, nested bool) string {
	switch p.Op {
	case OpTerm:
		if p.Reg >= 0 {
			return fmt.Sprintf("%s=%d", t.RegName(p.Reg), p.Val)
		}
		return fmt.Sprintf("%s=%d", t.Locs[p.Loc], p.Val)
	case OpTrue:
		return "true"
	case OpFalse:
		return "false"
	case OpNot:
		return "~" + p.Kids[0].format(t, true)
	}
	sep := ` /\ `
	if p.Op == OpOr {
		sep = ` \/ `
	}
	var parts []string
	for _, k := range p.Kids {
		parts = append(parts, k.format(t, true))
	}
	s := strings.Join(parts, sep)
	if nested {
		return "(" + s + ")"
	}
	return s
}

// Validated reports whether the condition holds given how many final
// states (or runs) satisfy its proposition (pos) and how many do not (neg).
func (c Cond) Validated(pos, neg int) bool {
	switch c.Quant {
	case NotExists:
		return pos == 0
	case Forall:
		return neg == 0
	}
	return pos > 0
}
