/* MPI ping-pong between ranks 0 and 1, the msgsim pingpong workload written
 * for SimGrid SMPI: for each size, one warm-up round trip and reps timed
 * ones (MPI_Send / MPI_Recv); rank 0 prints the mean half round trip in
 * simulated microseconds. Every delivery is checked against the sender's
 * seeded pattern.
 *
 * Build: smpicc -O2 -o pingpong pingpong.c
 * Run:   smpirun -np 2 -platform platform.xml -hostfile hosts ./pingpong
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const long sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
	const int reps = 4, warmup = 1;
	long bad = 0;
	for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		long n = sizes[s];
		unsigned char *b = malloc(n);
		double t0 = 0;
		for (int k = 0; k < warmup + reps; k++) {
			if (k == warmup)
				t0 = MPI_Wtime();
			if (rank == 0) {
				fill(b, n, 0);
				MPI_Send(b, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(b, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				bad += mismatch(b, n, 1) >= 0;
			} else if (rank == 1) {
				MPI_Recv(b, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				bad += mismatch(b, n, 0) >= 0;
				fill(b, n, 1);
				MPI_Send(b, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
			}
		}
		double t = MPI_Wtime() - t0;
		if (rank == 0)
			printf("pingpong bytes=%ld half_round_trip_us=%.3f\n", n, t / reps / 2 * 1e6);
		free(b);
	}
	if (bad)
		fprintf(stderr, "rank %d: %ld corrupted deliveries\n", rank, bad);
	MPI_Finalize();
	return bad != 0;
}
