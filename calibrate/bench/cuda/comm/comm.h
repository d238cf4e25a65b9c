// NCCL communicators for the collective benchmarks. A CommGroup is one scope (intra- or
// inter-node) as seen from this process: the ranks it drives itself (all local GPUs in
// single-process mode, one GPU under MPI) plus reductions across the other processes.
// The bootstrap is chosen by file: comm/bootstrap_single.cu (no MPI: one process,
// ncclCommInitAll over every visible GPU) or comm/bootstrap_mpi.cu (one process per GPU,
// ncclUniqueId broadcast over MPI; falls back to single-process when launched alone).
#pragma once

#include <functional>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

#include "core/efficiency.h"

namespace dsplan::cuda {

struct CommMember {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

struct CommGroup {
  CommScope scope = CommScope::intra_node;
  int nranks = 0;
  std::vector<CommMember> members;                      // driven by this process
  std::function<double(double)> max_over_processes;     // identity in single-process mode
  std::function<long long(long long)> sum_over_processes;
};

struct CommWorld {
  std::vector<CommGroup> groups;
  int nodes = 1;
  int gpu_count = 0;     // GPUs taking part, all processes
  int local_device = 0;  // the GPU this process uses for GEMM/bandwidth runs
  bool is_root = true;
  std::function<void()> shutdown;  // MPI_Finalize when this process initialised MPI
};

// Throws BenchFailure on NCCL/CUDA/MPI errors.
CommWorld open_comm_world(int visible_devices);

// One group over the given local devices, created with ncclCommInitAll (comm_local.cu).
CommGroup open_local_group(const std::vector<int>& devices);
void close_group(CommGroup& g);

}  // namespace dsplan::cuda
