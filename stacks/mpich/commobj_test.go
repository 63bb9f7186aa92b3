package mpich

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// word is the 8-byte word at a of r's memory, untimed.
func (r *Rank) word(a mem.Addr) uint64 {
	var raw [8]byte
	r.cpu.Peek(a, raw[:])
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(raw[i])
	}
	return v
}

// Attr is MPI_Comm_get_attr, untimed (for tests): the value and whether
// the communicator has the attribute.
func (c *Comm) Attr(key int) (uint64, bool) {
	r := c.r
	if !r.mpich2() || !r.mpir.ready {
		return 0, false
	}
	for a := mem.Addr(r.word(c.obj + commAttributes)); a != 0; a = mem.Addr(r.word(a + attrNext)) {
		if int(r.word(a+attrKeyval)) == key {
			return r.word(a + attrValue), true
		}
	}
	return 0, false
}

// runSock runs body on every rank of a 2-process ch3:sock world (one
// process per node) at the given level, and fails the test on an error.
func runSock(t *testing.T, params Params, level Level, body func(p *sim.Proc, r *Rank) error) *World {
	t.Helper()
	e := sim.NewEngine(1)
	w := sockWorld(t, e, 2, 1, params)
	for rank := 0; rank < 2; rank++ {
		r := w.Rank(rank)
		e.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			if _, err := r.InitThread(p, level); err != nil {
				e.Fail(err)
				return
			}
			if err := body(p, r); err != nil {
				e.Fail(err)
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestCommObjects: with comm_dup mpich2 a duplicate is an MPID_Comm from
// the handle pool holding its context id, rank and size and sharing
// MPI_COMM_WORLD's virtual-connection table by reference; MPI_Comm_free
// drops the references and puts the object back, so a loop of dup and
// free reuses one object; more live communicators than the direct block
// holds take an indirect block; freeing twice is an error.
func TestCommObjects(t *testing.T) {
	for _, level := range []Level{LevelSingle, LevelMultiple} {
		t.Run(level.String(), func(t *testing.T) {
			params := DefaultParamsFor(DeviceSock)
			params.Threads = BuildMultiple
			runSock(t, params, level, func(p *sim.Proc, r *Rank) error {
				var first, vcrt mem.Addr
				for i := 0; i < 3; i++ {
					c, err := dup(p, r.World())
					if err != nil {
						return err
					}
					if i == 0 {
						first, vcrt = c.obj, r.mpir.base+mpirVCRTRef
					}
					switch {
					case c.obj != first:
						return fmt.Errorf("dup %d: object %#x, want the freed %#x again", i, c.obj, first)
					case r.word(c.obj+commContextID) != uint64(c.ContextID()):
						return fmt.Errorf("object holds context id %d, communicator %d", r.word(c.obj+commContextID), c.ContextID())
					case r.word(c.obj+commRankF) != uint64(r.rank) || r.word(c.obj+commLocalSize) != 2:
						return fmt.Errorf("object holds rank %d size %d", r.word(c.obj+commRankF), r.word(c.obj+commLocalSize))
					case mem.Addr(r.word(c.obj+commVCRT)) != vcrt || r.word(vcrt) != 2:
						return fmt.Errorf("virtual-connection table %#x referenced %d times, want the world's %#x twice", r.word(c.obj+commVCRT), r.word(vcrt), vcrt)
					}
					if err := c.Free(p); err != nil {
						return err
					}
					if r.word(vcrt) != 1 {
						return fmt.Errorf("after MPI_Comm_free the table is referenced %d times, want 1", r.word(vcrt))
					}
					if err := c.Free(p); err == nil || !strings.Contains(err.Error(), "already freed") {
						return fmt.Errorf("second MPI_Comm_free: %v, want already freed", err)
					}
				}
				var live []*Comm
				for i := 0; i < commPrealloc+2; i++ {
					c, err := dup(p, r.World())
					if err != nil {
						return err
					}
					live = append(live, c)
				}
				if r.mpir.comms.handles != commPrealloc+handleBlock {
					return fmt.Errorf("%d communicators live: %d objects made, want %d", len(live), r.mpir.comms.handles, commPrealloc+handleBlock)
				}
				if r.word(vcrt) != uint64(1+len(live)) {
					return fmt.Errorf("table referenced %d times with %d duplicates", r.word(vcrt), len(live))
				}
				for _, c := range live {
					if err := c.Free(p); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// TestCommAttributes: MPI_Comm_dup calls each attribute's copy callback:
// MPI_COMM_DUP_FN's attribute is copied into the duplicate (its keyval
// referenced once more), MPI_COMM_NULL_COPY_FN's is not; MPI_Comm_free
// deletes the duplicate's attributes and drops their keyvals' references.
// Without a keyval MPI_Comm_dup does not walk the list.
func TestCommAttributes(t *testing.T) {
	runSock(t, DefaultParamsFor(DeviceSock), LevelSingle, func(p *sim.Proc, r *Rank) error {
		world := r.ctx.world
		d0, err := dup(p, world)
		if err != nil {
			return err
		}
		if err := d0.Free(p); err != nil {
			return err
		}
		kDup, err := r.CreateKeyval(p, AttrDupCopy)
		if err != nil {
			return err
		}
		kNull, err := r.CreateKeyval(p, AttrNullCopy)
		if err != nil {
			return err
		}
		if err := world.SetAttr(p, kDup, 42); err != nil {
			return err
		}
		if err := world.SetAttr(p, kNull, 7); err != nil {
			return err
		}
		if err := world.SetAttr(p, kDup, 43); err != nil { // replaces the value
			return err
		}
		ref := func(k int) uint64 { return r.word(r.mpir.keyvals[k-1].obj + keyvalRefCount) }
		if ref(kDup) != 2 || ref(kNull) != 2 {
			return fmt.Errorf("keyvals referenced %d and %d times with one attribute each, want 2", ref(kDup), ref(kNull))
		}
		d, err := dup(p, world)
		if err != nil {
			return err
		}
		if v, ok := d.Attr(kDup); !ok || v != 43 {
			return fmt.Errorf("duplicate's MPI_COMM_DUP_FN attribute: %d %v, want 43", v, ok)
		}
		if _, ok := d.Attr(kNull); ok {
			return fmt.Errorf("duplicate has the MPI_COMM_NULL_COPY_FN attribute")
		}
		if ref(kDup) != 3 || ref(kNull) != 2 {
			return fmt.Errorf("after the copy keyvals referenced %d and %d times, want 3 and 2", ref(kDup), ref(kNull))
		}
		dd, err := dup(p, d) // a duplicate of the duplicate copies it again
		if err != nil {
			return err
		}
		if v, ok := dd.Attr(kDup); !ok || v != 43 {
			return fmt.Errorf("second generation's attribute: %d %v, want 43", v, ok)
		}
		for _, c := range []*Comm{dd, d} {
			if err := c.Free(p); err != nil {
				return err
			}
		}
		if ref(kDup) != 2 {
			return fmt.Errorf("after MPI_Comm_free keyval referenced %d times, want 2", ref(kDup))
		}
		if v, ok := world.Attr(kDup); !ok || v != 43 {
			return fmt.Errorf("MPI_COMM_WORLD's attribute after the frees: %d %v", v, ok)
		}
		return nil
	})
}

// TestCommDupCode: comm_dup mpich2 runs the object code on top of the
// context id (more time, more loads and stores, and with thread locks more
// atomics: the reference counts) and gives the same context ids;
// attributes need it.
func TestCommDupCode(t *testing.T) {
	type out struct {
		took             sim.Time
		ids              []int
		atomics, loadsSt uint64
	}
	run := func(mode string, level Level) out {
		params := DefaultParamsFor(DeviceSock)
		params.Threads = BuildMultiple
		params.CommDup = mode
		var o out
		runSock(t, params, level, func(p *sim.Proc, r *Rank) error {
			s0, t0 := r.CPU().Stats(), p.Now()
			for i := 0; i < 4; i++ {
				c, err := dup(p, r.World())
				if err != nil {
					return err
				}
				if r.rank == 0 {
					o.ids = append(o.ids, c.ContextID())
				}
				if err := c.Free(p); err != nil {
					return err
				}
			}
			if r.rank == 0 {
				s := r.CPU().Stats()
				o.took, o.atomics = p.Now()-t0, s.Atomics-s0.Atomics
				o.loadsSt = s.Loads + s.Stores - s0.Loads - s0.Stores
			}
			return nil
		})
		return o
	}
	for _, level := range []Level{LevelSingle, LevelMultiple} {
		ctx, full := run(CommDupContextID, level), run(CommDupMPICH2, level)
		if fmt.Sprint(ctx.ids) != fmt.Sprint(full.ids) {
			t.Errorf("%v: context ids %v with context-id, %v with mpich2", level, ctx.ids, full.ids)
		}
		if full.took <= ctx.took || full.loadsSt <= ctx.loadsSt {
			t.Errorf("%v: mpich2 took %v with %d loads and stores, context-id %v with %d: want more", level, full.took, full.loadsSt, ctx.took, ctx.loadsSt)
		}
		// The table's two references and the object's release, and the MPI
		// lock twice, against the communicator's two references.
		if level == LevelMultiple && full.atomics != ctx.atomics+4*3 {
			t.Errorf("%v: %d atomics with mpich2, %d with context-id: want 3 more a dup and free", level, full.atomics, ctx.atomics)
		}
		t.Logf("%v: context-id %v, mpich2 %v for 4 dups and frees", level, ctx.took, full.took)
	}
	params := DefaultParamsFor(DeviceSock)
	params.CommDup = CommDupContextID
	runSock(t, params, LevelSingle, func(p *sim.Proc, r *Rank) error {
		if _, err := r.CreateKeyval(p, AttrDupCopy); err == nil || !strings.Contains(err.Error(), "comm_dup mpich2") {
			return fmt.Errorf("keyval with comm_dup context-id: %v, want an error naming comm_dup mpich2", err)
		}
		return nil
	})
}
