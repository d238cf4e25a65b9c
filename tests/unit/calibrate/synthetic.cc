// SYNTHETIC benchmark results from known parameters; see synthetic.h. The noise generator
// is splitmix64 + Box-Muller written out here, so the data do not depend on the standard
// library's distribution implementations.
#include "synthetic.h"

#include <cmath>

#include "calibrate/bench/run.h"
#include "calibrate/fit/fit.h"
#include "calibrate/profile.h"
#include "fixtures.h"

namespace dsplan::testing {

GpuSpec a100_80gb() {
  GpuSpec g = test::a100();
  g.name = "a100-80gb";
  g.l2 = MB(40);
  g.tdp_W = 400;
  return g;
}

// A GPT-1.3B-shaped decoder (24 x 2048, 16 heads, FFN 4h).
ModelSpec test_model() { return test::gpt("test-1.3b", 24, 2048, 16, 2048, 50257, 1); }

double SyntheticBench::noisy(double x) {
  auto next = [this] {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  };
  const double u1 = next(), u2 = next();
  const double n = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return x * (1 + t_.noise * n);
}

Expected<DeviceInfo> SyntheticBench::probe() {
  DeviceInfo d;
  Provenance& p = d.provenance;
  p.kind = "synthetic: generated from known parameters by tests/unit/calibrate/synthetic.cc "
           "(make_synthetic_fixture), not a measurement";
  p.gpu_name = "synthetic A100-SXM4-80GB";
  p.gpu_count = t_.gpus;
  p.sm_count = 108;
  p.driver = p.cuda_runtime = p.cublas = p.nccl = "synthetic";
  p.host = "synthetic";
  p.date = "2000-01-01T00:00:00Z";
  d.scopes = {{CommScope::intra_node, t_.gpus}};
  d.device_memory_bytes = 80.0 * 1024 * 1024 * 1024;
  return d;
}

Expected<GemmRecord> SyntheticBench::gemm(const GemmCase& c) {
  const int d = static_cast<int>(c.dtype);
  const GemmModelParams p{t_.peak_fraction[d], t_.k_half, t_.overhead};
  const double t = noisy(model_gemm_time({c.m, c.n, c.k}, c.dtype, a100_80gb(), p, t_.hbm_fraction).v);
  GemmRecord r{c.m, c.n, c.k, c.dtype, c.label, t * 1e6, 2.0 * c.m * c.n * c.k / t / 1e12, {}};
  if (c.check) r.max_rel_err = gemm_check_tolerance(c.dtype) / 10;
  return r;
}

Expected<BandwidthRecord> SyntheticBench::bandwidth(BandwidthKind kind, double bytes,
                                                    const Repeats&) {
  double rate = 0;
  switch (kind) {
    case BandwidthKind::pcie_h2d: rate = t_.pcie_h2d_GBps; break;
    case BandwidthKind::pcie_d2h: rate = t_.pcie_d2h_GBps; break;
    default: rate = t_.hbm_fraction * 2039;
  }
  const double t = noisy(bytes / (rate * 1e9));
  return BandwidthRecord{kind, bytes, t * 1e6, bytes / t / 1e9};
}

Expected<CollectiveRecord> SyntheticBench::collective(Collective c, CommScope scope, double bytes,
                                                      const Repeats&) {
  const int i = static_cast<int>(c);
  const double factor = bus_factor(c, t_.gpus);
  const double t = noisy(t_.latency_us[i] * 1e-6 + bytes * factor / (t_.busbw_GBps[i] * 1e9));
  const double algbw = bytes / t / 1e9;
  return CollectiveRecord{c, scope, t_.gpus, bytes, t * 1e6, algbw, algbw * factor, true};
}

Expected<OverlapRecord> SyntheticBench::overlap(Collective c, CommScope scope, double bytes,
                                                const Repeats&) {
  OverlapRecord o;
  o.collective = c;
  o.scope = scope;
  o.ranks = t_.gpus;
  o.bytes = bytes;
  o.gemm_alone_us = noisy(16000);
  o.gemm_beside_us = noisy(16000 / (1 - t_.overlap_loss));
  o.comm_us = 1.5 * o.gemm_alone_us;
  o.loss = 1 - o.gemm_alone_us / o.gemm_beside_us;
  return o;
}

RawRecords synthetic_records(const Truth& truth, std::uint64_t seed) {
  SyntheticBench bench(truth, seed);
  DeviceInfo dev = *bench.probe();
  BenchOptions opt;
  opt.model = test_model();
  opt.tp = {1, 2, 4, 8};
  auto recs = run_plan(bench, dev, make_plan(opt, dev), "synthetic", nullptr);
  return *recs;
}

}  // namespace dsplan::testing
