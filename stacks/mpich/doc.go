// Package mpich is MPICH's point-to-point layer as ported to the NEC SX-4
// (papers/mpich-sx4.txt): the short, eager and rendezvous protocols over an
// abstract device, with two shared-memory devices for the SX-4 and a
// put-based device for the Cray T3D. ch_t3d is an MPICH-style device of
// our own that stands in for the MPI baseline of papers/aclmpl-t3d.txt
// (section 5): that paper's T3D MPI was EPCC's ("The T3D MPI
// implementation was from EPCC. The MPICH implementation could not
// properly execute the test", footnote 5), whose code we do not model.
// The devices ask the machine for the generic verbs of package machines
// (Needs), so each runs wherever its verbs are.
//
// # Layers
//
// Rank (adi.go) is one process's MPI: Send, Recv, Isend, Irecv with tags
// and AnySource/AnyTag (it implements stacks.Comm). It picks the protocol
// by length (section 3): short (< short_bytes, default 1024: data inside
// the control packet), eager (<= eager_bytes, default 128 KB: data copied
// at once into the device's data memory, one packet names it), rendezvous
// (longer: a request-to-send packet, an ok-to-send reply once the receive
// is posted, then the data through the pool in segments as large as the
// pool allows, one data packet each; or, with a device that can put into
// the receiver's memory, one put into the receive buffer and a fin
// packet). Messages between a pair never overtake. Its progress engine
// sends queued packets, reads incoming ones, and backs off (1 us doubling
// to 32 us, "perhaps only a microsecond later") when a slot, a queue or the
// pool is full. Rank needs from the machine only machines.Local (each
// process's CPU and memory) and the library memcpy (machines.Memcpy).
// Everything else goes through the Device.
//
// Device (device.go) is the abstract device: SendControl / ReadControl /
// WaitControl for control packets, AllocData / PutData / GetData /
// FreeData / DataAt / DataCapacity for message data, and the optional
// DirectData, RoomWaiter and PerSenderData. NewWorld picks it by the
// stack param device; a machine without the verbs it needs gives a
// *machines.MissingCapability naming the verb:
//
//   - ch_shmem (shmem.go) and ch_lfshmem (lfshmem.go) on memory every
//     process loads and stores (shared.go): a segment of one node's memory
//     with every process on that node (machines.SharedSegments: the SX-4's
//     System V segment). ch_shmem: one packet queue per receiving process,
//     many writers, appended to under the queue's lock (section 3).
//     ch_lfshmem: p x p single-writer packet slots with ready bits; the
//     receiver scans its p-1 slots (Figure 2); the sender copies a packet
//     in with PKT_COPYIN and sets the bit with PKT_READY_SET (Figure 3),
//     or backs off while the slot is full. Section 5's synchronization
//     routines are the device's own code of CPU operations (mem.CPU):
//     PKT_READY_SET fence, store, fence; PKT_READY_IS_SET an uncached load;
//     PKT_COPYIN a fence and a vector move. Both devices put eager and
//     rendezvous data through one shared pool (pool.go) guarded by a lock,
//     of kind sysv (machines.Semaphores) or tas (the CPU's test-and-set on
//     a word of the segment). Every lock acquisition flushes the whole
//     cache (section 5: "a general lock operation will always be
//     relatively expensive"). Where the hardware keeps the caches
//     coherent (mem.CPU.Coherent: the Power Challenge's snooping bus),
//     none of that is needed: the words are read with plain loads,
//     PKT_COPYIN is the library memcpy, and a lock flushes nothing.
//   - ch_lfshmem across nodes (remote writes, machines.RemoteWrite): the
//     same slot device, each receiver's slots in its own memory
//     (machines.MapRemote). What differs is how a slot is written
//     (slotWriter): the sender puts the packet, waits until it has landed
//     (Quiet: SHMEM's quiet, SCI's MemBarrier, LAPI_Fence), then puts the
//     ready bit, the packet's number; it tests a count the receiver puts
//     into its memory once the slot is empty, so every process polls only
//     its own memory, and a write the fabric lands twice is seen as old.
//     Message data goes as ch_t3d's does.
//   - ch_t3d (t3d.go, t3dfiqueue.go; machines.RemoteWrite). Its packets
//     go into a pool of queue_packets slots in the receiver's memory
//     (receive_queue fetch-inc, the default): a sender claims a slot by
//     reading the receiver's fetch-and-increment register
//     (machines.FetchIncRegister, the T3D's; elsewhere
//     machines.RemoteFetchInc on a word), the buffer management of
//     papers/aclmpl-t3d.txt 4.2; it puts the packet's data, waits with
//     quiet, then puts the header whose ready word marks the slot full; a
//     value past the pool means it is exhausted, and the sender backs off
//     and reads again. The receiver polls its pool's next slot with one
//     uncached load (remote puts leave its cache stale), copies the packet
//     out, clears the ready word, and resets its register once it has
//     taken the pool's last slot. The header's put relies on the machine
//     landing a pair's puts in order (machines.OrderedWrites: the T3D's
//     torus); on a machine without it (the SCI cluster reorders packets)
//     the ready word is put by itself after a quiet.
//     Eager data is put into a buffer of eager_bytes (16 KB by default
//     here) each receiver keeps per sender (allocated in the receiver's
//     memory on the sender's first eager send there, so a run holds only
//     the buffers it uses), released by a put of a count; an unexpected
//     eager message is copied out at once so the buffer frees. Rendezvous
//     data is put straight into the receive buffer the ok-to-send names.
//     The protocols and the per-packet software cost are Rank's, as on the
//     SX-4; on the T3D that software runs as code through the PE's 8 KB
//     instruction cache (code.go: the send and receive paths do not fit
//     it together), and eager data is first packed into the library's
//     send buffer with the machine's memcpy (PutData), so a buffered
//     message pays two library copies at the T3D's 170 MB/s.
//     Two other receive queues are options. receive_queue per-sender is
//     section 5's single-writer slots, made a ring of ring_packets per
//     ordered pair in the receiver's memory, so no lock (ACLMPL's request
//     blocks, "indexed by receiving PE. This avoids the need for locks",
//     papers/aclmpl-t3d.txt 4.1); the receiver scans the next slot of
//     every sender's ring and puts the count it consumed back into the
//     sender's memory (the sender's credit). The scan is one poll of
//     uncached loads of the senders' next ready words
//     (machines.Processor.Poll: a put landing mid-scan is seen by the loads
//     after it), and its waits are spins on those words and the credits
//     (Processor.SpinUntil), which sleep until one of them is written.
//     receive_queue shared (t3dqueue.go) is MPICH's ch_shmem queue design
//     on remote memory: one packet queue per PE in
//     its memory, which a sender appends to under a lock taken with an
//     atomic swap (machines.Swap), reading tail and head with one remote
//     read (machines.RemoteRead) and backing off while the queue is full.
//     With collectives shmem (the default, t3dcoll.go) ch_t3d's ranks offer
//     MPI_Bcast and MPI_Reduce built on remote writes (binomial trees of
//     puts into a system buffer per PE, copied out;
//     stacks.SoleCollectives) instead of leaving the workload to build
//     trees over point-to-point messages (collectives p2p).
//   - ch3:sock (sock.go; machines.Sockets). MPICH2's TCP channel, the one
//     papers/mpich2-threads.txt measured: a connection to every process,
//     written and read with non-blocking system calls; a packet's header,
//     then its inline data, read after poll(); messages up to ch3's eager
//     limit (128 KB, short_bytes and eager_bytes by default here) travel
//     with their envelope, longer ones by rendezvous with the data on the
//     stream behind the ok-to-send, read straight into the receive
//     buffer. The progress engine's blocking wait is poll(), asleep in
//     the kernel with the MPI lock released: the process's other threads
//     run meanwhile. The default allreduce is MPICH2's recursive doubling
//     (allreduce; the other devices' is linear, to and from process 0).
//
// On a shared segment (shared_memory_bytes, 4 MB by default) ch_shmem and
// ch_lfshmem hold the queues or the 32x32 slot array and then the pool, so the pool is about
// 4.1 MB for ch_shmem and 3.0 MB for ch_lfshmem: the Figure 4 dip near
// 3 MB is where a rendezvous needs a second segment.
//
// # Teaching switches
//
// fences: false drops the synchronization in PKT_COPYIN and PKT_READY_SET
// and, with lock tas, in lock release (a sysv release is a semop, which
// always synchronizes); the receiver then reads packets whose header stores
// were not yet visible, and reports a *CorruptionError (rank, byte offset
// in the packet, time). (With ch_t3d and ch_lfshmem across nodes it drops
// the quiet before the ready word: on the T3D, whose network delivers the
// puts between a pair in order, nothing breaks; on the SCI cluster,
// whose packets are reordered, the receiver reads stale packets.)
// ready_bit_cached: true reads ready bits, queue tails or ch_t3d's ready
// words and credits through the non-coherent cache: the run ends in a
// livelock.
//
// # Calibration
//
// The only time the stack charges itself is packet_cycles (1700 cycles,
// 13.6 us on the SX-4, 11.3 us on the T3D's 150 MHz Alpha) of software
// per control packet on each side, fitted to Figure 6 at 0 bytes (37 us)
// by calibration/mpich-packet.yaml, and ch_t3d's pollCycles (4, assumed)
// per ring scanned. ch_t3d charges its own per-packet software instead,
// t3d_send_cycles and t3d_recv_cycles (11209 and 11454 cycles, about 75 us
// each at 150 MHz), fitted by calibration/t3d-mpi.yaml to Table 2's
// one-to-all row of papers/aclmpl-t3d.txt (training data; its other rows
// and the figures judge the fit), run through the send and receive
// paths' code (packet_cycles' footprint); its collectives charge
// packet_cycles once per MPI_Bcast or MPI_Reduce call. It assumes
// eager_bytes 16 KB (also the collectives' system buffer), ring_packets 2
// and queue_packets 16 (see Params). The other fitted values are machine
// parameters (machines/sx4): semop_us by calibration/sx4-semop.yaml,
// cache_flush_us by calibration/sx4-cache-flush.yaml. Everything else (the 40 us of Figure 4, 90 us at 1 KB in
// Figure 6, 120 us with two locks in Figure 5, 1.2 GB/s, the 3 MB dip, the
// rising Figure 1 bandwidth) follows from the protocol code.
//
// # Threads (papers/mpich2-threads.txt)
//
// threads.go: a rank may run several threads (SpawnThread: simulated
// processes sharing its memory and MPI state; a blocking call blocks only
// its thread). InitThread is MPI_Init_thread; Params.Threads is the build
// (single, runtime, multiple, section 2). With locks taken, one mutex per
// process guards each step of the progress engine and is released across
// every blocking wait (section 4; thread_locking per-call is the Figure 2
// deadlock); one waiting thread polls the device, the others yield on a
// condition variable or spin (thread_wait, section 4.6); the nesting level
// is thread-private (4.2); reference counts of communicators are atomic
// under locks (4.1). A thread mutex is the CPU's test-and-set on a lock
// word plus a fence and a store to release (about 1.6 us per lock/unlock
// pair on the SX-4: two 800 ns synchronizing instructions), a kernel
// sleep when contended, whose wake-up costs what the machine's kernel
// says (machines.Scheduler) or else wakeCycles. A level violation is a
// ThreadLevelError naming both threads. contextid.go: communicators,
// MPI_Comm_dup with the algorithms of sections 5.1, 5.2 and Figure 3.
// Default runs (no MPI_Init_thread(multiple), runtime build) take no lock
// and allocate nothing: their results are those of MPICH without threads.
//
// Layer: a stack: imports stacks, machines, sim, sim/mem and
// internal/strictyaml; never a concrete machine (it requires verbs), a
// workload or the registry.
package mpich
