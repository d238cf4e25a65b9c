// Single-process NCCL communicators: ncclCommInitAll over the given local GPUs, one
// stream per GPU; reductions "over processes" are the identity.
#include "calibrate/bench/cuda/comm/comm.h"
#include "calibrate/bench/cuda/cuda_util.h"

namespace dsplan::cuda {

CommGroup open_local_group(const std::vector<int>& devices) {
  CommGroup g;
  g.scope = CommScope::intra_node;
  g.nranks = static_cast<int>(devices.size());
  std::vector<ncclComm_t> comms(devices.size());
  check(ncclCommInitAll(comms.data(), g.nranks, devices.data()), "ncclCommInitAll");
  for (int r = 0; r < g.nranks; ++r) {
    CommMember m{devices[r], r, comms[r], nullptr};
    check(cudaSetDevice(m.device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    g.members.push_back(m);
  }
  g.max_over_processes = [](double x) { return x; };
  g.sum_over_processes = [](long long x) { return x; };
  return g;
}

void close_group(CommGroup& g) {
  for (auto& m : g.members) {
    cudaSetDevice(m.device);
    if (m.stream) cudaStreamDestroy(m.stream);
    if (m.comm) ncclCommDestroy(m.comm);
  }
  g.members.clear();
}

}  // namespace dsplan::cuda
