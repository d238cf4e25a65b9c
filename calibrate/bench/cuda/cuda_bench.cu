// The CUDA implementation of the Bench interface (bench.h): finds the GPUs, opens the NCCL
// communicators once, and dispatches each measurement to its runner, converting any
// BenchFailure into a Diagnostic. Compiled only when CMake finds the CUDA toolkit.
#include "calibrate/bench/cuda/cuda_bench.h"

namespace dsplan {
namespace cuda {
namespace {

Diagnostic no_device(const std::string& why) {
  return Diagnostic{"", "", "no CUDA device visible: " + why,
                    "check the NVIDIA driver (nvidia-smi) and CUDA_VISIBLE_DEVICES; "
                    "'dsplan calibrate fit --records FILE' refits saved records on any machine"};
}

class CudaBench final : public Bench {
 public:
  ~CudaBench() override {
    gemm_.reset();
    for (auto& g : world_.groups) close_group(g);
    if (world_.shutdown) world_.shutdown();
  }

  Expected<DeviceInfo> probe() override {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
      return no_device(std::string(cudaGetErrorString(e)) + " (cudaGetDeviceCount)");
    if (count == 0) return no_device("cudaGetDeviceCount found 0 devices");
    return guarded<DeviceInfo>([&] { return open(count); });
  }

  Expected<GemmRecord> gemm(const GemmCase& c) override {
    return guarded<GemmRecord>([&] {
      if (!gemm_) gemm_ = std::make_unique<GemmRunner>(world_.local_device);
      return gemm_->run(c);
    });
  }

  Expected<BandwidthRecord> bandwidth(BandwidthKind kind, double bytes, const Repeats& r) override {
    return guarded<BandwidthRecord>([&] { return run_bandwidth(world_.local_device, kind, bytes, r); });
  }

  Expected<CollectiveRecord> collective(Collective c, CommScope scope, double bytes,
                                        const Repeats& r) override {
    for (auto& g : world_.groups)
      if (g.scope == scope)
        return guarded<CollectiveRecord>([&] { return run_collective(g, c, bytes, r); });
    return Diagnostic{"", "", std::string("no ") +
                                     (scope == CommScope::intra_node ? "intra-node" : "inter-node") +
                                     " communicator on this machine", ""};
  }

  Expected<OverlapRecord> overlap(Collective c, CommScope scope, double bytes,
                                  const Repeats& r) override {
    for (auto& g : world_.groups)
      if (g.scope == scope) return guarded<OverlapRecord>([&] { return run_overlap(g, c, bytes, r); });
    return Diagnostic{"", "", std::string("no ") +
                                     (scope == CommScope::intra_node ? "intra-node" : "inter-node") +
                                     " communicator on this machine", ""};
  }

 private:
  DeviceInfo open(int count) {
    if (!opened_) {
      world_ = open_comm_world(count);
      opened_ = true;
    }
    DeviceInfo d;
    d.provenance = local_provenance(world_.local_device, world_.gpu_count, world_.nodes);
    for (const auto& g : world_.groups) d.scopes.emplace_back(g.scope, g.nranks);
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, world_.local_device), "cudaGetDeviceProperties");
    d.device_memory_bytes = static_cast<double>(prop.totalGlobalMem);
    d.is_root = world_.is_root;
    return d;
  }

  CommWorld world_;
  bool opened_ = false;
  std::unique_ptr<GemmRunner> gemm_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Bench> make_bench() { return std::make_unique<cuda::CudaBench>(); }

}  // namespace dsplan

// Entry point for calibrate/bench/bench_loader.cc, which dlopens this library; the caller
// owns the returned object (deleted through Bench's virtual destructor).
extern "C" dsplan::Bench* dsplan_make_cuda_bench() { return new dsplan::cuda::CudaBench(); }
