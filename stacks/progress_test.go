package stacks

import "testing"

// plainRank offers Rank only: no progress rule of its own.
type plainRank struct{ Comm }

// ruledRank states a split rule.
type ruledRank struct{ Comm }

func (ruledRank) ProgressRule() Progress { return Progress{Split: true, Rule: "r", Source: "s"} }

// TestProgressOf: a stack's own rule, else MPI's.
func TestProgressOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		w     *World
		split bool
	}{
		{"no ranks", &World{}, false},
		{"no rule of its own", &World{Ranks: []Rank{plainRank{}}}, false},
		{"its own", &World{Ranks: []Rank{ruledRank{}}}, true},
	} {
		p := ProgressOf(tc.w)
		if p.Split != tc.split || p.Rule == "" || p.Source == "" {
			t.Errorf("%s: %+v, want split %v with a rule and a source", tc.name, p, tc.split)
		}
	}
}
