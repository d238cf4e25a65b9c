// Internal interface between the CUDA benchmark files: one runner per measurement family
// (gemm.cu, bandwidth.cu, collectives.cu) plus device/provenance discovery (device.cu).
// Runners throw BenchFailure; cuda_bench.cu's Bench implementation catches it.
#pragma once

#include <memory>

#include "calibrate/bench/bench.h"
#include "calibrate/bench/cuda/comm/comm.h"
#include "calibrate/bench/cuda/cuda_util.h"

namespace dsplan::cuda {

class GemmRunner {
 public:
  explicit GemmRunner(int device);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;
  GemmRecord run(const GemmCase& c);

 private:
  int device_;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<DeviceBuffer> workspace_;
};

BandwidthRecord run_bandwidth(int device, BandwidthKind kind, double bytes, const Repeats& r);

// Collective `c` over every member of `g`; the slowest rank's median time is recorded.
CollectiveRecord run_collective(CommGroup& g, Collective c, double bytes, const Repeats& r);

// A GEMM batch alone and beside collective `c` (all_gather or reduce_scatter) on every
// member of `g` (overlap.cu).
OverlapRecord run_overlap(CommGroup& g, Collective c, double bytes, const Repeats& r);

// Provenance of the local GPUs and libraries (GPU name, SMs, versions, host, date).
Provenance local_provenance(int device, int gpu_count, int nodes);

}  // namespace dsplan::cuda
