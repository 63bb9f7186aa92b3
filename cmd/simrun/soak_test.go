package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
)

// TestSoak: 1300 random message programs on every pairing
// offering message passing, each within its stack's progress rule: every
// message once and intact, no deadlock, no livelock (CI's soak; the README
// shows how to run a million). A stack assuming a reliable network is not
// run under fault params, and the soak says so.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("1300 simulated runs (about 7 s)")
	}
	ps, skipped := soakPairings(builtins())
	var stacks []string
	for _, p := range ps {
		stacks = append(stacks, p.name[strings.LastIndex(p.name, "/")+1:])
	}
	for _, want := range []string{"aclmpl", "scampi", "mpich{device: ch_lfshmem}"} {
		if !slices.Contains(stacks, want) {
			t.Errorf("no soak pairing with stack %s: %v", want, stacks)
		}
	}
	code, out, errs := simrun(t, "soak", "--runs", "1300", "--seed", "1")
	if code != exitOK || !strings.Contains(out, "1300 runs on") || !strings.Contains(out, ": 0 failed") || !strings.Contains(out, "seeds 1 to 1300") || strings.Contains(out, "FAIL") ||
		!strings.Contains(out, "\nfailures by pairing and kind: none (") {
		t.Errorf("soak: exit %d\n%s%s", code, out, errs)
	}
	for _, st := range []string{"mpich", "scampi", "aclmpl"} {
		if !regexp.MustCompile(`(?m)^progress rule of ` + st + `: .*\(.*section.*\)$`).MatchString(out) {
			t.Errorf("no progress rule of %s with its source in the output:\n%s", st, out)
		}
	}
	if len(skipped) == 0 {
		t.Errorf("no pairing skipped: ACLMPL (which assumes a reliable network) runs under the SCI's faults")
	}
	for _, k := range skipped {
		if !strings.Contains(out, "skipped "+k.name+": ") || !strings.Contains(k.why, "section") {
			t.Errorf("skipped %s (%s) not said in the output, or without its source:\n%s", k.name, k.why, out)
		}
	}
	// The SCI cluster also runs under its fault params (CRC errors,
	// wider reordering): every message still once and intact, and the
	// faults did happen (ScaMPI's checkpoints caught them and retried).
	faults := regexp.MustCompile(`(?m)^sci\{crc_error_rate: [0-9.]+, reorder_ns: [0-9]+\}/scampi +([0-9]+) runs .* ok\n  machine counters: .*crc_request_hits ([0-9]+), crc_response_hits_written_twice ([0-9]+), .*checkpoint_failures ([0-9]+)`)
	m := faults.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no sci fault pairing with its counters in the soak:\n%s", out)
	}
	for i, what := range []string{"runs", "CRC errors on requests", "CRC errors on responses", "checkpoint failures"} {
		if n, _ := strconv.Atoi(m[i+1]); n < 20 {
			t.Errorf("sci under faults: %d %s, want at least 20:\n%s", n, what, m[0])
		}
	}
}

// plantedFence is MPICH's lock-free device without the NEC synchronization
// of PKT_COPYIN and PKT_READY_SET (its fences param, the one
// sx4-lockfree-nofence turns off): a real protocol bug, planted through an
// existing option.
const plantedFence = "{device: ch_lfshmem, lock: tas, fences: false}"

// withPlantedFence makes builtins a registry whose MPICH has the planted
// bug as one more variant, for the test.
func withPlantedFence(t *testing.T) {
	reg := registry.New()
	def := all.Default()
	for _, m := range def.Machines() {
		if err := reg.AddMachine(m); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range def.Stacks() {
		if s.Name == "mpich" {
			s.Variants = append(slices.Clone(s.Variants), plantedFence)
		}
		if err := reg.AddStack(s); err != nil {
			t.Fatal(err)
		}
	}
	old := builtins
	builtins = func() *registry.Registry { return reg }
	t.Cleanup(func() { builtins = old })
}

// TestSoakCatchesPlantedBug: the soak finds the missing fence, reports it
// as a corruption in its parseable summary line, and the line's replay
// command reproduces the failure exactly.
func TestSoakCatchesPlantedBug(t *testing.T) {
	withPlantedFence(t)
	pairing := "sx4/mpich" + plantedFence
	only := "^" + regexp.QuoteMeta(pairing) + "$"
	code, out, errs := simrun(t, "soak", "--runs", "20", "--only", only)
	if code != exitFailed {
		t.Fatalf("soak of the planted bug: exit %d, want %d\n%s%s", code, exitFailed, out, errs)
	}
	var fail []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAIL\t") {
			fail = strings.Split(l, "\t")
		}
	}
	if len(fail) != 8 || fail[1] != pairing || fail[2] != "corruption" || !strings.HasPrefix(fail[7], "simrun soak --only ") {
		t.Fatalf("no FAIL line (FAIL, pairing, kind, count, runs, seed, ranks, replay) with the corruption:\n%s", out)
	}
	t.Log(strings.Join(fail, "\t"))
	if n, _ := strconv.Atoi(fail[3]); n < 1 || fail[4] != "20" || !strings.Contains(out, "FAILED: corruption "+fail[3]) {
		t.Errorf("count %q of runs %q, or the pairing's line, wrong:\n%s", fail[3], fail[4], out)
	}
	// The replay command, run as the shell would (its quoted regexp).
	rm := regexp.MustCompile(`^simrun soak --only '([^']*)' --seed ([0-9]+) --runs 1$`).FindStringSubmatch(fail[7])
	if rm == nil || rm[2] != fail[5] {
		t.Fatalf("replay command %q is not simrun soak --only 'RE' --seed %s --runs 1", fail[7], fail[5])
	}
	args := []string{"soak", "--only", rm[1], "--seed", rm[2], "--runs", "1"}
	_, a, _ := simrun(t, args...)
	_, b, _ := simrun(t, args...)
	strip := regexp.MustCompile(`in [0-9.]+s`)
	if strip.ReplaceAllString(a, "") != strip.ReplaceAllString(b, "") ||
		!strings.Contains(a, "seed "+fail[5]+" ("+fail[6]+" ranks): corruption") || !strings.Contains(a, "FAIL\t"+pairing+"\tcorruption\t1\t1\t"+fail[5]) {
		t.Errorf("replay differs or lost the failure:\n%s\n%s", a, b)
	}
}
