// The benchmark interface. A Bench measures one GEMM, one bandwidth figure or one
// collective at a time; the plan (plan.h) decides what to measure and run_plan() (run.h)
// drives a Bench through it. The implementation is chosen by file at build time:
// calibrate/bench/cuda/*.cu when the CUDA toolkit is found, bench_unavailable.cc
// otherwise, both providing make_bench(). Nothing outside those files knows which.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "calibrate/records.h"

namespace dsplan {

struct Repeats {
  int warmup = 5;   // untimed runs first
  int timed = 20;   // timed runs; the median is recorded
};

struct GemmCase {
  std::int64_t m = 0, n = 0, k = 0;
  GemmDtype dtype = GemmDtype::bf16;
  std::string label;
  bool check = false;  // also compare the result against a naive reference GEMM
  Repeats repeats;
};

// What the machine offers, and the provenance fields known before measuring.
struct DeviceInfo {
  Provenance provenance;                            // gpu, versions, host, date
  std::vector<std::pair<CommScope, int>> scopes;   // collective scopes and their rank counts
  double device_memory_bytes = 0;                   // per GPU
  bool is_root = true;  // the process that reports (rank 0 under MPI)
};

class Bench {
 public:
  virtual ~Bench() = default;
  // Finds the GPUs; an error says why none can be used (no device, built without CUDA).
  virtual Expected<DeviceInfo> probe() = 0;
  virtual Expected<GemmRecord> gemm(const GemmCase& c) = 0;
  virtual Expected<BandwidthRecord> bandwidth(BandwidthKind kind, double bytes,
                                              const Repeats& r) = 0;
  // `bytes` is the nccl-tests message size S; record.correct holds the result check.
  virtual Expected<CollectiveRecord> collective(Collective c, CommScope scope, double bytes,
                                                const Repeats& r) = 0;
  // A bf16 GEMM batch alone and beside collective `c` of `bytes` on every local GPU of
  // `scope` (records.h, OverlapRecord). Benches that cannot run it say so.
  virtual Expected<OverlapRecord> overlap(Collective c, CommScope scope, double bytes,
                                          const Repeats& r) {
    (void)c, (void)scope, (void)bytes, (void)r;
    return Diagnostic{"", "", "this benchmark cannot measure compute beside a collective", ""};
  }
};

// The build's Bench: CUDA benchmarks, or one whose probe() explains what is missing.
std::unique_ptr<Bench> make_bench();

// Allowed normalised error max|C - C_ref| / max|C_ref| of a checked GEMM per dtype.
double gemm_check_tolerance(GemmDtype d);

}  // namespace dsplan
