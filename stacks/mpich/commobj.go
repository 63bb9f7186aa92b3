package mpich

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// MPICH2's communicator objects: the rest of MPI_Comm_dup and
// MPI_Comm_free besides the context id (papers/mpich2-threads.txt section
// 5.3.2: "the MPI function MPI_Comm_dup, in which the most time-consuming
// operation is the generation of a new context id"). The code follows
// MPICH2 1.0's MPI layer as we read its structure (comm_dup.c,
// comm_free.c, commutil.c, attrutil.c, handlemem.c); the paper describes
// none of it beyond reference counts (section 4.1) and the single lock
// (section 4.5):
//
//   - MPI_Comm_dup: the binding (handle decoding, argument checks), then
//     MPIR_Comm_copy: the context id (MPIR_Get_contextid: Figure 3, or
//     5.1's, whose allreduce is a nested call of MPI_Allreduce's binding,
//     NMPI_Allreduce, section 4.2's nesting level), MPIR_Comm_create (an object from the communicators' handle
//     pool, MPIU_Handle_obj_alloc, its reference count set to 1 and its
//     fields cleared), the context id, kind, rank and sizes copied, the
//     parent's virtual-connection table shared (MPID_VCRT_Add_ref: the
//     process group of a communicator of the same size is a reference,
//     not a copy; its MPID_Group objects are made only on demand, by
//     MPI_Comm_group, so MPIR_Comm_create leaves local_group and
//     remote_group 0), the error handler inherited with a reference if it
//     is set; then the attributes, through MPIR_Process.attr_dup
//     (MPIR_Attr_dup_list, set once a keyval exists): each of the parent's
//     attributes' copy callback called, and each it keeps copied into a
//     new attribute object, its keyval referenced.
//   - MPI_Comm_free: the binding, then MPIR_Comm_release: the reference
//     count decremented and, at zero, the attributes' delete callbacks
//     (MPIR_Process.attr_free), the virtual-connection table released,
//     the groups released if made, the context id returned to the mask
//     (MPIR_Free_contextid), the error handler released if set, and the
//     object returned to its pool (MPIU_Handle_obj_free).
//
// Every field is a word of the object in the process's memory, loaded and
// stored through the CPU; reference counts are changed atomically when
// thread locks are taken (section 4.1). The object work of a call runs
// under the process's MPI lock, the single lock that "effectively
// serializes the MPI functions among threads" (section 4.5) and that the
// progress engine holds for each of its steps: it overlaps another
// thread's wait in poll(), not its progress steps.
//
// This is MPICH2's MPI layer, run with comm_dup mpich2 (Params.CommDup),
// the default of ch3:sock (the stack's MPICH2 channel). The stack's other
// devices are MPICH 1's (the SX-4 and T3D papers), whose MPI_Comm_dup is
// modelled by its context-id agreement alone unless a scenario asks for
// MPICH2's.

// Software costs of the MPI layer's communicator code, in CPU cycles (the
// loads, stores and atomics are the machine's).
const (
	// bindingCycles is an MPI function's binding besides its body: the
	// handle decoded into an object pointer (MPID_Comm_get_ptr), the
	// argument checks of MPICH2's default build (error checking compiled
	// in: MPID_Comm_valid_ptr, the null-argument tests) and the entry and
	// exit macros. Assumed 150 cycles: a few dozen compares, loads and
	// branches at the Pentium 4's rate on branchy code (about one
	// instruction a cycle or less); the paper gives no figure.
	bindingCycles = 150
	// callCycles is a C function call and return with its prologue and
	// epilogue (MPIR_Comm_copy, MPIR_Comm_create, MPIU_Handle_obj_alloc,
	// an attribute callback through its pointer, ...). Assumed 10 cycles:
	// a call, a return predicted by the return stack, a few register
	// saves.
	callCycles = 10
	// commPrealloc and attrPrealloc are the numbers of communicator and
	// attribute objects preallocated in their handle pools' direct blocks
	// (MPID_COMM_PREALLOC, MPID_ATTR_PREALLOC); more come in indirect
	// blocks of handleBlock objects (HANDLE_BLOCK_SIZE), each allocated
	// and linked when the free list runs out. Assumed 8, 32 and 256,
	// MPICH2 1.0's mpiimpl.h and handlemem.c as we recall them: the
	// benchmark of Figure 4 holds at most three communicators at once and
	// no attribute, so none changes a figure.
	commPrealloc = 8
	attrPrealloc = 32
	handleBlock  = 256
)

// The fields of an MPID_Comm, one word each, at their offsets in the
// object. While the object is free its third word is MPIU_Handle_common's
// next (the free list), over the context id.
const (
	commHandle      = 0
	commRefCount    = 8
	commNext        = 16
	commContextID   = 16
	commKind        = 24
	commRankF       = 32
	commLocalSize   = 40
	commRemoteSize  = 48
	commIsLowGroup  = 56
	commVCRT        = 64
	commVCR         = 72
	commLocalGroup  = 80
	commRemoteGroup = 88
	commLocalComm   = 96
	commErrhandler  = 104
	commAttributes  = 112
	commCollFns     = 120
	commTopoFns     = 128
	commName        = 136 // char name[MPI_MAX_OBJECT_NAME]
	commObjBytes    = commName + 128
	// commSlotBytes is a pool slot: the object, then the communicator's
	// allreduce send and receive buffers (Figure 3's local_mask and
	// MPIR_Allreduce's temporary buffer).
	commSlotBytes = commObjBytes + 2*maskBytes
	intracomm     = 1 // MPID_INTRACOMM
)

// The fields of an MPID_Attribute and of an MPID_Keyval.
const (
	attrHandle   = 0
	attrRefCount = 8
	attrNext     = 16
	attrKeyval   = 24
	attrValue    = 32
	attrObjBytes = 40

	keyvalRefCount = 8
	keyvalObjBytes = 16
)

// The process's MPI-layer words (MPIR_Process and the pools' heads), at
// their offsets.
const (
	mpirCommAvail = 0  // MPID_Comm_mem.avail: the first free communicator
	mpirAttrAvail = 8  // MPID_Attr_mem.avail
	mpirAttrDup   = 16 // MPIR_Process.attr_dup: non-zero once a keyval exists
	mpirAttrFree  = 24 // MPIR_Process.attr_free
	mpirVCRTRef   = 32 // MPI_COMM_WORLD's virtual-connection table: its reference count
	mpirWorld     = 64 // MPI_COMM_WORLD's object (MPID_Comm_builtin)
	mpirBytes     = mpirWorld + commObjBytes
)

// AttrCopy is a keyval's copy callback (MPI_Comm_create_keyval).
type AttrCopy int

// The copy callbacks MPI predefines.
const (
	// AttrNullCopy is MPI_COMM_NULL_COPY_FN: the attribute is not copied
	// (flag 0).
	AttrNullCopy AttrCopy = iota
	// AttrDupCopy is MPI_COMM_DUP_FN: the value is copied (flag 1).
	AttrDupCopy
)

// keyval is an attribute key of the process.
type keyval struct {
	copy AttrCopy
	obj  mem.Addr
}

// handlePool is an MPIU_Object_alloc_t: a free list of objects of one kind, its
// head at avail, refilled a block at a time.
type handlePool struct {
	name     string
	avail    mem.Addr
	slot     int // bytes a slot
	next     int // offset of the free list's link in a free object
	prealloc int
	handles  int
}

// mpir is a process's MPI-layer state (MPICH2 only).
type mpir struct {
	base    mem.Addr
	mem     *mem.Memory // the process's memory the objects are in
	ready   bool
	comms   handlePool
	attrs   handlePool
	keyvals []keyval
}

// CommDup values (Params.CommDup).
const (
	CommDupMPICH2    = "mpich2"
	CommDupContextID = "context-id"
)

// mpich2 reports whether the rank runs MPICH2's communicator code.
func (r *Rank) mpich2() bool { return r.w.params.CommDup == CommDupMPICH2 }

// mpirInit allocates the process's MPI-layer words and MPI_COMM_WORLD's
// object the first time a communicator is duplicated, initialised as
// MPI_Init leaves them (untimed: MPI_Init's work): the pools empty, no
// keyval, the world's table referenced once, its object holding the
// world's rank and size.
func (r *Rank) mpirInit() error {
	m := &r.mpir
	if m.ready {
		return nil
	}
	b, err := r.w.host.Alloc(r.rank, "mpi layer", mpirBytes)
	if err != nil {
		return fmt.Errorf("mpich: rank %d: MPI_Comm_dup: %w", r.rank, err)
	}
	m.base, m.ready = b.Addr, true
	m.comms = handlePool{name: "communicators", avail: b.Addr + mpirCommAvail, slot: commSlotBytes, next: commNext, prealloc: commPrealloc}
	m.attrs = handlePool{name: "attributes", avail: b.Addr + mpirAttrAvail, slot: attrObjBytes, next: attrNext, prealloc: attrPrealloc}
	w := b.Addr + mpirWorld
	m.mem = b.Mem
	r.cpu.Update(nil, b.Addr+mpirVCRTRef, mpirWorld+commVCR+8-mpirVCRTRef, 0, func(raw []byte) {
		poke := func(a mem.Addr, v uint64) {
			binary.LittleEndian.PutUint64(raw[a-(b.Addr+mpirVCRTRef):], v)
		}
		poke(b.Addr+mpirVCRTRef, 1)
		poke(w+commHandle, 0x44000000) // MPI_COMM_WORLD's handle
		poke(w+commRefCount, 1)
		poke(w+commKind, intracomm)
		poke(w+commRankF, uint64(r.rank))
		poke(w+commLocalSize, uint64(r.Size()))
		poke(w+commRemoteSize, uint64(r.Size()))
		poke(w+commVCRT, uint64(b.Addr+mpirVCRTRef))
		poke(w+commVCR, uint64(b.Addr+mpirVCRTRef+8))
	})
	r.ctx.world.obj = w
	return nil
}

// objAlloc is MPIU_Handle_obj_alloc: the first object of the pool's free
// list, the list refilled with a new block (MPIU_Handle_direct_init, then
// MPIU_Handle_indirect_init) when empty.
func (r *Rank) objAlloc(p *sim.Proc, pl *handlePool) (mem.Addr, error) {
	c := r.cpu
	c.Compute(p, callCycles)
	obj := mem.Addr(c.Load(p, pl.avail, 8))
	if obj == 0 {
		n := pl.prealloc
		if pl.handles > 0 {
			n = handleBlock
		}
		b, err := r.w.host.Alloc(r.rank, fmt.Sprintf("%s block %d", pl.name, pl.handles/handleBlock), n*pl.slot)
		if err != nil {
			return 0, fmt.Errorf("mpich: rank %d: %s: %w", r.rank, pl.name, err)
		}
		for i := 0; i < n; i++ { // link the block's objects, in order
			a := b.Addr + mem.Addr(i*pl.slot)
			var next uint64
			if i+1 < n {
				next = uint64(a) + uint64(pl.slot)
			}
			c.Store(p, a+commHandle, 8, uint64(pl.handles+i+1))
			c.Store(p, a+mem.Addr(pl.next), 8, next)
		}
		pl.handles += n
		obj = b.Addr
	}
	c.Store(p, pl.avail, 8, c.Load(p, obj+mem.Addr(pl.next), 8))
	return obj, nil
}

// objFree is MPIU_Handle_obj_free: the object pushed back on its pool's
// free list.
func (r *Rank) objFree(p *sim.Proc, pl *handlePool, obj mem.Addr) {
	c := r.cpu
	c.Compute(p, callCycles)
	c.Store(p, obj+mem.Addr(pl.next), 8, c.Load(p, pl.avail, 8))
	c.Store(p, pl.avail, 8, uint64(obj))
}

// refAdd is MPIU_Object_add_ref (delta 1) or MPIU_Object_release_ref
// (delta -1) on the reference count at a (section 4.1: atomic when thread
// locks are taken, a load and a store otherwise); it returns the new
// count.
func (r *Rank) refAdd(p *sim.Proc, a mem.Addr, delta int) uint64 {
	c := r.cpu
	if r.th.locks {
		return c.FetchAdd(p, a, uint64(delta)) + uint64(delta)
	}
	v := c.Load(p, a, 8) + uint64(delta)
	c.Store(p, a, 8, v)
	return v
}

// commCopy is the rest of MPIR_Comm_copy once the context id is agreed:
// MPIR_Comm_create and the fields copied from the parent c, under the
// process's MPI lock.
func (c *Comm) commCopy(p *sim.Proc, id int) (*Comm, error) {
	r := c.r
	cpu := r.cpu
	r.csLock(p)
	defer r.csUnlock(p)
	cpu.Compute(p, callCycles) // MPIR_Comm_create
	obj, err := r.objAlloc(p, &r.mpir.comms)
	if err != nil {
		return nil, err
	}
	o := func(f int) mem.Addr { return obj + mem.Addr(f) }
	from := func(f int) uint64 { return cpu.Load(p, c.obj+mem.Addr(f), 8) }
	cpu.Store(p, o(commRefCount), 8, 1) // MPIU_Object_set_ref
	for _, f := range []int{commContextID, commAttributes, commRemoteGroup, commLocalGroup,
		commCollFns, commTopoFns, commName, commErrhandler, commLocalComm} {
		cpu.Store(p, o(f), 8, 0)
	}
	cpu.Store(p, o(commContextID), 8, uint64(id))
	cpu.Store(p, o(commKind), 8, from(commKind))
	// Same size: the parent's virtual-connection table shared by reference.
	vcrt := mem.Addr(from(commVCRT))
	r.refAdd(p, vcrt, 1) // MPID_VCRT_Add_ref
	cpu.Store(p, o(commVCRT), 8, uint64(vcrt))
	cpu.Store(p, o(commVCR), 8, from(commVCR))
	for _, f := range []int{commRankF, commLocalSize, commRemoteSize, commIsLowGroup} {
		cpu.Store(p, o(f), 8, from(f))
	}
	eh := from(commErrhandler) // inherited, referenced if set
	cpu.Store(p, o(commErrhandler), 8, eh)
	if eh != 0 {
		r.refAdd(p, mem.Addr(eh)+8, 1)
	}
	n := &Comm{r: r, ctx: id, obj: obj, ref: o(commRefCount), refs: 1}
	n.buf[0] = mem.Region{Mem: r.mpir.mem, Addr: obj + commObjBytes, Len: maskBytes}
	n.buf[1] = mem.Region{Mem: r.mpir.mem, Addr: obj + commObjBytes + maskBytes, Len: maskBytes}
	// MPI_Comm_dup: the attributes, through MPIR_Process.attr_dup.
	if cpu.Load(p, r.mpir.base+mpirAttrDup, 8) != 0 {
		if err := c.attrDupList(p, n); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// attrDupList is MPIR_Attr_dup_list: each attribute of c's list, in order,
// passed to its keyval's copy callback; each the callback keeps is copied
// into a new attribute object appended to n's list, its keyval referenced.
func (c *Comm) attrDupList(p *sim.Proc, n *Comm) error {
	r := c.r
	cpu := r.cpu
	cpu.Compute(p, callCycles)
	tail := n.obj + commAttributes
	for a := mem.Addr(cpu.Load(p, c.obj+commAttributes, 8)); a != 0; a = mem.Addr(cpu.Load(p, a+attrNext, 8)) {
		k := int(cpu.Load(p, a+attrKeyval, 8))
		if k < 1 || k > len(r.mpir.keyvals) {
			return fmt.Errorf("mpich: rank %d: MPI_Comm_dup: attribute of communicator %d has keyval %d, not a keyval of the process", r.rank, c.ctx, k)
		}
		kv := r.mpir.keyvals[k-1]
		value := cpu.Load(p, a+attrValue, 8)
		cpu.Compute(p, callCycles) // MPIR_Call_attr_copy: the callback through its pointer
		if kv.copy != AttrDupCopy {
			continue // flag 0: not copied
		}
		na, err := r.objAlloc(p, &r.mpir.attrs)
		if err != nil {
			return err
		}
		r.attrInit(p, na, k, value)
		r.refAdd(p, kv.obj+keyvalRefCount, 1)
		cpu.Store(p, tail, 8, uint64(na))
		tail = na + attrNext
	}
	return nil
}

// release is MPIR_Comm_release, under the process's MPI lock: the
// reference dropped and, at zero, the object's parts released, the
// context id returned and the object freed.
func (c *Comm) release(p *sim.Proc) error {
	r := c.r
	cpu := r.cpu
	r.csLock(p)
	defer r.csUnlock(p)
	cpu.Compute(p, callCycles)
	c.refs--
	if r.refAdd(p, c.ref, -1) != 0 {
		return nil
	}
	o := func(f int) mem.Addr { return c.obj + mem.Addr(f) }
	if cpu.Load(p, r.mpir.base+mpirAttrFree, 8) != 0 && cpu.Load(p, o(commAttributes), 8) != 0 {
		c.attrDeleteList(p)
	}
	cpu.Compute(p, callCycles)                             // MPID_Dev_comm_destroy_hook: nothing for ch3:sock
	r.refAdd(p, mem.Addr(cpu.Load(p, o(commVCRT), 8)), -1) // MPID_VCRT_Release
	for _, f := range []int{commLocalGroup, commRemoteGroup} {
		if g := cpu.Load(p, o(f), 8); g != 0 { // MPIR_Group_release
			r.refAdd(p, mem.Addr(g)+8, -1)
		}
	}
	r.freeContextID(p, c.ctx)
	if eh := cpu.Load(p, o(commErrhandler), 8); eh != 0 {
		r.refAdd(p, mem.Addr(eh)+8, -1)
	}
	r.objFree(p, &r.mpir.comms, c.obj)
	return nil
}

// attrDeleteList is MPIR_Attr_delete_list: each attribute's delete
// callback called (the predefined keyvals' is MPI_NULL_DELETE_FN), its
// keyval's reference dropped and the attribute object freed.
func (c *Comm) attrDeleteList(p *sim.Proc) {
	r := c.r
	cpu := r.cpu
	cpu.Compute(p, callCycles)
	a := mem.Addr(cpu.Load(p, c.obj+commAttributes, 8))
	for a != 0 {
		next := mem.Addr(cpu.Load(p, a+attrNext, 8))
		k := int(cpu.Load(p, a+attrKeyval, 8))
		cpu.Compute(p, callCycles) // the delete callback
		if k >= 1 && k <= len(r.mpir.keyvals) {
			r.refAdd(p, r.mpir.keyvals[k-1].obj+keyvalRefCount, -1)
		}
		r.objFree(p, &r.mpir.attrs, a)
		a = next
	}
	cpu.Store(p, c.obj+commAttributes, 8, 0)
}

// CreateKeyval is MPI_Comm_create_keyval with the copy callback copy and
// MPI_NULL_DELETE_FN (comm_dup mpich2 only): it returns the keyval. The
// first keyval sets MPIR_Process.attr_dup and attr_free, so that
// MPI_Comm_dup and MPI_Comm_free walk attribute lists from then on.
func (r *Rank) CreateKeyval(p *sim.Proc, copy AttrCopy) (int, error) {
	if !r.mpich2() {
		return 0, fmt.Errorf("mpich: rank %d: MPI_Comm_create_keyval: attributes need comm_dup %s, not %s", r.rank, CommDupMPICH2, r.w.params.CommDup)
	}
	if err := r.mpirInit(); err != nil {
		return 0, err
	}
	b, err := r.w.host.Alloc(r.rank, fmt.Sprintf("keyval %d", len(r.mpir.keyvals)+1), keyvalObjBytes)
	if err != nil {
		return 0, fmt.Errorf("mpich: rank %d: MPI_Comm_create_keyval: %w", r.rank, err)
	}
	cpu := r.cpu
	cpu.Compute(p, bindingCycles)
	cpu.Store(p, b.Addr+keyvalRefCount, 8, 1)
	cpu.Store(p, r.mpir.base+mpirAttrDup, 8, 1)
	cpu.Store(p, r.mpir.base+mpirAttrFree, 8, 1)
	r.mpir.keyvals = append(r.mpir.keyvals, keyval{copy: copy, obj: b.Addr})
	return len(r.mpir.keyvals), nil
}

// SetAttr is MPI_Comm_set_attr (comm_dup mpich2 only): the value of the
// communicator's attribute of that keyval replaced, or a new attribute
// object appended to its list.
func (c *Comm) SetAttr(p *sim.Proc, key int, value uint64) error {
	r := c.r
	if !r.mpich2() || !r.mpir.ready {
		return fmt.Errorf("mpich: rank %d: MPI_Comm_set_attr: no keyval created (MPI_Comm_create_keyval)", r.rank)
	}
	if key < 1 || key > len(r.mpir.keyvals) {
		return fmt.Errorf("mpich: rank %d: MPI_Comm_set_attr: keyval %d not created", r.rank, key)
	}
	cpu := r.cpu
	cpu.Compute(p, bindingCycles)
	r.csLock(p)
	defer r.csUnlock(p)
	tail := c.obj + commAttributes
	for a := mem.Addr(cpu.Load(p, tail, 8)); a != 0; a = mem.Addr(cpu.Load(p, tail, 8)) {
		if int(cpu.Load(p, a+attrKeyval, 8)) == key {
			cpu.Store(p, a+attrValue, 8, value)
			return nil
		}
		tail = a + attrNext
	}
	na, err := r.objAlloc(p, &r.mpir.attrs)
	if err != nil {
		return err
	}
	r.attrInit(p, na, key, value)
	r.refAdd(p, r.mpir.keyvals[key-1].obj+keyvalRefCount, 1)
	cpu.Store(p, tail, 8, uint64(na))
	return nil
}

// attrInit stores a new attribute object's fields at obj, a word at a
// time: its reference count and next link 0, its keyval and value.
func (r *Rank) attrInit(p *sim.Proc, obj mem.Addr, key int, value uint64) {
	for i, v := range [...]uint64{0, 0, uint64(key), value} { // ref, next, keyval, value
		r.cpu.Store(p, obj+attrRefCount+mem.Addr(8*i), 8, v)
	}
}
