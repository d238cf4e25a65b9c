// Optimizer step and CPU offload. On the GPU the step is memory-bound: bytes moved per
// parameter of the rank's shard over HBM x hbm_fraction. Adam in mixed precision moves
// 42 B/param (fused Adam reads fp32 param, grad, m, v = 16 B and writes param, m, v =
// 12 B; the gradient norm reads 2 B; 16-bit grads are widened to fp32, 2 + 4 B; the
// master weights are narrowed back to 16-bit, 4 + 2 B). ZeRO-Offload runs Adam on the
// CPU over the host memory bandwidth the node's ranks share (Ren et al., ZeRO-Offload §4):
// under DeepSpeed CPU Adam's 28 B/param, the gradients' unscale (8 B) and the 16-bit copy
// (4 + 2 B); it moves the gradients down widened to fp32 (4 B/param at the accumulation
// boundary) and the 16-bit parameters up (2 B/param) over PCIe. An unfused optimizer
// (TrainConfig::fused_optimizer; the default for fsdp) runs a per-tensor loop instead: ~8 kernels per
// parameter tensor moving 92 B/param for AdamW, plus gradient-norm clipping (r+w 8 B) and, with AMP,
// GradScaler unscaling (8 B). DDP's default is torch.optim's foreach AdamW (PyTorch >= 2.0): the same steps
// over all tensors per launch, 84 B/param. Derivations: docs/model.md §4 Step time, "Optimizer and offload".
#pragma once

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/train_config.h"
#include "core/units.h"

namespace dsplan {

struct OptimizerCosts {
  Seconds step;  // on the GPU, or CPU Adam when the optimizer is offloaded
  Seconds host;  // host time to issue the GPU step's kernels (estimator/host_stall.h)
  Seconds d2h;   // gradients to host, per reduction round
  Seconds h2d;   // updated 16-bit parameters back, per step
};

// Bytes the GPU optimizer moves per parameter (documented above and in the docs).
double optimizer_bytes_per_param(const TrainConfig& cfg, double grad_bytes);

// `shard_params`: parameters this rank updates (its stage, / dp under ZeRO >= 1);
// `tensors`: parameter tensors of the stage (the unfused loop launches per tensor).
OptimizerCosts optimizer_costs(double shard_params, int tensors, double grad_bytes,
                               const TrainConfig& cfg, const Cluster& cluster,
                               const Efficiency& eff);

}  // namespace dsplan
