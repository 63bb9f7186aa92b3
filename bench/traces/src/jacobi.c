/* A 2D Jacobi iteration's communication: a px x py process grid (the most
 * nearly square factorisation of the ranks), each rank holding an nx x ny
 * block of doubles; every step exchanges the four halo rows and columns
 * with the neighbours (non-periodic: edge ranks have fewer), updates the
 * block, and computes the global residual with MPI_Allreduce. Arguments:
 * nx ny steps (default 64 64 10). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int nx = argc > 1 ? atoi(argv[1]) : 64, ny = argc > 2 ? atoi(argv[2]) : 64, steps = argc > 3 ? atoi(argv[3]) : 10;
	int px = 1;
	for (int d = 1; d * d <= size; d++)
		if (size % d == 0) px = d;
	int py = size / px, x = rank % px, y = rank / px;
	int west = x > 0 ? rank - 1 : -1, east = x < px - 1 ? rank + 1 : -1;
	int south = y > 0 ? rank - px : -1, north = y < py - 1 ? rank + px : -1;
	double *u = calloc((size_t)(nx + 2) * (ny + 2), sizeof(double));
	double *v = calloc((size_t)(nx + 2) * (ny + 2), sizeof(double));
	double *col_out[2], *col_in[2];
	for (int i = 0; i < 2; i++) {
		col_out[i] = malloc(ny * sizeof(double));
		col_in[i] = malloc(ny * sizeof(double));
	}
#define U(a, i, j) a[(size_t)(i) * (ny + 2) + (j)]
	for (int i = 0; i <= nx + 1; i++)
		for (int j = 0; j <= ny + 1; j++) U(u, i, j) = (rank + i + j) % 7;
	for (int s = 0; s < steps; s++) {
		MPI_Request rq[8];
		int n = 0;
		int nb[4] = {west, east, south, north};
		for (int k = 0; k < 4; k++) {
			if (nb[k] < 0) continue;
			if (k < 2) { /* a column: packed */
				MPI_Irecv(col_in[k], ny, MPI_DOUBLE, nb[k], k ^ 1, MPI_COMM_WORLD, &rq[n++]);
			} else { /* a row: contiguous */
				MPI_Irecv(&U(u, k == 2 ? 0 : nx + 1, 1), ny, MPI_DOUBLE, nb[k], k ^ 1, MPI_COMM_WORLD, &rq[n++]);
			}
		}
		for (int k = 0; k < 4; k++) {
			if (nb[k] < 0) continue;
			if (k < 2) {
				int i = k == 0 ? 1 : nx;
				for (int j = 0; j < ny; j++) col_out[k][j] = U(u, i, j + 1);
				MPI_Isend(col_out[k], ny, MPI_DOUBLE, nb[k], k, MPI_COMM_WORLD, &rq[n++]);
			} else {
				MPI_Isend(&U(u, k == 2 ? 1 : nx, 1), ny, MPI_DOUBLE, nb[k], k, MPI_COMM_WORLD, &rq[n++]);
			}
		}
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		double local = 0;
		for (int i = 1; i <= nx; i++)
			for (int j = 1; j <= ny; j++) {
				U(v, i, j) = 0.25 * (U(u, i - 1, j) + U(u, i + 1, j) + U(u, i, j - 1) + U(u, i, j + 1));
				double d = U(v, i, j) - U(u, i, j);
				local += d * d;
			}
		double *t = u; u = v; v = t;
		double global;
		MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (rank == 0 && s == steps - 1) printf("residual %g\n", global);
	}
	MPI_Finalize();
	return 0;
}
