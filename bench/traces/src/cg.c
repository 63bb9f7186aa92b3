/* The communication skeleton of a conjugate-gradient solver on a 1D
 * row-block distribution of a banded matrix: per iteration, the halo
 * exchange of the vector's boundary entries with the neighbouring ranks
 * (the matrix-vector product), two dot products (MPI_Allreduce of one
 * double each) and the local vector updates. Arguments: n (rows per rank)
 * halo iterations (default 4096 64 10). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = argc > 1 ? atoi(argv[1]) : 4096, h = argc > 2 ? atoi(argv[2]) : 64, iters = argc > 3 ? atoi(argv[3]) : 10;
	double *p = calloc(n + 2 * h, sizeof(double)), *q = calloc(n, sizeof(double)), *r = calloc(n, sizeof(double));
	for (int i = 0; i < n; i++) r[i] = p[h + i] = 1.0 / (1 + rank + i);
	double rr = 0, lrr = 0;
	for (int i = 0; i < n; i++) lrr += r[i] * r[i];
	MPI_Allreduce(&lrr, &rr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	int lo = rank - 1, hi = rank + 1;
	for (int it = 0; it < iters; it++) {
		MPI_Request rq[4];
		int k = 0;
		if (lo >= 0) {
			MPI_Irecv(p, h, MPI_DOUBLE, lo, 1, MPI_COMM_WORLD, &rq[k++]);
			MPI_Isend(p + h, h, MPI_DOUBLE, lo, 0, MPI_COMM_WORLD, &rq[k++]);
		}
		if (hi < size) {
			MPI_Irecv(p + h + n, h, MPI_DOUBLE, hi, 0, MPI_COMM_WORLD, &rq[k++]);
			MPI_Isend(p + n, h, MPI_DOUBLE, hi, 1, MPI_COMM_WORLD, &rq[k++]);
		}
		MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
		for (int i = 0; i < n; i++) q[i] = 4 * p[h + i] - p[i] - p[h + i + h < n + 2 * h ? h + i + h : i] ;
		double lpq = 0, pq;
		for (int i = 0; i < n; i++) lpq += p[h + i] * q[i];
		MPI_Allreduce(&lpq, &pq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double alpha = rr / pq;
		lrr = 0;
		for (int i = 0; i < n; i++) {
			r[i] -= alpha * q[i];
			lrr += r[i] * r[i];
		}
		double rr2;
		MPI_Allreduce(&lrr, &rr2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double beta = rr2 / rr;
		rr = rr2;
		for (int i = 0; i < n; i++) p[h + i] = r[i] + beta * p[h + i];
	}
	if (rank == 0) printf("rr %g\n", rr);
	MPI_Finalize();
	return 0;
}
