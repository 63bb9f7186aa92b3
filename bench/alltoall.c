/* Pairwise MPI all-to-all, the msgsim alltoall workload in blocking ("sync")
 * mode written for SimGrid SMPI: after a barrier, P-1 phases in which PE pe
 * sends n bytes to pe+i and receives n bytes from pe-i (MPI_Sendrecv), then a
 * barrier. Every delivered byte is checked against the sender's seeded
 * pattern (regenerated, no reference copy), as msgsim does. Rank 0 prints the
 * simulated time between the barriers and the per-PE throughput.
 *
 * Build: smpicc -O2 -o alltoall alltoall.c
 * Run:   smpirun -np P -platform platform.xml -hostfile hosts ./alltoall [n]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int pe, P;
	MPI_Comm_rank(MPI_COMM_WORLD, &pe);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	long n = argc > 1 ? atol(argv[1]) : 65536;
	unsigned char *send = malloc(n), *recv = malloc(n);
	fill(send, n, pe);
	long bad = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 1; i < P; i++) {
		int dst = (pe + i) % P, src = (pe - i + P) % P;
		MPI_Sendrecv(send, (int)n, MPI_BYTE, dst, 0, recv, (int)n, MPI_BYTE, src, 0,
		             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		long off = mismatch(recv, n, src);
		if (off >= 0 && bad++ == 0)
			fprintf(stderr, "PE %d: message from PE %d differs at offset %ld\n", pe, src, off);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t1 = MPI_Wtime();
	long total = 0;
	MPI_Reduce(&bad, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (pe == 0) {
		printf("alltoall pes=%d bytes=%ld simulated_s=%.9f throughput_MBps=%.3f corrupted=%ld\n", P, n,
		       t1 - t0, (double)(P - 1) * n / (t1 - t0) / 1e6, total);
	}
	free(send);
	free(recv);
	MPI_Finalize();
	return total != 0;
}
