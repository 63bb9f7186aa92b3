package scenarios
import "testing"
func TestTmpLoadMine(t *testing.T) {
	for _, n := range []string{"litmus-mp", "litmus-sb-tso", "litmus-mp-spin-noncoherent"} {
		s, err := LoadBuiltin(n)
		if err != nil { t.Fatal(err) }
		t.Log(n, len(s.Resolved()))
	}
}
