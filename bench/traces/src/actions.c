#include <mpi.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
  double a[64], b[64*8]; int ia[16]; int cnts[8], displs[8];
  for (int i=0;i<8;i++){cnts[i]=2+i; displs[i]=i*12;}
  MPI_Request rq[4]; MPI_Status st[4];
  int right=(r+1)%n, left=(r+n-1)%n;
  if (r==0) MPI_Send(a, 10, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
  if (r==1) MPI_Recv(a, 10, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, st);
  MPI_Irecv(b, 5, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(ia, 5, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[1]);
  int flag; MPI_Test(&rq[0], &flag, st);
  MPI_Waitall(2, rq, st);
  MPI_Irecv(b, 3, MPI_CHAR, left, 4, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(ia, 3, MPI_CHAR, right, 4, MPI_COMM_WORLD, &rq[1]);
  MPI_Wait(&rq[0], st); MPI_Wait(&rq[1], st);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(a, 4, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Reduce(a, b, 4, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  int sc[8]; for(int j=0;j<n;j++) sc[j]=2+((r+j)%3);
  MPI_Alltoallv(a, sc, displs, MPI_DOUBLE, b, sc, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Gather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Gatherv(a, cnts[r], MPI_DOUBLE, b, cnts, displs, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Allgather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgatherv(a, cnts[r], MPI_DOUBLE, b, cnts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Scatter(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatterv(a, cnts, displs, MPI_DOUBLE, b, cnts[r], MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, cnts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm c2; MPI_Comm_split(MPI_COMM_WORLD, r%2, r, &c2);
  MPI_Comm c3; MPI_Comm_dup(MPI_COMM_WORLD, &c3);
  double x=0; for (int i=0;i<1000000;i++) x+=i*0.5; a[0]=x;
  MPI_Send(a, 1, MPI_DOUBLE, right, 9, MPI_COMM_WORLD);
  MPI_Recv(b, 1, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, st);
  MPI_Finalize();
  return 0;
}
