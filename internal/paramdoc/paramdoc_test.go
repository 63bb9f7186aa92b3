package paramdoc

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// TestGeneratedIsCurrent: docs_gen.go is what Extract gives today, so a
// parameter's comment cannot change without simrun params saying so (run
// go generate ./internal/paramdoc).
func TestGeneratedIsCurrent(t *testing.T) {
	docs, err := Extract("../..", "github.com/msgsim/msgsim", Dirs)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("docs_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, Source(docs)) {
		t.Error("docs_gen.go is stale: run go generate ./internal/paramdoc")
	}
}

type sample struct {
	// ClockMHz is the clock: "150 MHz" (a source).
	ClockMHz float64 `yaml:"clock_mhz"`
}

// TestOf: a type is documented by its package path and name; test types
// are not extracted.
func TestOf(t *testing.T) {
	if Of(reflect.TypeOf(sample{})) != nil {
		t.Error("a test type is documented")
	}
	if len(table()) == 0 {
		t.Error("no parameter struct documented")
	}
}
