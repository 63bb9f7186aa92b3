package report

import (
	"bytes"
	"testing"
)

// TestHeatmap: a matrix draws as a PNG, the same bytes every time; an
// empty or ragged matrix is an error.
func TestHeatmap(t *testing.T) {
	m := [][]float64{{0, 8, 0}, {0, 0, 8}, {8, 0, 0}}
	a, err := Heatmap("ring", "to", "from", "bytes", m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Heatmap("ring", "to", "from", "bytes", m)
	if err != nil || !bytes.Equal(a, b) || !bytes.HasPrefix(a, []byte("\x89PNG")) {
		t.Errorf("not the same PNG twice (%v)", err)
	}
	for _, bad := range [][][]float64{nil, {{1, 2}, {3}}} {
		if _, err := Heatmap("x", "", "", "", bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
