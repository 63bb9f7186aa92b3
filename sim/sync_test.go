package sim

import (
	"strings"
	"testing"
)

// TestMutexFIFOHandoff: waiters get the mutex in arrival order and the
// critical sections never overlap.
func TestMutexFIFOHandoff(t *testing.T) {
	e := NewEngine(1)
	m := NewMutex("m")
	var order []string
	inside := 0
	for _, n := range []string{"a", "b", "c"} {
		e.Spawn(n, func(p *Proc) {
			m.Lock(p)
			inside++
			if inside != 1 {
				t.Errorf("%s: %d processes inside the critical section", n, inside)
			}
			order = append(order, n)
			p.Sleep(Microsecond)
			inside--
			m.Unlock(p)
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ""); got != "abc" {
		t.Errorf("order %q, want abc", got)
	}
	if e.Now() != 3*Microsecond {
		t.Errorf("ended at %v, want 3us", e.Now())
	}
}

// TestMutexDeadlyEmbrace: two processes taking two mutexes in opposite
// orders deadlock, and the report names both mutexes and their holders.
func TestMutexDeadlyEmbrace(t *testing.T) {
	e := NewEngine(1)
	a, b := NewMutex("A"), NewMutex("B")
	e.Spawn("t0", func(p *Proc) { a.Lock(p); p.Sleep(1); b.Lock(p) })
	e.Spawn("t1", func(p *Proc) { b.Lock(p); p.Sleep(1); a.Lock(p) })
	err := e.Run()
	if !IsDeadlock(err) {
		t.Fatalf("got %v, want a deadlock", err)
	}
	for _, want := range []string{"t0 blocked", "mutex B held by t1", "mutex A held by t0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("report %q lacks %q", err, want)
		}
	}
}

// TestCondSignal: a consumer waiting on a condition wakes when the producer
// signals, holding the mutex again.
func TestCondSignal(t *testing.T) {
	e := NewEngine(1)
	m, c := NewMutex("m"), NewCond("c")
	ready := false
	var woke Time
	e.Spawn("consumer", func(p *Proc) {
		m.Lock(p)
		for !ready {
			c.Wait(p, m)
		}
		if m.Holder() != p {
			t.Error("woke without the mutex")
		}
		woke = p.Now()
		m.Unlock(p)
	})
	e.Spawn("producer", func(p *Proc) {
		p.Sleep(5 * Microsecond)
		m.Lock(p)
		ready = true
		c.Signal()
		m.Unlock(p)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if woke != 5*Microsecond {
		t.Errorf("woke at %v", woke)
	}
}
