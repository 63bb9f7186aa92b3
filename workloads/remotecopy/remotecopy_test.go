package remotecopy

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
	"gopkg.in/yaml.v3"
)

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// bandwidth runs a series of ARMCI on the SP and returns MB/s by size.
func bandwidth(t *testing.T, stackParams, workload string) map[float64]float64 {
	t.Helper()
	open, err := registry.Default().Resolve("test.yaml", registry.Ref{Name: "sp"}, registry.Ref{Name: "armci", Params: node(t, stackParams)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(workloads.Spec{Scenario: "test", Series: "s", File: "test.yaml", Seed: 1,
		Limits: sim.Limits{MaxEvents: 50_000_000}, Machine: "sp", Stack: "armci", Open: open,
		Workload: workloads.Component{Name: Name, Params: node(t, workload)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatal(res.Failures)
	}
	out := map[float64]float64{}
	for _, r := range res.Rows {
		if r.Metric == Bandwidth {
			out[r.X] = r.Value
		}
	}
	return out
}

// TestSectionCalibration: the calibration points of section 1 as
// regression tests on simulated rates (within 10%): 100 chunked 16-byte
// LAPI_Gets at 0.5 MB/s, the same bytes contiguous at 30 MB/s.
func TestSectionCalibration(t *testing.T) {
	chunked := bandwidth(t, "{native: true}", "{shape: section, rows: 2, ld: 10, sizes: [100]}")[100]
	contig := bandwidth(t, "{native: true}", "{shape: section, rows: 200, ld: 200, sizes: [200]}")[200]
	if chunked < 0.45 || chunked > 0.55 {
		t.Errorf("chunked: %.3f MB/s, want 0.5 within 10%%", chunked)
	}
	if contig < 27 || contig > 33 {
		t.Errorf("contiguous: %.2f MB/s, want 30 within 10%%", contig)
	}
}

// TestFigure4Shape: ARMCI's strided get is far above one LAPI_Get per
// column except for very small and very large sections, where both
// coincide (the same protocol) — papers/armci-sp.txt 2.5, not tuned.
func TestFigure4Shape(t *testing.T) {
	w := "{shape: square, sizes: [1, 2, 8, 32, 64, 512], ld: 512, repetitions: 2}"
	a, n := bandwidth(t, "{}", w), bandwidth(t, "{native: true}", w)
	for _, d := range []float64{1, 2, 512} {
		if a[d] != n[d] {
			t.Errorf("dimension %v: ARMCI %.3f MB/s, native %.3f: want equal", d, a[d], n[d])
		}
	}
	for _, d := range []float64{8, 32, 64} {
		if a[d] < 1.4*n[d] {
			t.Errorf("dimension %v: ARMCI %.3f MB/s, native %.3f: want far above", d, a[d], n[d])
		}
	}
}

// TestFigure5Shape: GetV far above native gets except for very small
// requests (2.5).
func TestFigure5Shape(t *testing.T) {
	w := "{shape: gather, sizes: [1, 2, 64, 1024], repetitions: 2}"
	a, n := bandwidth(t, "{}", w), bandwidth(t, "{native: true}", w)
	for _, k := range []float64{1, 2} {
		if a[k] != n[k] {
			t.Errorf("%v elements: GetV %.3f MB/s, native %.3f: want equal", k, a[k], n[k])
		}
	}
	for _, k := range []float64{64, 1024} {
		if a[k] < 5*n[k] {
			t.Errorf("%v elements: GetV %.3f MB/s, native %.3f: want far above", k, a[k], n[k])
		}
	}
}

// TestVerifyNamesOffset: a get's local buffer is checked against the
// remote array's pattern, regenerated (no copy of the array); a flipped
// byte is reported with the rank it came from and its local and remote
// offsets.
func TestVerifyNamesOffset(t *testing.T) {
	m := mem.NewMemory("rank0", 0)
	seg, err := m.Alloc("local", 64, 8)
	if err != nil {
		t.Fatal(err)
	}
	lay := layout{blocks: 8, localBytes: 64} // 8-byte blocks 24 bytes apart remotely
	raw := payload.Raw{Mem: m}
	for i := 0; i < lay.blocks; i++ {
		payload.Write(raw, seg.Base+mem.Addr(8*i), 8, pattern(5, 3), 24*i)
	}
	if f, ok := verify(raw, seg.Base, lay, 5, 3, sim.Micro(2)); !ok {
		t.Fatalf("a correct get failed verification: %v", f)
	}
	m.Bytes(seg.Base+42, 1)[0] ^= 1
	f, ok := verify(raw, seg.Base, lay, 5, 3, sim.Micro(2))
	if ok || f.Kind != workloads.Corruption || !strings.Contains(f.Detail, "get from rank 3: local byte 42") || !strings.Contains(f.Detail, "remote offset 122") {
		t.Fatalf("got %v", f)
	}
}
