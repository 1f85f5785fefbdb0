// Open MPI's collectives on the sizes bm_collectives uses, for comparison
// with the in-process communicator. Launch with mpirun:
//   mpirun --allow-run-as-root --oversubscribe -np 2 build-bench/benchmarks/bm_mpi_collectives
// Same convention as bm_collectives (S = one rank's full buffer; algbw = S/t)
// and as ../shared/reference/perf_anchors.md 5.1: t is the slowest rank's
// time per call, the median of 7 batches. Prints one line per case:
//   mpi <op> np=<n> bytes=<S> us=<t> GBps=<S/t>
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

const char* OpName(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all-reduce";
    case Op::kAllGather: return "all-gather";
    case Op::kReduceScatter: return "reduce-scatter";
    case Op::kAllToAll: return "all-to-all";
  }
  return "?";
}

int Call(Op op, const std::vector<float>& in, std::vector<float>& out, int n) {
  const int elems = static_cast<int>(std::max(in.size(), out.size()));
  switch (op) {
    case Op::kAllReduce:
      return MPI_Allreduce(in.data(), out.data(), elems, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case Op::kAllGather:
      return MPI_Allgather(in.data(), elems / n, MPI_FLOAT, out.data(), elems / n, MPI_FLOAT,
                           MPI_COMM_WORLD);
    case Op::kReduceScatter:
      return MPI_Reduce_scatter_block(in.data(), out.data(), elems / n, MPI_FLOAT, MPI_SUM,
                                      MPI_COMM_WORLD);
    case Op::kAllToAll:
      return MPI_Alltoall(in.data(), elems / n, MPI_FLOAT, out.data(), elems / n, MPI_FLOAT,
                          MPI_COMM_WORLD);
  }
  return MPI_ERR_OTHER;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  // Seconds per batch (7 batches per case); argv[1] overrides.
  double batch_seconds = argc > 1 ? std::atof(argv[1]) : 0.05;
  const int kBatches = 7;

  for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll}) {
    for (long bytes = 4L << 10; bytes <= 64L << 20; bytes *= 4) {
      const size_t elems = static_cast<size_t>(bytes / 4);
      size_t in_elems = op == Op::kAllGather ? elems / n : elems;
      size_t out_elems = op == Op::kReduceScatter ? elems / n : elems;
      std::vector<float> in(in_elems), out(out_elems, 0.0f);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i + rank) % 17);
      // Warm up and size the batches from the slowest rank's first calls.
      double t0 = MPI_Wtime();
      for (int i = 0; i < 3; ++i) {
        if (Call(op, in, out, n) != MPI_SUCCESS) {
          std::fprintf(stderr, "rank %d: %s failed\n", rank, OpName(op));
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }
      double first = (MPI_Wtime() - t0) / 3, slowest = 0;
      MPI_Allreduce(&first, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      int reps = static_cast<int>(std::clamp(batch_seconds / std::max(slowest, 1e-9), 1.0, 100000.0));
      std::vector<double> times;
      for (int b = 0; b < kBatches; ++b) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (int r = 0; r < reps; ++r) Call(op, in, out, n);
        double mine = (MPI_Wtime() - start) / reps, t = 0;
        MPI_Allreduce(&mine, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times.push_back(t);
      }
      std::sort(times.begin(), times.end());
      double t = times[kBatches / 2];
      if (rank == 0) {
        std::printf("mpi %s np=%d bytes=%ld us=%.2f GBps=%.2f\n", OpName(op), n, bytes, t * 1e6,
                    static_cast<double>(bytes) / t / 1e9);
        std::fflush(stdout);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
