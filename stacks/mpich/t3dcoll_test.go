package mpich

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// openT3D opens ch_t3d on pes PEs with params as a stacks.World.
func openT3D(t *testing.T, e *sim.Engine, pes int, params Params) *stacks.World {
	t.Helper()
	m, err := t3d.New(e, pes, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestT3DShmemCollectives: MPI_Bcast and MPI_Reduce over SHMEM deliver
// every byte, on power-of-two and other partitions, from root 0 and
// another root, for messages below, at and above the system buffer (in
// chunks), twice in a row (the chunk numbers go on); MPI_Reduce leaves
// the non-root send buffers unchanged.
func TestT3DShmemCollectives(t *testing.T) {
	params := DefaultParamsFor(DeviceT3D)
	params.EagerBytes = 4096 // small system buffer: several chunks
	for _, pes := range []int{2, 5, 8} {
		for _, root := range []int{0, pes - 1} {
			for _, n := range []int{0, 8, 1000, 4096, 10000} {
				name := fmt.Sprintf("pes=%d root=%d n=%d", pes, root, n)
				e := sim.NewEngine(1)
				w := openT3D(t, e, pes, params)
				want := make([]byte, n)
				contrib := make([][]byte, pes)
				for q := range contrib {
					contrib[q] = make([]byte, n)
					fillT3D(contrib[q], uint64(q+7))
					stacks.SumInt64.Combine(want, contrib[q])
				}
				for pe := 0; pe < pes; pe++ {
					r := w.Ranks[pe]
					b, ok := r.(stacks.Bcaster)
					red, ok2 := r.(stacks.Reducer)
					if _, sole := r.(stacks.SoleCollectives); !ok || !ok2 || !sole {
						t.Fatalf("%s: rank offers Bcaster %v, Reducer %v, SoleCollectives %v", name, ok, ok2, sole)
					}
					e.Spawn(fmt.Sprint("pe", pe), func(p *sim.Proc) {
						buf, _ := r.Buffer(n)
						for round := 0; round < 2; round++ {
							if pe == root {
								fillT3D(buf.Bytes(), uint64(round+1))
							}
							if err := b.Bcast(p, buf, root); err != nil {
								t.Errorf("%s: bcast: %v", name, err)
								return
							}
							exp := make([]byte, n)
							fillT3D(exp, uint64(round+1))
							got := make([]byte, n)
							r.CPU().Peek(buf.Addr, got)
							if !bytes.Equal(got, exp) {
								t.Errorf("%s: round %d: PE %d received a wrong broadcast", name, round, pe)
							}
						}
						copy(buf.Bytes(), contrib[pe])
						if n%8 != 0 {
							return
						}
						if err := red.Reduce(p, buf, stacks.SumInt64, root); err != nil {
							t.Errorf("%s: reduce: %v", name, err)
							return
						}
						got := make([]byte, n)
						r.CPU().Peek(buf.Addr, got)
						exp := contrib[pe]
						if pe == root {
							exp = want
						}
						if !bytes.Equal(got, exp) {
							t.Errorf("%s: PE %d holds a wrong buffer after reduce (root %v)", name, pe, pe == root)
						}
					})
				}
				if err := e.Run(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
	}
}

// TestT3DCollectivesParam: collectives p2p offers no collectives (the
// workload's trees over point-to-point, as before); the param is ch_t3d's
// only and takes two values.
func TestT3DCollectivesParam(t *testing.T) {
	params := DefaultParamsFor(DeviceT3D)
	if params.Collectives != CollectivesShmem || DefaultParams().Collectives != CollectivesP2P {
		t.Errorf("defaults: ch_t3d %q, others %q", params.Collectives, DefaultParams().Collectives)
	}
	params.Collectives = CollectivesP2P
	w := openT3D(t, sim.NewEngine(1), 4, params)
	if _, ok := w.Ranks[0].(stacks.Bcaster); ok {
		t.Error("collectives p2p: the rank offers a broadcast")
	}
	for _, tc := range []struct{ src, want string }{
		{"device: ch_lfshmem\ncollectives: shmem", "s.yaml:2:14: field stack.params.collectives: device ch_lfshmem does not use it"},
		{"device: ch_t3d\ncollectives: tree", `s.yaml:2:14: field stack.params.collectives: must be "shmem" or "p2p"`},
		{"device: ch_shmem\nreceive_queue: shared", "s.yaml:2:16: field stack.params.receive_queue: device ch_shmem does not use it"},
		{"device: ch_t3d\nreceive_queue: pairs", `s.yaml:2:16: field stack.params.receive_queue: must be "fetch-inc", "per-sender" or "shared"`},
	} {
		_, err := parseParams(t, tc.src)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%q: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

func parseParams(t *testing.T, src string) (Params, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return ParamsFromYAMLAt("s.yaml", "stack.params", &n)
}
