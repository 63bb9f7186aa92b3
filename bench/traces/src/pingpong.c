/* The ping-pong of the pingpong workload in trace form: ranks 0 and 1
 * bounce a message of `bytes` bytes `reps` times (blocking MPI_Send and
 * MPI_Recv, tag = repetition). Arguments: bytes reps (default 1024 4). */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int bytes = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 4;
	char *buf = calloc(bytes > 0 ? bytes : 1, 1);
	for (int k = 0; k < reps; k++) {
		if (rank == 0) {
			MPI_Send(buf, bytes, MPI_BYTE, 1, k, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_BYTE, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, bytes, MPI_BYTE, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_BYTE, 0, k, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
