package sysv

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestSemop: a P on a zero semaphore sleeps until a V; each call costs
// one system call; a bad id is an error naming the machine.
func TestSemop(t *testing.T) {
	eng := sim.NewEngine(1)
	s := NewSet("m", sim.Microsecond)
	id := s.Semget("lock", 0)
	var got sim.Time
	eng.Spawn("p", func(p *sim.Proc) {
		if err := s.Semop(p, 0, id, -1); err != nil {
			t.Error(err)
		}
		got = p.Now()
	})
	eng.Spawn("v", func(p *sim.Proc) {
		p.Sleep(5 * sim.Microsecond)
		if err := s.Semop(p, 1, id, +1); err != nil {
			t.Error(err)
		}
		if err := s.Semop(p, 1, 7, +1); err == nil || !strings.Contains(err.Error(), "m: semop by rank 1: no semaphore 7") {
			t.Errorf("bad id: %v", err)
		}
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if want := 6 * sim.Microsecond; got != want || s.Value(id) != 0 {
		t.Errorf("P returned at %v with value %d, want %v and 0", got, s.Value(id), want)
	}
}
