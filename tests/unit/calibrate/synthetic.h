// SYNTHETIC calibration data for tests: a fake Bench whose timings come from known model
// parameters (the "truth") plus seeded multiplicative noise, on a hand-written A100-80GB
// datasheet. Used to check that the fits recover the parameters, and by
// make_synthetic_fixture to write tests/data/calibrate/synthetic_a100_records.json.
// Nothing here is a measurement.
#pragma once

#include <array>
#include <cstdint>

#include "calibrate/bench/bench.h"
#include "calibrate/bench/plan.h"
#include "calibrate/fit/gemm_model.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"

namespace dsplan::testing {

// A100 SXM4 80GB (hardware-and-comm.md §1): 108 SMs at 1410 MHz, 2048 dense fp16/bf16
// FLOP/clk/SM (311.9 TF), 1024 tf32 (155.9 TF), 128 fp32 (19.5 TF), 2039 GB/s, 40 MB L2,
// PCIe gen4 x16 31.5 GB/s.
GpuSpec a100_80gb();
// GPT-3 XL-like shapes (24 layers x 2048 hidden, 16 heads) for the plan's model GEMMs.
ModelSpec test_model();

struct Truth {
  std::array<double, 4> peak_fraction{0.78, 0.80, 0.70, 0.92};  // bf16, fp16, tf32, fp32
  double k_half = 96;
  Seconds overhead = us(5);
  double hbm_fraction = 0.88;
  double pcie_h2d_GBps = 24.5, pcie_d2h_GBps = 25.8;
  // Per collective (all_reduce, reduce_scatter, all_gather, broadcast, send_recv), intra-node.
  std::array<double, 5> latency_us{12, 9, 9, 8, 6};
  std::array<double, 5> busbw_GBps{230, 235, 235, 220, 180};
  double overlap_loss = 0.22;  // compute throughput lost beside a collective
  double noise = 0.03;  // relative standard deviation of every timing
  int gpus = 8;
};

class SyntheticBench final : public Bench {
 public:
  SyntheticBench(Truth truth, std::uint64_t seed) : t_(truth), state_(seed) {}
  Expected<DeviceInfo> probe() override;
  Expected<GemmRecord> gemm(const GemmCase& c) override;
  Expected<BandwidthRecord> bandwidth(BandwidthKind kind, double bytes, const Repeats& r) override;
  Expected<CollectiveRecord> collective(Collective c, CommScope scope, double bytes,
                                        const Repeats& r) override;
  // A 16 ms batch alone (noisy), 1 / (1 - overlap_loss) of it beside collectives queued
  // to 1.5x the batch.
  Expected<OverlapRecord> overlap(Collective c, CommScope scope, double bytes,
                                  const Repeats& r) override;

 private:
  double noisy(double x);  // x * (1 + noise * N(0,1)), deterministic per seed
  Truth t_;
  std::uint64_t state_;
};

// The default (non-quick) plan with the test model, run on a SyntheticBench.
RawRecords synthetic_records(const Truth& truth, std::uint64_t seed);

}  // namespace dsplan::testing
