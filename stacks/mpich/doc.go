// Package mpich is MPICH's point-to-point layer as ported to the NEC SX-4
// (papers/mpich-sx4.txt): the short, eager and rendezvous protocols over an
// abstract device, with two shared-memory devices.
//
// # Layers
//
// Rank (adi.go) is one process's MPI: Send, Recv, Isend, Irecv with tags
// and AnySource/AnyTag (it implements stacks.Comm). It picks the protocol
// by length (section 3): short (< short_bytes, default 1024: data inside
// the control packet), eager (<= eager_bytes, default 128 KB: data copied
// at once into the shared pool, one packet names it), rendezvous (longer:
// a request-to-send packet, an ok-to-send reply once the receive is
// posted, then the data through the pool in segments as large as the pool
// allows, one data packet each). Messages between a pair never overtake.
// Its progress engine sends queued packets, reads incoming ones, and backs
// off (1 us doubling to 32 us, "perhaps only a microsecond later") when a
// slot, a queue or the pool is full.
//
// Device (device.go) is the abstract device: SendControl / ReadControl /
// WaitControl for control packets, AllocData / PutData / GetData /
// FreeData / DataAt / DataCapacity for message data. The two devices here
// need the SharedMemory capability (machines/sx4 provides it):
//
//   - ch_shmem (shmem.go): one packet queue per receiving process, many
//     writers, appended to under the queue's lock (section 3).
//   - ch_lfshmem (lfshmem.go): p x p single-writer packet slots with ready
//     bits; the receiver scans its p-1 slots (Figure 2); the sender copies
//     a packet in with PKT_COPYIN and sets the bit with PKT_READY_SET
//     (Figure 3), or backs off while the slot is full.
//
// Both put eager and rendezvous data through one shared pool (pool.go)
// guarded by a lock, of kind sysv (System V semaphore) or tas (test-and-set).
// Every lock acquisition flushes the whole cache (section 5: "a general
// lock operation will always be relatively expensive"). A put-based device
// for the T3D belongs in files t3d*.go: it implements Device with puts into
// the receiver's memory and needs its own capability interface, not
// SharedMemory; Rank does not change.
//
// The shared segment (shared_memory_bytes, 4 MB by default) holds the
// queues or the 32x32 slot array and then the pool, so the pool is about
// 4.1 MB for ch_shmem and 3.0 MB for ch_lfshmem: the Figure 4 dip near
// 3 MB is where a rendezvous needs a second segment.
//
// # Teaching switches
//
// fences: false drops the synchronization in PKT_COPYIN, PKT_READY_SET and
// lock release; the receiver then reads packets whose header stores were
// not yet visible, and reports a *CorruptionError (rank, byte offset in the
// packet, time). ready_bit_cached: true reads ready bits and queue tails
// through the non-coherent cache: the run ends in a livelock.
//
// # Calibration
//
// The only time the stack charges itself is packetCycles (1700 cycles,
// 13.6 us) of software per control packet on each side, calibrated to
// Figure 6 at 0 bytes (37 us). The other calibrated values are machine
// parameters (machines/sx4): semop_us <- Figure 1, cache_flush_us <-
// Figure 5. Everything else (the 40 us of Figure 4, 90 us at 1 KB in
// Figure 6, 120 us with two locks in Figure 5, 1.2 GB/s, the 3 MB dip, the
// rising Figure 1 bandwidth) follows from the protocol code.
package mpich
