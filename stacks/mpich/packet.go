package mpich

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Control packet kinds (section 3).
const (
	pktShort  = iota + 1 // envelope + data
	pktEager             // envelope; data in the shared pool
	pktRTS               // rendezvous: request to send (envelope)
	pktOK                // rendezvous: the receive is posted, send the data
	pktData              // rendezvous: one segment of data in the shared pool
	pktFin               // rendezvous: the data has been put into the receive buffer (direct devices)
	pktStream            // ch3:sock: n bytes of rendezvous data for addr follow on the stream (the device's own)
	pktKinds
)

var kindNames = [...]string{"?", "short", "eager", "request-to-send", "ok-to-send", "data", "fin", "stream data"}

// Control packet layout: 8-byte little-endian words, the ready word first
// (Figure 3 sets pkt->ready = 0 and copies the whole packet into the slot),
// then the envelope and protocol fields, then the inline data.
const (
	wReady = iota
	wMagicKind
	wSrc
	wSeq
	wTag
	wLen
	wSreq
	wRreq
	wAddr
	wOff
	wN
	// wCheck is a check word over the header: the simulator's detector of
	// stale packets. It stands for the debugging checks section 8 mentions
	// ("removing all debugging capabilities"); MPICH had no such checksum.
	wCheck
	hdrWords

	// HeaderBytes is the size of a control packet's header.
	HeaderBytes = 96
	magic       = 0x4d504943 // "MPIC"
)

// header is a decoded control packet header.
type header struct {
	kind       int
	src        int
	seq        uint64
	tag        int
	len        int
	sreq, rreq uint64
	addr       mem.Addr // data memory (eager, data), or the receive buffer (ok-to-send, fin: direct devices)
	off, n     int      // segment of the message (data); the receive buffer's length (ok-to-send)
}

func (h *header) words() [hdrWords]uint64 {
	w := [hdrWords]uint64{
		0, magic<<8 | uint64(h.kind), uint64(h.src), h.seq, uint64(int64(h.tag)), uint64(h.len),
		h.sreq, h.rreq, uint64(h.addr), uint64(h.off), uint64(h.n),
	}
	w[wCheck] = checkWord(w[:wCheck])
	return w
}

// checkWord mixes the header words (after the ready word) into one: a
// packet whose header is partly stale fails the check.
func checkWord(w []uint64) uint64 {
	x := uint64(0x6a09e667f3bcc909)
	for _, v := range w[wMagicKind:] {
		x = (x ^ v) * 0x100000001b3
		x ^= x >> 29
	}
	return x
}

// CorruptionError reports a control packet whose contents are not what its
// sender wrote (stale bytes): who received it, from whom, which byte of the
// packet is wrong, and when.
type CorruptionError struct {
	Rank, From int    // From is -1 when the sender is unknown (a ch_shmem queue has many writers)
	Where      string // where the packet was read, when the sender is unknown
	Offset     int    // byte offset in the packet
	At         sim.Time
	What       string
}

func (e *CorruptionError) Error() string {
	from := fmt.Sprintf("rank %d", e.From)
	if e.From < 0 {
		from = "an unknown sender (" + e.Where + ")"
	}
	return fmt.Sprintf("rank %d: corrupted control packet from %s: byte offset %d of the packet %s, at %v", e.Rank, from, e.Offset, e.What, e.At)
}

// readHeader reads and checks the header of the packet in pkt (private
// memory the device copied it into) as the process's program sees it.
// Reading it costs no cycles of its own: decoding is part of the software
// of the receive path, which the caller charges.
func readHeader(c machines.Processor, p *sim.Proc, pkt mem.Region, rank, from, procs int) (header, error) {
	var hr headerReader
	return hr.read(c, p, pkt, rank, from, procs)
}

// headerReader is readHeader with its callback bound once: a device or a
// rank that reads a header per packet keeps one, since a closure passed
// to Processor.Update is allocated at each call.
type headerReader struct {
	p                 *sim.Proc
	rank, from, procs int
	h                 header
	err               error
	fn                func(b []byte) // decode
}

func (hr *headerReader) read(c machines.Processor, p *sim.Proc, pkt mem.Region, rank, from, procs int) (header, error) {
	if hr.fn == nil {
		hr.fn = hr.decode
	}
	hr.p, hr.rank, hr.from, hr.procs = p, rank, from, procs
	c.Update(p, pkt.Addr, HeaderBytes, 0, hr.fn)
	h, err := hr.h, hr.err
	hr.p, hr.h, hr.err = nil, header{}, nil
	return h, err
}

func (hr *headerReader) decode(b []byte) {
	hr.h, hr.err = decodeBytes(b, hr.rank, hr.from, hr.procs, hr.p.Now())
}

// decodeBytes checks and decodes the header bytes b of a packet received
// by rank from from (-1: unknown) at now.
func decodeBytes(b []byte, rank, from int, procs int, now sim.Time) (header, error) {
	w := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	bad := func(word int, format string, args ...any) error {
		return &CorruptionError{Rank: rank, From: from, Offset: 8 * word, At: now, What: fmt.Sprintf(format, args...)}
	}
	var words [hdrWords]uint64
	for i := range words {
		words[i] = w(i)
	}
	if checkWord(words[:wCheck]) != words[wCheck] {
		return header{}, bad(wCheck, "(the header check word) does not match the header in bytes 8-87 (stale contents)")
	}
	mk := w(wMagicKind)
	if mk>>8 != magic || mk&0xff == 0 || mk&0xff >= pktKinds {
		return header{}, bad(wMagicKind, "reads %#x, not a packet kind (stale contents)", mk)
	}
	h := header{
		kind: int(mk & 0xff), src: int(w(wSrc)), seq: w(wSeq), tag: int(int64(w(wTag))), len: int(w(wLen)),
		sreq: w(wSreq), rreq: w(wRreq), addr: mem.Addr(w(wAddr)), off: int(w(wOff)), n: int(w(wN)),
	}
	if from >= 0 && h.src != from || h.src < 0 || h.src >= procs {
		return header{}, bad(wSrc, "names source %d (stale contents)", h.src)
	}
	return h, nil
}

// Corruption marks the error as a detected corruption (for workloads).
func (e *CorruptionError) Corruption() bool { return true }
