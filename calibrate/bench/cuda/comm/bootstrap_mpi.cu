// Bootstrap over MPI (built when CMake finds MPI). Started without an MPI launcher, or as
// a single rank, it behaves like the single-process bootstrap. Under mpirun/srun with one
// process per GPU: the node-local ranks (MPI_COMM_TYPE_SHARED) form the intra-node group;
// with more than one node, all ranks form the inter-node group. Each group's ncclUniqueId is made by its rank 0 and
// broadcast over the group's MPI communicator; times and error counts are reduced over it.
#include <mpi.h>

#include <cstdlib>

#include "calibrate/bench/cuda/comm/comm.h"
#include "calibrate/bench/cuda/cuda_util.h"

namespace dsplan::cuda {
namespace {

void mpi_check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw BenchFailure(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
}

CommGroup open_mpi_group(MPI_Comm mc, CommScope scope, int device) {
  int rank = 0, size = 0;
  mpi_check(MPI_Comm_rank(mc, &rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(mc, &size), "MPI_Comm_size");
  ncclUniqueId id;
  if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mc), "MPI_Bcast");
  CommGroup g;
  g.scope = scope;
  g.nranks = size;
  CommMember m{device, rank, nullptr, nullptr};
  check(cudaSetDevice(device), "cudaSetDevice");
  check(ncclCommInitRank(&m.comm, size, id, rank), "ncclCommInitRank");
  check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  g.members.push_back(m);
  g.max_over_processes = [mc](double x) {
    double y = x;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, mc);
    return y;
  };
  g.sum_over_processes = [mc](long long x) {
    long long y = x;
    MPI_Allreduce(&x, &y, 1, MPI_LONG_LONG, MPI_SUM, mc);
    return y;
  };
  return g;
}

// True when a launcher (Open MPI, MPICH/PMI, PMIx, MVAPICH, Intel MPI) started us. A
// plain `dsplan calibrate` does not touch MPI at all: singleton MPI_Init can abort in
// containers without a process manager.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE",
                        "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

CommWorld single_process(int visible_devices) {
  CommWorld w;
  w.gpu_count = visible_devices;
  if (visible_devices >= 2) {
    std::vector<int> devs;
    for (int d = 0; d < visible_devices; ++d) devs.push_back(d);
    w.groups.push_back(open_local_group(devs));
  }
  w.shutdown = [] {};
  return w;
}

}  // namespace

CommWorld open_comm_world(int visible_devices) {
  int inited = 0;
  mpi_check(MPI_Initialized(&inited), "MPI_Initialized");
  if (!inited && !launched_by_mpi()) return single_process(visible_devices);
  bool we_init = false;
  if (!inited) {
    int provided = 0;
    mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
    we_init = true;
  }
  CommWorld w;
  w.shutdown = [we_init] {
    if (we_init) MPI_Finalize();
  };
  int world_rank = 0, world_size = 1;
  mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &world_size), "MPI_Comm_size");
  if (world_size == 1) {
    CommWorld single = single_process(visible_devices);
    single.shutdown = w.shutdown;
    return single;
  }
  MPI_Comm node = MPI_COMM_NULL;  // kept for the life of the process
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int local_rank = 0, local_size = 1;
  mpi_check(MPI_Comm_rank(node, &local_rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(node, &local_size), "MPI_Comm_size");
  if (local_size > visible_devices)
    throw BenchFailure(std::to_string(local_size) + " processes on this node but only " +
                       std::to_string(visible_devices) + " GPUs visible: launch one process per GPU");
  int leader = local_rank == 0 ? 1 : 0;
  mpi_check(MPI_Allreduce(&leader, &w.nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  w.local_device = local_rank;
  w.gpu_count = world_size;
  w.is_root = world_rank == 0;
  if (local_size >= 2) w.groups.push_back(open_mpi_group(node, CommScope::intra_node, local_rank));
  if (w.nodes >= 2) w.groups.push_back(open_mpi_group(MPI_COMM_WORLD, CommScope::inter_node, local_rank));
  return w;
}

}  // namespace dsplan::cuda
