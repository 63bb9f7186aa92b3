package registry_test

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// A program embedding msgsim resolves a machine and a stack by name (with
// the stack's params as YAML, here MPICH's lock-free device with
// test-and-set locks on the NEC SX-4), opens a world of two ranks on an
// engine, and runs its own code on the ranks: a ping-pong of 8 bytes.
func Example() {
	var params yaml.Node
	if err := yaml.Unmarshal([]byte("{device: ch_lfshmem, lock: tas}"), &params); err != nil {
		fmt.Println(err)
		return
	}
	open, err := registry.Default().Resolve("example.yaml",
		registry.Ref{Name: "sx4"}, registry.Ref{Name: "mpich", Params: &params})
	if err != nil {
		fmt.Println(err)
		return
	}
	eng := sim.NewEngine(1)
	world, err := open(eng, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	comms, err := stacks.As[stacks.Comm](world, "the example", "message passing")
	if err != nil {
		fmt.Println(err)
		return
	}
	const reps = 10
	var rtt sim.Time
	for rank, c := range comms {
		eng.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			buf, err := c.Buffer(8)
			if err != nil {
				eng.Fail(err)
				return
			}
			start := eng.Now()
			for i := 0; i < reps; i++ {
				if rank == 0 {
					err = c.Send(p, buf, 1, i)
					if err == nil {
						_, err = c.Recv(p, buf, 1, i)
					}
				} else {
					_, err = c.Recv(p, buf, 0, i)
					if err == nil {
						err = c.Send(p, buf, 0, i)
					}
				}
				if err != nil {
					eng.Fail(err)
					return
				}
			}
			if rank == 0 {
				rtt = (eng.Now() - start) / reps // a round trip
			}
		})
	}
	if err := eng.Run(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s on %s, %d ranks: 8-byte latency %v (half a round trip)\n", world.Title, world.Machine.Name(), world.Size(), rtt/2)
	// Output:
	// MPICH ch_lfshmem on sx4, 2 ranks: 8-byte latency 37.0032us (half a round trip)
}

// Probe opens a stack on a machine with default params: what a listing
// uses to tell which pairings run, and which verb a machine lacks.
func ExampleRegistry_Probe() {
	reg := registry.Default()
	for _, m := range reg.Machines() {
		for _, s := range reg.Stacks() {
			_, err := reg.Probe(m.Name, s.Name, "")
			var mc *machines.MissingCapability
			switch {
			case err == nil:
				fmt.Printf("%s on %s: runs\n", s.Name, m.Name)
			case errors.As(err, &mc):
				fmt.Printf("%s on %s: needs %s\n", s.Name, m.Name, mc.Capability)
			default:
				fmt.Printf("%s on %s: %v\n", s.Name, m.Name, err)
			}
		}
	}
	// Output:
	// mpich on sx4: runs
	// aclmpl on sx4: runs
	// shmem on sx4: runs
	// armci on sx4: runs
	// scampi on sx4: runs
	// pvm on sx4: runs
	// mpich on t3d: runs
	// aclmpl on t3d: runs
	// shmem on t3d: runs
	// armci on t3d: runs
	// scampi on t3d: runs
	// pvm on t3d: runs
	// mpich on sp: runs
	// aclmpl on sp: runs
	// shmem on sp: runs
	// armci on sp: runs
	// scampi on sp: runs
	// pvm on sp: runs
	// mpich on sci: runs
	// aclmpl on sci: runs
	// shmem on sci: runs
	// armci on sci: runs
	// scampi on sci: runs
	// pvm on sci: runs
	// mpich on challenge: runs
	// aclmpl on challenge: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// shmem on challenge: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// armci on challenge: runs
	// scampi on challenge: runs
	// pvm on challenge: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// mpich on tcpcluster: needs shared-segments: memory segments shared by the processes of a node (machines.SharedSegments), with every process on one node (processes 0 and 1 are on nodes 0 and 1); or remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// aclmpl on tcpcluster: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// shmem on tcpcluster: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// armci on tcpcluster: needs the verbs of one of its ports: the SP port's active-messages; the shared-memory port's shared-segments with every process on one node (they are on 2 nodes); the SHMEM port's remote-write, remote-read, swap or remote-fetch-inc
	// scampi on tcpcluster: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
	// pvm on tcpcluster: needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)
}
