// Optimizer-step and offload costs; see optimizer.h and docs/model/time.md.
#include "estimator/time/optimizer.h"

#include <algorithm>

namespace dsplan {

namespace {

// Bytes read + written by the update itself on fp32 master weights, per parameter.
double update_bytes(Optimizer o) {
  switch (o) {
    case Optimizer::adam: return 28.0;       // r: p, g, m, v (16); w: p, m, v (12)
    case Optimizer::sgd: return 20.0;        // r: p, g, momentum (12); w: p, momentum (8)
    case Optimizer::adafactor: return 20.0;  // r: p, g (8); w: p (4); update temporaries (8)
    case Optimizer::adam_8bit: return 16.0;  // r: p, g, m8, v8 (10); w: p, m8, v8 (6)
  }
  return 28.0;
}

// CPU Adam (DeepSpeedCPUAdam): r p32 g32 m v (16) + w p m v (12) + w the fp16 copy (2).
constexpr double kCpuAdamBytes = 30.0;
// Fraction of host DRAM bandwidth CPU Adam sustains: ZeRO-Offload Table 4, 1B params in
// 0.22 s on a DGX-2 host (256 GB/s) -> 30 GB / 0.22 s / 256 GB/s = 0.53.
constexpr double kHostMemFraction = 0.5;
// Multi-tensor-apply launches of a fused optimizer step (norm, unscale, update, copy).
constexpr int kOptimizerKernels = 10;

}  // namespace

double optimizer_bytes_per_param(const TrainConfig& cfg, double grad_bytes) {
  double b = update_bytes(cfg.optimizer) + grad_bytes;  // + gradient-norm read
  if (cfg.precision != Precision::fp32) {
    if (grad_bytes < 4.0) b += grad_bytes + 4.0;  // widen grads to fp32
    b += 4.0 + 2.0;                              // master -> 16-bit params
  }
  return b;
}

OptimizerCosts optimizer_costs(double shard_params, double grad_bytes, const TrainConfig& cfg,
                               const Cluster& cluster, const Efficiency& eff) {
  OptimizerCosts o;
  const GpuSpec& gpu = cluster.node.gpu;
  if (cfg.offload == Offload::none) {
    const double bytes = shard_params * optimizer_bytes_per_param(cfg, grad_bytes);
    o.step = Seconds(bytes / (gpu.hbm_bw.v * eff.hbm_fraction)) + eff.kernel_overhead * kOptimizerKernels;
    return o;
  }
  const double local_ranks = std::max(1, cluster.gpus_per_node());
  const double host_bw = cluster.node.host_mem_bw.v * kHostMemFraction / local_ranks;
  o.step = Seconds(host_bw > 0 ? shard_params * kCpuAdamBytes / host_bw : 0.0);
  const double pcie = gpu.pcie_bw.v * eff.pcie_fraction;
  if (pcie > 0) {
    o.d2h = Seconds(shard_params * 2.0 / pcie);
    o.h2d = Seconds(shard_params * 2.0 / pcie);
  }
  return o;
}

}  // namespace dsplan
