/* A ring with a broadcast: rank 0 broadcasts a parameter block, then a
 * token of `bytes` bytes goes around the ring `laps` times (each rank
 * receives from its left neighbour and sends to its right one, blocking
 * calls), and a final MPI_Bcast from the last rank. Arguments: bytes laps
 * (default 1024 4). */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int bytes = argc > 1 ? atoi(argv[1]) : 1024, laps = argc > 2 ? atoi(argv[2]) : 4;
	char *buf = calloc(bytes, 1);
	int params[16] = {bytes, laps};
	MPI_Bcast(params, 16, MPI_INT, 0, MPI_COMM_WORLD);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	for (int l = 0; l < laps; l++) {
		if (rank == 0) {
			MPI_Send(buf, bytes, MPI_CHAR, right, l, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_CHAR, left, l, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, bytes, MPI_CHAR, left, l, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			buf[0]++;
			MPI_Send(buf, bytes, MPI_CHAR, right, l, MPI_COMM_WORLD);
		}
	}
	MPI_Bcast(buf, bytes, MPI_CHAR, size - 1, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
