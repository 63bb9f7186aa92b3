package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// openMPI builds MPI on the T3D for every PE.
func openMPI(m *t3d.Machine, s workloads.Spec) ([]stacks.Comm, error) {
	return nil, fmt.Errorf("%s: stack mpich on the T3D is not available yet", s.File)
}
