package main

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/scenarios"
)

// TestListMachinesAndStacks: list --machines shows each machine's
// capabilities as checked on an instance; list --stacks shows what each
// stack needs and, on each machine, what its ranks offer or which
// capability is missing.
func TestListMachinesAndStacks(t *testing.T) {
	code, out, errs := simrun(t, "list", "--machines")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"sx4         NEC SX-4 node",
		"            offers: local, remote-write, remote-read, remote-fetch-inc, shared-segments, semaphores, memory\n            lacks:  ordered-writes, fetch-inc-register, swap, barrier, checkpoints, delivered, sockets, scheduler, threads, active-messages\n",
		"t3d         Cray T3D",
		"            offers: local, remote-write, ordered-writes, remote-read, fetch-inc-register, swap, barrier, memory, delivered, threads\n            lacks:  remote-fetch-inc, shared-segments, semaphores, checkpoints, sockets, scheduler, active-messages\n",
		"sp          IBM SP",
		"            offers: local, remote-write, remote-read, remote-fetch-inc, swap, memory, active-messages\n",
		"sci         Scali PCI-SCI cluster",
		"            offers: local, remote-write, remote-read, remote-fetch-inc, shared-segments, checkpoints, memory\n",
		"challenge   SGI Power Challenge",
		"            offers: local, remote-fetch-inc, swap, shared-segments, semaphores, memory\n",
		"tcpcluster  Linux cluster",
		"            offers: local, shared-segments, memory, sockets, scheduler\n",
		"  sockets    TCP connections between processes: write, read, poll() that sleeps in the kernel (machines.Sockets)",
		"  semaphores System V semaphores (machines.Semaphores)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list --machines lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "litmus-mp") {
		t.Errorf("list --machines also lists scenarios:\n%s", out)
	}
	code, out, errs = simrun(t, "list", "--stacks")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"mpich   MPICH",
		"        on sx4 {device: ch_lfshmem}: offers comm, threads, schedule\n",
		"        on sx4 {device: ch_t3d}: offers comm, bcast, reduce, threads, schedule\n",
		"        on challenge {device: ch_t3d}: missing remote-write: one-sided remote write (put)",
		"        on t3d {device: ch_shmem}: missing shared-segments: ",
		"        on t3d {device: ch_lfshmem}: offers comm, threads, schedule\n",
		"        on sci {device: ch_t3d, receive_queue: shared}: missing swap: ",
		"        on t3d {device: ch_t3d}: offers comm, bcast, reduce, threads, schedule\n",
		"        on t3d {device: ch_t3d, receive_queue: shared}: offers comm, bcast, reduce, threads, schedule\n",
		"aclmpl  ACLMPL",
		"        needs: remote-write: ",
		"        on sx4: offers comm, sendrecv, bcast, reduce, binary-swap\n",
		"        on challenge: missing remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)\n",
		"        on t3d: offers comm, sendrecv, bcast, reduce, binary-swap\n",
		"shmem   raw SHMEM",
		"        on t3d: offers one-sided, swap\n",
		"        on sx4: offers one-sided\n",
		"pvm     PVM 3.3",
		"        on t3d: offers comm, bcast, reduce\n",
		"  binary-swap binary-swap reduce (stacks.BinarySwapReducer)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list --stacks lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := simrun(t, "list", "--help"); code != exitOK || !strings.Contains(out, "--machines") || !strings.Contains(out, "--stacks") {
		t.Errorf("list --help: %d\n%s", code, out)
	}
}

// TestValidateBadPairing: a pairing that cannot work is bad input (exit 2)
// naming the missing capability, in validate and run alike, whether the
// machine lacks it for the stack or the stack lacks it for the workload.
func TestValidateBadPairing(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"machine: {name: challenge}\nstack: {name: aclmpl}\nworkload: {name: pingpong, params: {sizes: [8]}}\n",
			"bad.yaml:3:8: field stack: aclmpl cannot run on machine challenge: it needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite), which challenge does not provide"},
		{"machine: {name: t3d}\nstack: {name: mpich, params: {device: ch_shmem}}\nworkload: {name: onetoall}\n",
			"bad.yaml:3:30: field stack.params: mpich ch_shmem cannot run on machine t3d: it needs shared-segments: memory segments shared by the processes of a node"},
		{"machine: {name: t3d}\nstack: {name: shmem}\nworkload: {name: pingpong, params: {sizes: [8]}}\n",
			"bad.yaml:4:18: field workload.name: workload pingpong cannot run on stack shmem (machine t3d): it needs message passing (stacks.Comm), which shmem does not offer"},
		{"machine: {name: t3d}\nstack: {name: shmem}\nworkload: {name: reduce}\n",
			"bad.yaml:4:18: field workload.name: workload reduce cannot run on stack shmem (machine t3d): it needs message passing (stacks.Comm)"},
		{"machine: {name: t3d}\nstack: {name: mpich, params: {device: ch_t3d}}\nworkload: {name: reduce, params: {reduce: binary-swap}}\n",
			"it needs a binary-swap reduce (stacks.BinarySwapReducer)"},
		{"machine: {name: t3d}\nstack: {name: aclmpl}\nworkload: {name: comm-dup, params: {procs: [2]}}\n",
			"workload comm-dup cannot run on stack aclmpl (machine t3d): it needs MPI threads and MPI_Comm_dup (stacks.Threaded), which aclmpl does not offer"},
		{"machine: {name: t3d}\nstack: {name: shmem}\nworkload: {name: explore, params: {program: figure2, procs: 2, threads: 2, bound: 1}}\n",
			"workload explore cannot run on stack shmem (machine t3d): it needs MPI threads and MPI_Comm_dup (stacks.Threaded)"},
		{"machine: {name: vax}\nstack: {name: mpich}\nworkload: {name: onetoall}\n",
			`field machine.name: unknown machine "vax"; machines: sx4, t3d, sp`},
		{"machine: {name: sx4}\nstack: {name: cmmd}\nworkload: {name: onetoall}\n",
			`field stack.name: unknown stack "cmmd"; stacks: mpich, aclmpl, shmem`},
	} {
		f := write(t, dir, "bad.yaml", "name: bad\n"+c.yaml)
		for _, cmd := range []string{"validate", "run"} {
			code, out, errs := simrun(t, cmd, f, "--out", dir+"/out", "--quiet")
			if cmd == "validate" {
				code, out, errs = simrun(t, cmd, f)
			}
			if code != exitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%s %s: exit %d, want %d naming %q; got:\n%s%s", cmd, c.yaml, code, exitUsage, c.want, out, errs)
			}
		}
	}
}

// TestValidateBuiltins: every built-in scenario resolves (machine built,
// stack opened, pairing checked) and validates through the registry.
func TestValidateBuiltins(t *testing.T) {
	names, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if code, out, errs := simrun(t, "validate", n); code != exitOK || !strings.Contains(out, ": ok (") {
			t.Errorf("validate %s: exit %d\n%s%s", n, code, out, errs)
		}
	}
}
